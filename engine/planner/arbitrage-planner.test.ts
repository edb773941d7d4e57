import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PoolCache } from '../cache/index.js';
import { DEX_KINDS, quoteSwap, type Dex } from '../dex/index.js';
import { manualSimulator, storePool } from '../quote/testing.js';
import { PriceGapError, openPriceGap, type SimPoolView, type Simulator } from '../sim/index.js';
import type { ArbitrageFunding } from './arbitrage-funding.js';
import { ArbitragePlanner, DEFAULT_ARBITRAGE_SETTINGS, FLASH_LOAN_COMPUTE_UNITS, type ArbitrageSettings } from './arbitrage-planner.js';
import { SWAP_COMPUTE_UNITS } from '../dex/index.js';
import { decodeTradeOpportunity, encodeTradeOpportunity, type TradeOpportunity } from '../messages/trade-opportunity.js';

let sim: Simulator;

beforeAll(() => {
  sim = manualSimulator(21);
});

afterAll(async () => {
  await sim.close();
});

function plain(): SimPoolView[] {
  return sim.chain.pools().filter((p) => p.transferFees === undefined);
}

/**
 * Opens a gap of `bps` on a pool of `dex` against another pool of its pair (of another kind first),
 * up or down, on the first pair where the market mover can; lands it; returns [gapped, reference].
 */
function plantGap(dex: Dex, bps: number): [SimPoolView, SimPoolView] {
  const pools = plain();
  for (const p of pools) {
    if (p.dex !== dex) continue;
    const mints = new Set([p.pool.tokenA, p.pool.tokenB]);
    const others = pools.filter((o) => o.address !== p.address && mints.has(o.pool.tokenA) && mints.has(o.pool.tokenB));
    others.sort((a, b) => Number(a.dex === dex) - Number(b.dex === dex));
    for (const o of others) {
      for (const direction of ['up', 'down'] as const) {
        try {
          openPriceGap(sim.chain, { pool: p.address, reference: o.address, gapBps: bps, direction });
        } catch (err) {
          if (err instanceof PriceGapError) continue;
          throw err;
        }
        sim.chain.advanceSlot();
        return [p, o];
      }
    }
  }
  throw new Error(`no ${dex} pool where a gap of ${bps} bps can be opened`);
}

function cacheOfAll(): PoolCache {
  const cache = new PoolCache({ maxPoolCount: 1000 });
  const slot = sim.chain.slot();
  for (const view of plain()) storePool(cache, sim.chain.pool(view.address)!, slot);
  return cache;
}

function planner(cache: PoolCache, overrides: Partial<ArbitrageSettings>, funding?: ArbitrageFunding): ArbitragePlanner {
  const p = new ArbitragePlanner(cache, { ...DEFAULT_ARBITRAGE_SETTINGS, strategyId: 'arb-test', ...overrides }, Date.now, funding);
  for (const view of plain()) p.addPool(view.address, view.pool.tokenA, view.pool.tokenB);
  return p;
}

/**
 * Spec 03's profit for `route` at `input`, computed here from the simulator's states leg by leg; the
 * flash-loan fee is klend's at 5 bps (input × 0.0005, rounded, at least 1), none without a loan.
 */
function profitByHand(op: TradeOpportunity, input: bigint, flashLoan = true, computeUnitPrice = 0n): bigint {
  let amount = input;
  let units = flashLoan ? BigInt(FLASH_LOAN_COMPUTE_UNITS) : 0n;
  for (const hop of op.route) {
    const view = sim.chain.pool(hop.pool)!;
    const q = quoteSwap(view.pool, { aToB: hop.inputMint === view.pool.tokenA, mode: 'ExactIn', amount }, view.ctx);
    if (!q.ok) return -(1n << 100n);
    amount = q.amountOut;
    units += BigInt(SWAP_COMPUTE_UNITS[view.dex]);
  }
  const priorityFee = (computeUnitPrice * units + 999_999n) / 1_000_000n;
  const half = input * 5n * 2n + 10_000n; // round(input × 5 / 10,000) = ⌊(2 × 5 × input + 10,000) / 20,000⌋
  const flashLoanFee = flashLoan ? (half / 20_000n < 1n ? 1n : half / 20_000n) : 0n;
  return amount - input - 5_000n - priorityFee - flashLoanFee - 5_000n;
}

describe('the arbitrage planner on a planted gap', () => {
  it.each(DEX_KINDS)('finds the gap opened on a %s pool, with the profit computed by hand from the same states', (dex) => {
    const [pool] = plantGap(dex, 80);
    const cache = cacheOfAll();
    const base = pool.pool.tokenA;
    const ops = planner(cache, { baseMints: [base], maxLegs: 2 }).evaluatePool(pool.address, { id: 'ev', receivedAt: Date.now() });
    expect(ops.length).toBeGreaterThan(0);
    const best = ops[0]!;
    expect(best.route.map((h) => h.pool)).toContain(pool.address);
    expect(best.route[0]!.inputMint).toBe(base);
    // Profit exactly as computed by hand on the same states, and the format's own rules hold.
    expect(best.expectedProfit).toBe(profitByHand(best, best.inputAmount));
    expect(best.expectedProfit).toBeGreaterThan(DEFAULT_ARBITRAGE_SETTINGS.minProfitThreshold);
    expect(decodeTradeOpportunity(encodeTradeOpportunity(best))).toEqual(best);
    // Sized to maximise profit: smaller and larger inputs (up to the flash loan's capacity) earn less.
    for (const f of [50n, 90n, 98n, 102n, 110n, 200n]) {
      const x = (best.inputAmount * f) / 100n;
      if (x <= DEFAULT_ARBITRAGE_SETTINGS.maxInput) expect(profitByHand(best, x), `input × ${f}%`).toBeLessThanOrEqual(best.expectedProfit);
    }
  });

  it('sizes to the capital a wallet holds when no flash loan funds the mint, without the fee or its compute units', () => {
    const [pool] = plantGap('dexc_whirlpool', 80);
    const cache = cacheOfAll();
    const base = pool.pool.tokenA;
    const settings = { baseMints: [base], maxLegs: 2 as const, computeUnitPrice: 0n, computeUnitPriceMicroLamports: 1_000_000n };
    const loaned = planner(cache, settings).evaluatePool(pool.address)[0]!;
    expect(loaned.flashLoan).toBe(true);
    expect(loaned.expectedProfit).toBe(profitByHand(loaned, loaned.inputAmount, true, 1_000_000n));
    // a wallet holding a third of the best flash-loan size: the input stops there, no fee, fewer units
    const held = loaned.inputAmount / 3n;
    const walletFunded = planner(cache, settings, { of: (mint) => (mint === base ? { flashLoan: false, maxInput: held, fee: () => 0n } : undefined) }).evaluatePool(pool.address);
    const best = walletFunded[0]!;
    expect(best.flashLoan).toBe(false);
    expect(best.inputAmount).toBeLessThanOrEqual(held);
    expect(best.costs.flashLoanFee).toBe(0n);
    expect(best.expectedProfit).toBe(profitByHand(best, best.inputAmount, false, 1_000_000n));
    expect(best.costs.quotedFees).toBeLessThan(loaned.costs.quotedFees); // 80,000 compute units fewer at 1 lamport each
    expect(decodeTradeOpportunity(encodeTradeOpportunity(best))).toEqual(best);
    // nothing funds the mint (or less than the screen size): nothing is searched
    const unfunded = planner(cache, settings, { of: () => undefined });
    expect(unfunded.evaluatePool(pool.address)).toEqual([]);
    expect(unfunded.stats.unfunded).toBeGreaterThan(0);
    expect(unfunded.stats.cyclesSearched).toBe(0);
    expect(planner(cache, settings, { of: () => ({ flashLoan: false, maxInput: DEFAULT_ARBITRAGE_SETTINGS.screenAmount - 1n, fee: () => 0n }) }).evaluatePool(pool.address)).toEqual([]);
  });

  it('publishes nothing at or below minProfitThreshold', () => {
    const [pool] = plantGap(DEX_KINDS[0]!, 80);
    const cache = cacheOfAll();
    const found = planner(cache, { baseMints: [pool.pool.tokenA] }).evaluatePool(pool.address);
    expect(found.length).toBeGreaterThan(0);
    const top = found[0]!.expectedProfit;
    expect(planner(cache, { baseMints: [pool.pool.tokenA], minProfitThreshold: top }).evaluatePool(pool.address).filter((o) => o.expectedProfit >= top)).toEqual([]);
    expect(planner(cache, { baseMints: [pool.pool.tokenA], minProfitThreshold: top - 1n }).evaluatePool(pool.address)[0]!.expectedProfit).toBe(top);
  });

  it('finds nothing on a market without a gap wider than the fees, and searches three-leg cycles', () => {
    const quiet = manualSimulator(22);
    try {
      const cache = new PoolCache({ maxPoolCount: 1000 });
      const p = new ArbitragePlanner(cache, { ...DEFAULT_ARBITRAGE_SETTINGS, strategyId: 'quiet' });
      for (const view of quiet.chain.pools().filter((v) => v.transferFees === undefined)) {
        storePool(cache, view, quiet.chain.slot());
        p.addPool(view.address, view.pool.tokenA, view.pool.tokenB);
      }
      expect(p.cycleCount).toBeGreaterThan(0);
      const all = p.evaluateAll();
      for (const op of all) expect(op.expectedProfit).toBeGreaterThan(DEFAULT_ARBITRAGE_SETTINGS.minProfitThreshold);
      expect(p.stats.cyclesSearched).toBe(p.cycleCount);
    } finally {
      void quiet.close();
    }
  });

  it('refuses a tip outside 5,000 to 6,000', () => {
    expect(() => new ArbitragePlanner(new PoolCache(), { ...DEFAULT_ARBITRAGE_SETTINGS, strategyId: 'x', tip: 4_999n })).toThrow(/tip/);
    expect(() => new ArbitragePlanner(new PoolCache(), { ...DEFAULT_ARBITRAGE_SETTINGS, strategyId: 'x', tip: 6_001n })).toThrow(/tip/);
  });

  it('leaves out stale pools', () => {
    const [pool] = plantGap(DEX_KINDS[2]!, 80);
    let t = Date.now();
    const cache = new PoolCache({ maxPoolCount: 1000, now: () => t });
    for (const view of plain()) storePool(cache, sim.chain.pool(view.address)!, sim.chain.slot());
    const p = new ArbitragePlanner(cache, { ...DEFAULT_ARBITRAGE_SETTINGS, strategyId: 's', baseMints: [pool.pool.tokenA], maxStateAgeMs: 1_000 }, () => t);
    for (const view of plain()) p.addPool(view.address, view.pool.tokenA, view.pool.tokenB);
    expect(p.evaluatePool(pool.address).length).toBeGreaterThan(0);
    t += 1_001;
    expect(p.evaluatePool(pool.address)).toEqual([]);
  });
});
