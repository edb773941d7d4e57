import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PoolCache } from '../cache/index.js';
import { manualSimulator, storePool } from '../quote/testing.js';
import { PriceGapError, openPriceGap, type SimPoolView, type Simulator } from '../sim/index.js';
import { ArbitragePlanner, DEFAULT_ARBITRAGE_SETTINGS } from '../planner/arbitrage-planner.js';
import { WSOL_MINT } from '../chain/index.js';
import { orderOpportunity } from '../planner/order-opportunity.js';
import { PlannerPools } from '../trading/planner-pools.js';
import { arbitrageProfit, type TradeOpportunity } from '../messages/trade-opportunity.js';
import { RequoteRefusal, plannerPoolsSource, poolCacheSource, requoteRoute, type RouteStateSource } from './route-requote.js';

let sim: Simulator;

beforeAll(() => {
  sim = manualSimulator(23);
});

afterAll(async () => {
  await sim.close();
});

function plain(): SimPoolView[] {
  return sim.chain.pools().filter((p) => p.transferFees === undefined);
}

/** A gap of `bps` on an AMM pool of a wrapped SOL pair against another pool of its pair, landed. */
function plantGap(bps: number, direction: 'up' | 'down' = 'up'): SimPoolView {
  for (const p of plain().filter((v) => v.dex === 'dexa_amm' && (v.pool.tokenA === WSOL_MINT || v.pool.tokenB === WSOL_MINT))) {
    const other = plain().find((o) => o.address !== p.address && new Set([o.pool.tokenA, o.pool.tokenB, p.pool.tokenA, p.pool.tokenB]).size === 2);
    if (other === undefined) continue;
    try {
      openPriceGap(sim.chain, { pool: p.address, reference: other.address, gapBps: bps, direction });
    } catch (err) {
      if (err instanceof PriceGapError) continue;
      throw err;
    }
    sim.chain.advanceSlot();
    return p;
  }
  throw new Error('no pool to gap');
}

function cacheOfAll(): PoolCache {
  const cache = new PoolCache({ maxPoolCount: 1000 });
  for (const view of plain()) storePool(cache, sim.chain.pool(view.address)!, sim.chain.slot());
  return cache;
}

function arbitrage(cache: PoolCache): TradeOpportunity {
  const planner = new ArbitragePlanner(cache, { ...DEFAULT_ARBITRAGE_SETTINGS, strategyId: 'arb-requote' });
  for (const view of plain()) planner.addPool(view.address, view.pool.tokenA, view.pool.tokenB);
  const ops = planner.evaluateAll();
  expect(ops.length).toBeGreaterThan(0);
  return ops[0]!;
}

describe('requoteRoute', () => {
  it('gives back the planner\'s own figures on the state the opportunity was computed on', () => {
    plantGap(120);
    const cache = cacheOfAll();
    const op = arbitrage(cache);
    const r = requoteRoute(op, poolCacheSource(cache));
    if (!r.ok) throw new Error(r.message);
    expect(r.hops).toEqual(op.route);
    expect(r.output).toBe(op.expectedOutput);
    expect(r.profit).toBe(op.expectedProfit);
    expect(r.costs).toEqual(op.costs);
    expect(r.meetsMinimum).toBe(true);
    expect(r.slot).toBe(op.slot);
  });

  it('charges the flash-loan fee the opportunity counted only when it borrows: a wallet-funded trade pays no lender', () => {
    const cache = cacheOfAll();
    const op = arbitrage(cache);
    expect(op.flashLoan).toBe(true);
    const reserveFee = op.costs.flashLoanFee * 2n; // a reserve with another fee than spec 03's: the opportunity's is charged
    const loaned = requoteRoute({ ...op, costs: { ...op.costs, flashLoanFee: reserveFee, total: op.costs.total + op.costs.flashLoanFee } }, poolCacheSource(cache));
    if (!loaned.ok) throw new Error(loaned.message);
    expect(loaned.profit).toBe(op.expectedOutput - op.inputAmount - op.costs.quotedFees - reserveFee - op.costs.tip);
    expect(loaned.costs.flashLoanFee).toBe(reserveFee);
    const own = requoteRoute({ ...op, flashLoan: false, costs: { ...op.costs, flashLoanFee: 0n, total: op.costs.total - op.costs.flashLoanFee } }, poolCacheSource(cache));
    if (!own.ok) throw new Error(own.message);
    expect(own.profit).toBe(op.expectedOutput - op.inputAmount - op.costs.quotedFees - op.costs.tip);
    expect(own.costs.flashLoanFee).toBe(0n);
  });

  it('quotes the newer state hop by hop after a pool moved, profit by the arbitrage rule', () => {
    const gapped = plantGap(150);
    const cache = cacheOfAll();
    const op = arbitrage(cache);
    // close part of the gap on the pool the route crosses, then read it again
    const onRoute = op.route.find((h) => h.pool === gapped.address) ?? op.route[0]!;
    const pools = new PlannerPools({ load: () => Promise.resolve([]) });
    for (const v of plain()) {
      const view = sim.chain.pool(v.address)!;
      pools.store({ address: view.address, dex: view.dex, pool: view.pool, context: view.ctx, slot: sim.chain.slot(), data: new Uint8Array() });
    }
    const before = requoteRoute(op, plannerPoolsSource(pools));
    if (!before.ok) throw new Error(before.message);
    expect(before.output).toBe(op.expectedOutput);
    const reference = plain().find((o) => o.address !== onRoute.pool && new Set([o.pool.tokenA, o.pool.tokenB, onRoute.inputMint, onRoute.outputMint]).size === 2)!;
    openPriceGap(sim.chain, { pool: onRoute.pool, reference: reference.address, gapBps: 1, direction: 'up' });
    sim.chain.advanceSlot();
    const moved = sim.chain.pool(onRoute.pool)!;
    pools.store({ address: moved.address, dex: moved.dex, pool: moved.pool, context: moved.ctx, slot: sim.chain.slot(), data: new Uint8Array() });
    const after = requoteRoute(op, plannerPoolsSource(pools));
    if (!after.ok) throw new Error(after.message);
    expect(after.output).not.toBe(op.expectedOutput);
    expect(after.profit).toBe(arbitrageProfit(op.inputAmount, after.output, op.costs));
    expect(after.hops.find((h) => h.pool === onRoute.pool)!.slot).toBe(sim.chain.slot());
    expect(after.hops.every((h, i) => i === 0 || h.inputAmount === after.hops[i - 1]!.outputAmount)).toBe(true);
    expect(after.meetsMinimum).toBe(after.output >= op.minimumOutput);
  });

  it('refuses with a reason: unknown pool, mints the pool does not trade, an amount the math refuses', () => {
    const cache = cacheOfAll();
    const op = arbitrage(cache);
    const empty = requoteRoute(op, poolCacheSource(new PoolCache({ maxPoolCount: 10 })));
    expect(empty).toMatchObject({ ok: false, reason: RequoteRefusal.PoolUnknown, step: 0 });
    const foreign = plain().find((p) => p.pool.tokenA !== WSOL_MINT && p.pool.tokenB !== WSOL_MINT)!;
    const wrongPool: RouteStateSource = { stateOf: (a) => ({ address: a, dex: foreign.dex, pool: foreign.pool, context: foreign.ctx, slot: 1n }) };
    expect(requoteRoute(op, wrongPool)).toMatchObject({ ok: false, reason: RequoteRefusal.MintMismatch, step: 0 });
    const huge = { ...op, inputAmount: (1n << 63n), route: op.route.map((h, i) => (i === 0 ? { ...h, inputAmount: 1n << 63n } : h)) };
    const r = requoteRoute(huge, poolCacheSource(cache));
    expect(r.ok).toBe(false);
    if (!r.ok) expect([RequoteRefusal.QuoteRefused, RequoteRefusal.PartialFill, RequoteRefusal.ZeroOutput]).toContain(r.reason);
  });

  it('an order (grid, DCA): profit moves with the output against its quote; minimumOutput is checked', () => {
    const cache = cacheOfAll();
    const view = plain().find((p) => p.dex === 'dexa_amm' && p.pool.tokenA === WSOL_MINT)!;
    const loaded = { address: view.address, dex: view.dex, pool: view.pool, context: view.ctx, slot: sim.chain.slot(), data: new Uint8Array() };
    const op = orderOpportunity({ id: '8f0c6f0e-0000-4000-8000-000000000001', strategy: 'grid', strategyId: 'g', side: 'sell', loaded, inputMint: WSOL_MINT, amount: 1_000_000_000n, slippageBps: 50, ttlMs: 1000, now: 1, stateAgeMs: 0, details: {} });
    if (typeof op === 'string') throw new Error(op);
    const same = requoteRoute(op, poolCacheSource(cache));
    if (!same.ok) throw new Error(same.message);
    expect(same.profit).toBe(0n);
    const bigger = requoteRoute({ ...op, expectedOutput: op.expectedOutput + 7n, minimumOutput: op.expectedOutput + 1n, route: [{ ...op.route[0]!, outputAmount: op.expectedOutput + 7n }] }, poolCacheSource(cache));
    if (!bigger.ok) throw new Error(bigger.message);
    expect(bigger.profit).toBe(-7n);
    expect(bigger.meetsMinimum).toBe(false);
  });
});
