import { afterAll, describe, expect, it } from 'vitest';

import { PoolCache, type PoolStateUpdate } from '../cache/index.js';
import { Dex, SwapMode, boundedInput, boundedOutput, quoteSwap, rateBound, type AmmPool } from '../dex/index.js';
import { Prng } from '../dex/testing/prng.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { CacheRouteSearch } from './cache-route-search.js';
import { QuoteMemo } from './quote-memo.js';
import { routeFilterKey } from './route-filter.js';
import { DEFAULT_INTERMEDIATE_MINTS } from './route-search.js';
import { exhaustiveRoute, FakeClock, manualSimulator, storePool } from './testing.js';

/**
 * The rate bounds (engine/dex rate-bound.ts) and what the route search does with them: they must
 * hold for every protocol's exact math, and a search that prunes with them (and a memo that keeps
 * an answer on their word) must give exactly the answer of a search that quotes every pool.
 */

const sim = manualSimulator(11, { tokens: 6, poolsPerKind: 8 });
afterAll(async () => {
  await sim.close();
});

function pruned(search: CacheRouteSearch, cache: PoolCache, input: string, output: string, amount: bigint, mode: SwapMode): string {
  const found = search.search(input, output, amount, mode, Infinity, routeFilterKey(undefined));
  return found.ok ? found.route.hops.map((h) => `${h.pool}:${h.inAmount}>${h.outAmount}`).join(' ') : 'none';
}

describe('rate bounds', () => {
  it('bound every exact-in output and every exact-out input of each protocol', () => {
    const rng = new Prng(5);
    const kinds = new Set<string>();
    let checked = 0;
    for (const view of sim.chain.pools()) {
      for (const aToB of [true, false]) {
        const bound = rateBound(view.pool, aToB);
        expect(bound).toBeGreaterThan(0);
        for (let i = 0; i < 40; i++) {
          const amount = rng.logBig(1, 56);
          const exactIn = quoteSwap(view.pool, { aToB, mode: SwapMode.ExactIn, amount }, view.ctx, view.transferFees);
          if (exactIn.ok) {
            expect(exactIn.amountOut, `${view.dex} ${view.address} exact in ${amount}`).toBeLessThanOrEqual(boundedOutput(Number(amount), bound));
            checked++;
            kinds.add(view.dex);
          }
          const exactOut = quoteSwap(view.pool, { aToB, mode: SwapMode.ExactOut, amount }, view.ctx, view.transferFees);
          if (exactOut.ok) {
            expect(Number(exactOut.amountIn), `${view.dex} ${view.address} exact out ${amount}`).toBeGreaterThanOrEqual(boundedInput(Number(amount), bound));
            checked++;
          }
        }
      }
    }
    expect(kinds).toEqual(new Set([Dex.Amm, Dex.Whirlpool, Dex.Clmm, Dex.Dlmm]));
    expect(checked).toBeGreaterThan(1_000);
  });

  it('are tight: a swap pays the bound less its price impact, within 1 % (dynamic fees)', () => {
    for (const view of sim.chain.pools()) {
      // Token-2022 transfer fees are left out of the bound (they only take more): not tight there.
      if (view.transferFees !== undefined) continue;
      const bound = rateBound(view.pool, true);
      // At least 10⁶ atoms in and out: large enough for rounding not to matter, small for the pool.
      const amount = BigInt(Math.ceil(Math.max(1e6, 1e6 / bound)));
      const r = quoteSwap(view.pool, { aToB: true, mode: SwapMode.ExactIn, amount }, view.ctx, view.transferFees);
      if (!r.ok) continue;
      expect(Number(r.amountOut) / (Number(amount) * bound), `${view.dex} ${view.address}`).toBeGreaterThan((1 - r.priceImpact) * 0.99);
    }
  });

  it('is Infinity (prunes nothing) for a pool whose math would refuse for want of a fee', () => {
    const amm: AmmPool = { dex: Dex.Amm, tokenA: WSOL_MINT, tokenB: USDC_MINT, status: 6n, reserveA: 10n, reserveB: 10n, feeNumerator: 1n, feeDenominator: 0n };
    expect(rateBound(amm, true)).toBe(Infinity);
  });
});

describe('the route search with rate bounds', () => {
  it('gives the exhaustive search answer on every pair, size and mode, quoting fewer pools', () => {
    const cache = new PoolCache({ stalenessThresholdMs: 3_600_000 });
    let slot = 10n;
    for (const view of sim.chain.pools()) storePool(cache, view, slot++);
    const search = new CacheRouteSearch(cache, DEFAULT_INTERMEDIATE_MINTS);
    const mints = sim.chain.tokens().map((t) => t.mint);
    const rng = new Prng(9);
    let compared = 0;
    let routes = 0;
    for (const input of mints) {
      for (const output of mints) {
        if (input === output) continue;
        for (let i = 0; i < 6; i++) {
          const mode = rng.chance(0.5) ? SwapMode.ExactIn : SwapMode.ExactOut;
          const amount = rng.logBig(8, 48);
          const expected = exhaustiveRoute(cache, input, output, amount, mode);
          expect(pruned(search, cache, input, output, amount, mode), `${input} → ${output} ${mode} ${amount}`).toBe(expected);
          compared++;
          if (expected !== 'none') routes++;
        }
      }
    }
    expect(routes).toBeGreaterThan(compared / 2);
    // Without the bounds every candidate of every leg is quoted; with them, far fewer.
    expect(search.swapsQuoted).toBeLessThan(compared * 8);
  });
});

describe('the memo kept on the word of the bounds', () => {
  /** A random constant-product market: SOL, USDC and 4 tokens, several pools per pair. */
  const TOKENS = [WSOL_MINT, USDC_MINT, 'T1111111111111111111111111111111111111111111', 'T2222222222222222222222222222222222222222222', 'T3333333333333333333333333333333333333333333', 'T4444444444444444444444444444444444444444444'];
  const PRICE = [150, 1, 0.02, 3, 0.5, 40];

  function pool(rng: Prng, address: string, a: number, b: number, slot: bigint): PoolStateUpdate {
    const depth = 1e6 * 10 ** rng.int(0, 4);
    const skew = 1 + (rng.float() - 0.5) * 0.02;
    const reserveA = BigInt(Math.round((depth / PRICE[a]!) * 1e6));
    const reserveB = BigInt(Math.round((depth / PRICE[b]!) * 1e6 * skew));
    const p: AmmPool = {
      dex: Dex.Amm,
      address,
      tokenA: TOKENS[a]!,
      tokenB: TOKENS[b]!,
      status: 6n,
      reserveA,
      reserveB,
      feeNumerator: BigInt(rng.pick([1, 4, 25, 30, 100])),
      feeDenominator: 10_000n,
    };
    return { address, dex: Dex.Amm, tokenA: p.tokenA, tokenB: p.tokenB, reserveA, reserveB, slot, pool: p };
  }

  it('answers as an exhaustive search through random updates of every pair', () => {
    const rng = new Prng(21);
    const clock = new FakeClock();
    const cache = new PoolCache({ now: clock.now, stalenessThresholdMs: 3_600_000 });
    const memo = new QuoteMemo(cache);
    const pairs: [number, number][] = [];
    for (let a = 0; a < TOKENS.length; a++) for (let b = a + 1; b < TOKENS.length; b++) if (a < 2 || rng.chance(0.3)) pairs.push([a, b]);
    const addresses: { address: string; a: number; b: number }[] = [];
    let slot = 1n;
    for (const [a, b] of pairs) {
      for (let k = 0; k < rng.int(1, 4); k++) {
        const address = `P${a}${b}${k}`.padEnd(44, '1');
        addresses.push({ address, a, b });
        cache.upsert(pool(rng, address, a, b, slot++));
      }
    }
    const targets: { input: string; output: string; amount: bigint; mode: SwapMode }[] = [];
    for (let i = 0; i < 60; i++) {
      const x = rng.int(0, TOKENS.length - 1);
      let y = rng.int(0, TOKENS.length - 1);
      if (y === x) y = (x + 1) % TOKENS.length;
      targets.push({ input: TOKENS[x]!, output: TOKENS[y]!, amount: BigInt(Math.round(1e6 * 10 ** rng.int(0, 4) / PRICE[x]!)) + 1n, mode: rng.chance(0.5) ? SwapMode.ExactIn : SwapMode.ExactOut });
    }
    for (let step = 0; step < 4_000; step++) {
      if (rng.chance(0.3)) {
        const p = rng.pick(addresses);
        cache.upsert(pool(rng, p.address, p.a, p.b, slot++));
      }
      const t = rng.pick(targets);
      const got = memo.quote(t.input, t.output, t.amount, undefined, undefined, t.mode);
      const answer = got.ok ? got.route.hops.map((h) => `${h.pool}:${h.inAmount}>${h.outAmount}`).join(' ') : 'none';
      expect(answer, `step ${step}`).toBe(exhaustiveRoute(cache, t.input, t.output, t.amount, t.mode));
    }
    // The check kept answers (it is what this test is about), on the winner's new state too when
    // the winner itself changed (requoted), and some answers had to be searched again.
    expect(memo.revalidated).toBeGreaterThan(100);
    expect(memo.requoted).toBeGreaterThan(100);
    expect(memo.misses).toBeGreaterThan(100);
  });
});
