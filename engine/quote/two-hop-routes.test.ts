import { afterAll, describe, expect, it } from 'vitest';

import { PoolCache } from '../cache/index.js';
import { Dex, SwapMode, directionFor, quoteSwap, type SwapQuote } from '../dex/index.js';
import { ErrorCode } from '../errors.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import type { SimPoolView } from '../sim/market-view.js';
import { quoteFromCache } from './cache-quoter.js';
import { FILTERED_OUT_MESSAGE } from './cache-route-search.js';
import { QuoteEngine, type QuoteResult } from './quote-engine.js';
import type { QuoteRequest, RouteFilter } from './quote-request.js';
import { FakeClock, manualSimulator, storePool, syntheticAmmPool } from './testing.js';

/**
 * Two-hop routes on the engine (no transport): a cache filled from a manual simulator whose market
 * has ANCHOR/SOL, ANCHOR/USDC, SOL/CORAL and SOL/USDC pools but no ANCHOR/CORAL pool. Expected
 * answers are brute force: every pool of the first leg against every pool of the second.
 */

const sim = manualSimulator(7);
const chain = sim.chain;
afterAll(async () => {
  await sim.close();
});

function mintOf(symbol: string): string {
  const token = chain.tokens().find((t) => t.symbol === symbol);
  if (token === undefined) throw new Error(`no ${symbol} in the simulator`);
  return token.mint;
}
const ANCHOR = mintOf('ANCHOR');
const CORAL = mintOf('CORAL');

const DIRECT_ONLY: RouteFilter = { dexes: undefined, excludeDexes: undefined, onlyDirectRoutes: true };

function request(inputMint: string, outputMint: string, amount: bigint, over: Partial<QuoteRequest> = {}): QuoteRequest {
  return { inputMint, outputMint, mode: SwapMode.ExactIn, amount, amountText: amount.toString(), maxStateAgeMs: undefined, slippageBps: 50, ...over };
}

function sync(result: QuoteResult | Promise<QuoteResult>): QuoteResult {
  if (result instanceof Promise) throw new Error('expected an answer at once');
  return result;
}

function fill(extra: SimPoolView[] = []): { cache: PoolCache; clock: FakeClock; engine: QuoteEngine } {
  const clock = new FakeClock();
  const cache = new PoolCache({ now: clock.now, stalenessThresholdMs: 30_000 });
  let slot = 100n;
  for (const view of [...chain.pools(), ...extra]) storePool(cache, view, slot++);
  return { cache, clock, engine: new QuoteEngine({ cache, hybridMode: false, clock: () => 0 }) };
}

function swapOn(view: SimPoolView, input: string, output: string, amount: bigint, mode: SwapMode): SwapQuote | undefined {
  const r = quoteSwap(view.pool, { aToB: directionFor(view.pool, input, output), mode, amount }, view.ctx, view.transferFees);
  return r.ok ? r : undefined;
}

/** Every two-hop route through SOL or USDC, brute force; the best by the request's measure. */
function bruteForceTwoHop(input: string, output: string, amount: bigint, mode: SwapMode, pools: readonly SimPoolView[] = chain.pools()) {
  const of = (a: string, b: string) => pools.filter((p) => (p.pool.tokenA === a && p.pool.tokenB === b) || (p.pool.tokenA === b && p.pool.tokenB === a));
  let best: { pools: [string, string]; inAmount: bigint; outAmount: bigint } | undefined;
  for (const via of [WSOL_MINT, USDC_MINT]) {
    for (const p1 of of(input, via)) {
      for (const p2 of of(via, output)) {
        let inAmount: bigint;
        let outAmount: bigint;
        if (mode === SwapMode.ExactIn) {
          const a = swapOn(p1, input, via, amount, mode);
          const b = a && swapOn(p2, via, output, a.amountOut, mode);
          if (!a || !b) continue;
          inAmount = a.amountIn;
          outAmount = b.amountOut;
        } else {
          const b = swapOn(p2, via, output, amount, mode);
          const a = b && swapOn(p1, input, via, b.amountIn, mode);
          if (!a || !b) continue;
          inAmount = a.amountIn;
          outAmount = b.amountOut;
        }
        const better = best === undefined || (mode === SwapMode.ExactIn ? outAmount > best.outAmount : inAmount < best.inAmount);
        if (better) best = { pools: [p1.address, p2.address], inAmount, outAmount };
      }
    }
  }
  return best;
}

describe('two-hop routes', () => {
  it('routes a pair without a pool of its own through an intermediate token, exact in, each hop priced exactly', () => {
    const { engine } = fill();
    const amount = 25_000_000_000n;
    const answer = sync(engine.quote(request(ANCHOR, CORAL, amount)));
    if (!answer.ok) throw new Error(answer.message);
    const expected = bruteForceTwoHop(ANCHOR, CORAL, amount, SwapMode.ExactIn)!;
    const q = answer.quote;
    expect(q.hops.map((h) => h.pool)).toEqual(expected.pools);
    expect(q.outputAmount).toBe(expected.outAmount);
    expect(q.inputAmount).toBe(amount);
    const [h1, h2] = q.hops;
    expect(h1!.inputMint).toBe(ANCHOR);
    expect(h1!.outputMint).toBe(h2!.inputMint);
    expect(h2!.outputMint).toBe(CORAL);
    expect(h2!.inAmount).toBe(h1!.outAmount);
    // Each hop is the pool's own exact quote, with its fee and the mint it is counted in.
    for (const hop of q.hops) {
      const view = chain.pool(hop.pool)!;
      const swap = swapOn(view, hop.inputMint, hop.outputMint, hop.inAmount, SwapMode.ExactIn)!;
      expect(hop.outAmount).toBe(swap.amountOut);
      expect(hop.fee).toBe(swap.fee);
      expect(hop.feeMint).toBe(swap.feeInOutput === true ? hop.outputMint : hop.inputMint);
    }
    // Price impact over the whole route: 1 - Π(1 - impact of each hop).
    const impacts = q.hops.map((hop) => swapOn(chain.pool(hop.pool)!, hop.inputMint, hop.outputMint, hop.inAmount, SwapMode.ExactIn)!.priceImpact);
    expect(q.priceImpact).toBeCloseTo(1 - (1 - impacts[0]!) * (1 - impacts[1]!), 12);
    expect(q.priceImpact).toBeGreaterThan(Math.max(...impacts));
    expect(q.slot).toBe(h1!.slot < h2!.slot ? h1!.slot : h2!.slot);
  });

  it('computes exact out two-hop routes backwards: the least input for the output asked', () => {
    const { engine } = fill();
    const amount = 3_000_000n;
    const answer = sync(engine.quote(request(ANCHOR, CORAL, amount, { mode: SwapMode.ExactOut })));
    if (!answer.ok) throw new Error(answer.message);
    const expected = bruteForceTwoHop(ANCHOR, CORAL, amount, SwapMode.ExactOut)!;
    const q = answer.quote;
    expect(q.hops.map((h) => h.pool)).toEqual(expected.pools);
    expect(q.inputAmount).toBe(expected.inAmount);
    expect(q.outputAmount).toBe(amount);
    expect(q.hops[1]!.outAmount).toBe(amount);
    // The first hop buys exactly what the second one sells.
    expect(q.hops[0]!.outAmount).toBe(q.hops[1]!.inAmount);
    expect(answer.slippage.maxInputAmount).toBe((q.inputAmount * 10_050n + 9_999n) / 10_000n);
  });

  it('answers the better of a shallow direct pool and a deep two-hop route; onlyDirectRoutes keeps the direct one', () => {
    const amount = 25_000_000_000n;
    const twoHop = bruteForceTwoHop(ANCHOR, CORAL, amount, SwapMode.ExactIn)!;
    const base = chain.pools().find((p) => p.dex === Dex.Amm)!;
    // Same price as the two-hop route at this amount, but reserves of the amount's size only.
    const shallow = syntheticAmmPool(base, { label: 'shallow ANCHOR/CORAL', tokenA: ANCHOR, tokenB: CORAL, reserveA: amount, reserveB: twoHop.outAmount });
    const { engine } = fill([shallow]);
    const best = sync(engine.quote(request(ANCHOR, CORAL, amount)));
    if (!best.ok) throw new Error(best.message);
    const bestRoute = best.quote; // the engine's answer object is rewritten by the next quote
    expect(bestRoute.hops).toHaveLength(2);
    expect(bestRoute.outputAmount).toBe(twoHop.outAmount);

    const direct = sync(engine.quote(request(ANCHOR, CORAL, amount, { routeFilter: DIRECT_ONLY })));
    if (!direct.ok) throw new Error(direct.message);
    expect(direct.quote.hops.map((h) => h.pool)).toEqual([shallow.address]);
    expect(direct.quote.outputAmount).toBe(swapOn(shallow, ANCHOR, CORAL, amount, SwapMode.ExactIn)!.amountOut);
    expect(direct.quote.outputAmount < bestRoute.outputAmount).toBe(true);

    // A deep direct pool at a better price wins over the two-hop route.
    const deep = syntheticAmmPool(base, { label: 'deep ANCHOR/CORAL', tokenA: ANCHOR, tokenB: CORAL, reserveA: amount * 1000n, reserveB: twoHop.outAmount * 1010n });
    const { engine: deepEngine } = fill([shallow, deep]);
    const deepBest = sync(deepEngine.quote(request(ANCHOR, CORAL, amount)));
    if (!deepBest.ok) throw new Error(deepBest.message);
    expect(deepBest.quote.hops.map((h) => h.pool)).toEqual([deep.address]);
  });

  it('refuses a pair without a direct pool when onlyDirectRoutes is set, and a DEX filter that leaves no pool', () => {
    const { engine } = fill();
    const direct = sync(engine.quote(request(ANCHOR, CORAL, 1_000_000n, { routeFilter: DIRECT_ONLY })));
    expect(direct).toMatchObject({ ok: false, code: ErrorCode.NoPoolsInCache, message: 'no pools found in cache' });
    // ANCHOR trades on dexa_amm and dexc_whirlpool only; CORAL on dexa_clmm only.
    const none = sync(engine.quote(request(ANCHOR, CORAL, 1_000_000n, { routeFilter: { dexes: new Set([Dex.Dlmm]), excludeDexes: undefined, onlyDirectRoutes: false } })));
    expect(none).toMatchObject({ ok: false, code: ErrorCode.NoPoolsInCache, message: FILTERED_OUT_MESSAGE });
    // Nothing a filtered-out request asked counted against the breaker.
    expect(engine.breaker.state).toBe('closed');
  });

  it('filters pools by DEX (dexes / excludeDexes) on every leg, and keys the memo on the filter', () => {
    const { engine, cache } = fill();
    const amount = 1_000_000_000n;
    const all = sync(engine.quote(request(WSOL_MINT, USDC_MINT, amount)));
    if (!all.ok) throw new Error(all.message);
    const allRoute = all.quote;
    const winner = allRoute.hops[0]!.dex;
    const excluded = sync(engine.quote(request(WSOL_MINT, USDC_MINT, amount, { routeFilter: { dexes: undefined, excludeDexes: new Set([winner]), onlyDirectRoutes: false } })));
    if (!excluded.ok) throw new Error(excluded.message);
    expect(excluded.quote.hops.every((h) => h.dex !== winner)).toBe(true);
    expect(excluded.quote.outputAmount <= allRoute.outputAmount).toBe(true);
    expect(quoteFromCache(cache, WSOL_MINT, USDC_MINT, amount, undefined, { routeFilter: { dexes: undefined, excludeDexes: new Set([winner]), onlyDirectRoutes: false } }).route).toEqual(excluded.quote.hops);
    const only = sync(engine.quote(request(WSOL_MINT, USDC_MINT, amount, { routeFilter: { dexes: new Set([Dex.Whirlpool]), excludeDexes: undefined, onlyDirectRoutes: false } })));
    if (!only.ok) throw new Error(only.message);
    expect(only.quote.hops.every((h) => h.dex === Dex.Whirlpool)).toBe(true);
    // The unfiltered request still gets its own (memoized) answer.
    const hits = engine.memo.hits;
    const again = sync(engine.quote(request(WSOL_MINT, USDC_MINT, amount)));
    if (!again.ok) throw new Error(again.message);
    expect(again.quote).toEqual(allRoute);
    expect(engine.memo.hits).toBe(hits + 1);
  });

  it('moves stateVersion and voids the memo when a pool of either leg changes, not for an unrelated pair', () => {
    const { engine, cache } = fill();
    const req = request(ANCHOR, CORAL, 25_000_000_000n);
    const first = sync(engine.quote(req));
    if (!first.ok) throw new Error(first.message);
    const route = first.quote;
    const v0 = engine.stateVersion(req);
    // A pool the route does not use, of a pair it does not read: nothing moves.
    const unrelated = chain.pools().find((p) => p.transferFees !== undefined && p.pool.tokenA !== WSOL_MINT && p.pool.tokenB !== WSOL_MINT)!;
    storePool(cache, unrelated, 10_000n);
    expect(engine.stateVersion(req)).toBe(v0);
    const misses = engine.memo.misses;
    const requoted = engine.memo.requoted;
    expect((sync(engine.quote(req)) as { quote: unknown }).quote).toEqual(route);
    expect(engine.memo.misses).toBe(misses);
    // The second hop's pool changes: the version moves and the route's hops are quoted again.
    const second = chain.pool(route.hops[1]!.pool)!;
    storePool(cache, second, 10_001n);
    const v1 = engine.stateVersion(req);
    expect(v1).not.toBe(v0);
    const after = sync(engine.quote(req));
    if (!after.ok) throw new Error(after.message);
    expect(engine.memo.misses + engine.memo.requoted).toBe(misses + requoted + 1);
    expect(after.quote.hops[1]!.slot).toBe(10_001n);
    // The first leg's pair: the version moves too.
    storePool(cache, chain.pool(route.hops[0]!.pool)!, 10_002n);
    expect(engine.stateVersion(req)).not.toBe(v1);
    // With two-hop routes off, only the direct pair counts.
    const direct = request(ANCHOR, CORAL, 25_000_000_000n, { routeFilter: DIRECT_ONLY });
    const d0 = engine.stateVersion(direct);
    storePool(cache, second, 10_003n);
    expect(engine.stateVersion(direct)).toBe(d0);
  });
});
