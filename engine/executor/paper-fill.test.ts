import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PoolCache } from '../cache/index.js';
import { SwapMode, planSwapRoute } from '../dex/index.js';
import { manualSimulator, storePool } from '../quote/testing.js';
import { PriceGapError, openPriceGap, type SimPoolView, type Simulator } from '../sim/index.js';
import { chainSwapPool } from '../sim/testing/real-swaps.js';
import { ArbitragePlanner, DEFAULT_ARBITRAGE_SETTINGS } from '../planner/arbitrage-planner.js';
import { WSOL_MINT } from '../chain/index.js';
import { orderOpportunity } from '../planner/order-opportunity.js';
import type { TradeOpportunity } from '../messages/trade-opportunity.js';
import { BUNDLE_SIGNATURES, paperFill, routeComputeUnits } from './paper-fill.js';
import { poolCacheSource } from './route-requote.js';
import { FLASH_LOAN_COMPUTE_UNITS } from './flash-loans.js';
import { ExecutionPath } from '../messages/index.js';

let sim: Simulator;
let cache: PoolCache;
let arb: TradeOpportunity;

function plain(): SimPoolView[] {
  return sim.chain.pools().filter((p) => p.transferFees === undefined);
}

beforeAll(() => {
  sim = manualSimulator(29);
  sim.chain.advanceSlot(2);
  planted: for (const p of plain().filter((v) => v.dex === 'dexa_amm' && (v.pool.tokenA === WSOL_MINT || v.pool.tokenB === WSOL_MINT))) {
    for (const o of plain().filter((o) => o.address !== p.address && new Set([o.pool.tokenA, o.pool.tokenB, p.pool.tokenA, p.pool.tokenB]).size === 2)) {
      try {
        openPriceGap(sim.chain, { pool: p.address, reference: o.address, gapBps: 120 });
      } catch (err) {
        if (err instanceof PriceGapError) continue;
        throw err;
      }
      break planted;
    }
  }
  sim.chain.advanceSlot();
  cache = new PoolCache({ maxPoolCount: 1000 });
  for (const view of plain()) storePool(cache, sim.chain.pool(view.address)!, sim.chain.slot());
  const planner = new ArbitragePlanner(cache, { ...DEFAULT_ARBITRAGE_SETTINGS, strategyId: 'arb-paper' });
  for (const view of plain()) planner.addPool(view.address, view.pool.tokenA, view.pool.tokenB);
  arb = planner.evaluateAll()[0]!;
});

afterAll(async () => {
  await sim.close();
});

describe('paperFill', () => {
  it('an arbitrage: bundle path, the opportunity\'s tip, two signatures and the priority fee; profit = wSOL change + lamport change', () => {
    expect(arb).toBeDefined();
    expect(arb.flashLoan).toBe(true); // the planner's default funding: a flash loan at spec 03's fee
    const fill = paperFill(arb, poolCacheSource(cache), { computeUnitLimit: 400_000, computeUnitPriceMicroLamports: 1_000n });
    if (!fill.ok) throw new Error(fill.message);
    expect(fill.path).toBe(ExecutionPath.Bundle);
    expect(fill.tip).toBe(arb.costs.tip);
    expect(fill.fees).toBe(5_000n * BigInt(BUNDLE_SIGNATURES) + 400n); // 400,000 CU × 1,000 µlamports = 400 lamports
    expect(fill.output).toBe(arb.expectedOutput);
    expect(fill.expectedProfit).toBe(arb.expectedProfit);
    // the loan is repaid with its fee: the fee leaves the wallet's wSOL
    expect(arb.costs.flashLoanFee).toBeGreaterThan(0n);
    expect(fill.balanceChanges.tokens.get(WSOL_MINT)).toBe(arb.expectedOutput - arb.inputAmount - arb.costs.flashLoanFee);
    expect(fill.balanceChanges.lamports).toBe(-(fill.fees + fill.tip));
    expect(fill.actualProfit).toBe(arb.expectedOutput - arb.inputAmount - arb.costs.flashLoanFee - fill.fees - fill.tip);
    expect(fill.hops).toEqual(arb.route);
    expect(fill.meetsMinimum).toBe(true);
  });

  it('a wallet-funded arbitrage pays no lender: no fee in its profit nor in its balance changes', () => {
    const own: TradeOpportunity = { ...arb, flashLoan: false, costs: { ...arb.costs, flashLoanFee: 0n, total: arb.costs.total - arb.costs.flashLoanFee }, expectedProfit: arb.expectedProfit + arb.costs.flashLoanFee };
    const fill = paperFill(own, poolCacheSource(cache), { computeUnitLimit: 400_000 });
    if (!fill.ok) throw new Error(fill.message);
    expect(fill.expectedProfit).toBe(arb.expectedProfit + arb.costs.flashLoanFee);
    expect(fill.balanceChanges.tokens.get(WSOL_MINT)).toBe(arb.expectedOutput - arb.inputAmount);
    expect(fill.actualProfit).toBe(arb.expectedOutput - arb.inputAmount - fill.fees - fill.tip);
  });

  it('the compute budget of a flash loan: the input\'s account created, borrow and repay', () => {
    const plan = planSwapRoute({ owner: sim.chain.genesis.actors.traders[0]!.keypair.address, inputMint: arb.inputMint, hops: arb.route.map((h) => chainSwapPool(sim.chain, h.pool)), mode: SwapMode.ExactIn, amount: arb.inputAmount, slippageBps: 0, createInputTokenAccount: true });
    expect(routeComputeUnits(arb.route, arb.inputMint, true)).toBe(plan.computeUnits + FLASH_LOAN_COMPUTE_UNITS);
  });

  it('the default compute unit limit is the swap transaction\'s own budget (planSwapRoute)', () => {
    const plan = planSwapRoute({ owner: sim.chain.genesis.actors.traders[0]!.keypair.address, inputMint: arb.inputMint, hops: arb.route.map((h) => chainSwapPool(sim.chain, h.pool)), mode: SwapMode.ExactIn, amount: arb.inputAmount, slippageBps: 0 });
    expect(routeComputeUnits(arb.route, arb.inputMint)).toBe(plan.computeUnits);
    expect(plan.amountOut).toBe(arb.expectedOutput);
    const fill = paperFill(arb, poolCacheSource(cache), {});
    if (!fill.ok) throw new Error(fill.message);
    expect(fill.fees).toBe(10_000n);
  });

  it('an order takes the direct path: one signature, no tip; the profit mint\'s change is the output', () => {
    const view = plain().find((p) => p.dex === 'dexa_amm' && p.pool.tokenA === WSOL_MINT)!;
    const loaded = { address: view.address, dex: view.dex, pool: sim.chain.pool(view.address)!.pool, context: undefined, slot: sim.chain.slot(), data: new Uint8Array() };
    const op = orderOpportunity({ id: '8f0c6f0e-0000-4000-8000-000000000002', strategy: 'dca', strategyId: 'd', side: 'sell', loaded, inputMint: WSOL_MINT, amount: 500_000_000n, slippageBps: 50, ttlMs: 1000, now: 1, stateAgeMs: 0, details: {} });
    if (typeof op === 'string') throw new Error(op);
    const fill = paperFill(op, poolCacheSource(cache), { tip: 6_000n });
    if (!fill.ok) throw new Error(fill.message);
    expect(fill.path).toBe(ExecutionPath.Direct);
    expect(fill.tip).toBe(0n);
    expect(fill.fees).toBe(5_000n);
    expect(fill.actualProfit).toBe(op.expectedOutput);
    expect(fill.balanceChanges.tokens.get(WSOL_MINT)).toBe(-op.inputAmount);
  });

  it('passes the re-quote\'s refusal through', () => {
    const fill = paperFill(arb, poolCacheSource(new PoolCache({ maxPoolCount: 4 })), {});
    expect(fill).toMatchObject({ ok: false, reason: 'pool_unknown' });
  });
});
