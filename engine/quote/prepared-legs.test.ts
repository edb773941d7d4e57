import { describe, expect, it } from 'vitest';

import { PoolCache, type PoolStateUpdate } from '../cache/index.js';
import { Dex, SwapMode, type AmmPool } from '../dex/index.js';
import { Prng } from '../dex/testing/prng.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { CacheRouteSearch } from './cache-route-search.js';
import { QuoteMemo } from './quote-memo.js';
import { routeFilterKey } from './route-filter.js';
import { DEFAULT_INTERMEDIATE_MINTS } from './route-search.js';
import { exhaustiveRoute, FakeClock } from './testing.js';

/**
 * The route search keeps each leg it read (its candidates sorted by rate bound) across searches
 * while the leg holds: the same pair version, the same age limit, and no candidate aged out or pool
 * grown stale since (cache-route-search.ts LegScratch). These tests check that it reuses legs, and
 * that every reason a leg stops holding makes the next search read it again.
 */

const T1 = 'T1111111111111111111111111111111111111111111';
const T2 = 'T2222222222222222222222222222222222222222222';
const TOKENS = [WSOL_MINT, USDC_MINT, T1, T2];
const PRICE = [150, 1, 0.02, 3];
const NO_FILTER = routeFilterKey(undefined);

function amm(address: string, a: number, b: number, depthUsd: number, slot: bigint, skew = 1, feeBps = 25): PoolStateUpdate {
  const reserveA = BigInt(Math.round((depthUsd / PRICE[a]!) * 1e6));
  const reserveB = BigInt(Math.round((depthUsd / PRICE[b]!) * 1e6 * skew));
  const pool: AmmPool = { dex: Dex.Amm, address, tokenA: TOKENS[a]!, tokenB: TOKENS[b]!, status: 6n, reserveA, reserveB, feeNumerator: BigInt(feeBps), feeDenominator: 10_000n };
  return { address, dex: Dex.Amm, tokenA: pool.tokenA, tokenB: pool.tokenB, reserveA, reserveB, slot, pool };
}

function routeOf(search: CacheRouteSearch, input: string, output: string, amount: bigint, mode: SwapMode, maxAgeMs = Infinity): string {
  const found = search.search(input, output, amount, mode, maxAgeMs, NO_FILTER);
  return found.ok ? found.route.hops.map((h) => `${h.pool}:${h.inAmount}>${h.outAmount}`).join(' ') : 'none';
}

describe('prepared legs', () => {
  it('are read once while their pairs do not change, and again for the pair that did', () => {
    const clock = new FakeClock();
    const cache = new PoolCache({ now: clock.now, stalenessThresholdMs: 60_000 });
    cache.upsert(amm('SOLUSDC1'.padEnd(44, '1'), 0, 1, 1e7, 1n));
    cache.upsert(amm('T1SOL1'.padEnd(44, '1'), 2, 0, 1e6, 2n));
    cache.upsert(amm('T1USDC1'.padEnd(44, '1'), 2, 1, 1e6, 3n, 0.99));
    const search = new CacheRouteSearch(cache, DEFAULT_INTERMEDIATE_MINTS);
    const amount = 5_000_000_000n;
    const first = routeOf(search, T1, USDC_MINT, amount, SwapMode.ExactIn);
    expect(first).toBe(exhaustiveRoute(cache, T1, USDC_MINT, amount, SwapMode.ExactIn));
    const prepared = search.legsPrepared;
    expect(prepared).toBeGreaterThanOrEqual(3);
    expect(routeOf(search, T1, USDC_MINT, amount, SwapMode.ExactIn)).toBe(first);
    expect(search.legsPrepared).toBe(prepared);
    expect(search.legsReused).toBeGreaterThanOrEqual(3);
    // A deeper SOL/USDC pool: that leg alone is read again, and the answer follows it.
    cache.upsert(amm('SOLUSDC2'.padEnd(44, '1'), 0, 1, 1e9, 4n, 1.02));
    const after = routeOf(search, T1, USDC_MINT, amount, SwapMode.ExactIn);
    expect(after).toBe(exhaustiveRoute(cache, T1, USDC_MINT, amount, SwapMode.ExactIn));
    expect(after).not.toBe(first);
    expect(search.legsPrepared).toBe(prepared + 1);
  });

  it('are read again once a candidate is too old, so an aged-out pool is never quoted', () => {
    const clock = new FakeClock();
    const cache = new PoolCache({ now: clock.now, stalenessThresholdMs: 1_000 });
    const better = 'T1USDCbetter'.padEnd(44, '1');
    const worse = 'T1USDCworse'.padEnd(44, '1');
    cache.upsert(amm(better, 2, 1, 1e6, 1n, 1.01)); // stored at t
    clock.advance(500);
    cache.upsert(amm(worse, 2, 1, 1e6, 2n, 0.99)); // t + 500
    clock.advance(400);
    const search = new CacheRouteSearch(cache, []);
    const amount = 1_000_000_000n;
    expect(routeOf(search, T1, USDC_MINT, amount, SwapMode.ExactIn)).toMatch(new RegExp(`^${better}:`));
    clock.advance(100); // 'better' exactly at the threshold: still fresh, and the leg still holds
    const reused = search.legsReused;
    expect(routeOf(search, T1, USDC_MINT, amount, SwapMode.ExactIn)).toMatch(new RegExp(`^${better}:`));
    expect(search.legsReused).toBe(reused + 1);
    clock.advance(1); // 'better' is stale now; nothing in the cache changed
    expect(routeOf(search, T1, USDC_MINT, amount, SwapMode.ExactIn)).toMatch(new RegExp(`^${worse}:`));
    expect(routeOf(search, T1, USDC_MINT, amount, SwapMode.ExactIn)).toBe(exhaustiveRoute(cache, T1, USDC_MINT, amount, SwapMode.ExactIn));
    // A younger age limit is another leg: read with its own candidates.
    expect(routeOf(search, T1, USDC_MINT, amount, SwapMode.ExactIn, 100)).toBe('none');
  });

  it('count their stale pools in staleReads on every search, as reading the cache would', () => {
    const clock = new FakeClock();
    const cache = new PoolCache({ now: clock.now, stalenessThresholdMs: 1_000 });
    cache.upsert(amm('T1USDCold'.padEnd(44, '1'), 2, 1, 1e6, 1n));
    clock.advance(2_000);
    cache.upsert(amm('T1USDCnew'.padEnd(44, '1'), 2, 1, 1e6, 2n));
    const search = new CacheRouteSearch(cache, []);
    for (let i = 0; i < 3; i++) routeOf(search, T1, USDC_MINT, 1_000n, SwapMode.ExactIn);
    expect(search.legsReused).toBe(2);
    expect(cache.stats().staleReads).toBe(3);
  });

  it('give the exhaustive answer through random updates, clock moves and age limits', () => {
    const rng = new Prng(17);
    const clock = new FakeClock();
    const cache = new PoolCache({ now: clock.now, stalenessThresholdMs: 2_000 });
    const pools: { address: string; a: number; b: number }[] = [];
    for (let a = 0; a < TOKENS.length; a++) {
      for (let b = a + 1; b < TOKENS.length; b++) {
        for (let k = 0; k < 3; k++) pools.push({ address: `P${a}${b}${k}`.padEnd(44, '1'), a, b });
      }
    }
    let slot = 1n;
    const store = (p: { address: string; a: number; b: number }): void => {
      cache.upsert(amm(p.address, p.a, p.b, 1e5 * 10 ** rng.int(0, 3), slot++, 1 + (rng.float() - 0.5) * 0.04, rng.pick([1, 25, 100])));
    };
    for (const p of pools) store(p);
    const search = new CacheRouteSearch(cache, DEFAULT_INTERMEDIATE_MINTS);
    const memo = new QuoteMemo(cache);
    for (let step = 0; step < 3_000; step++) {
      if (rng.chance(0.2)) store(rng.pick(pools));
      if (rng.chance(0.2)) clock.advance(rng.int(1, 400));
      const x = rng.int(0, TOKENS.length - 1);
      const y = (x + rng.int(1, TOKENS.length - 1)) % TOKENS.length;
      const mode = rng.chance(0.5) ? SwapMode.ExactIn : SwapMode.ExactOut;
      const amount = BigInt(Math.round((1e3 * 10 ** rng.int(0, 3)) / PRICE[x]!)) + 1n;
      const maxAgeMs = rng.pick([Infinity, 1_500, 500]);
      const expected = exhaustiveRoute(cache, TOKENS[x]!, TOKENS[y]!, amount, mode, maxAgeMs);
      expect(routeOf(search, TOKENS[x]!, TOKENS[y]!, amount, mode, maxAgeMs), `step ${step}`).toBe(expected);
      const got = memo.quote(TOKENS[x]!, TOKENS[y]!, amount, maxAgeMs, undefined, mode);
      expect(got.ok ? got.route.hops.map((h) => `${h.pool}:${h.inAmount}>${h.outAmount}`).join(' ') : 'none', `memo, step ${step}`).toBe(expected);
    }
    // Most legs were reused, and some had to be read again for their age alone.
    expect(search.legsReused).toBeGreaterThan(1_000);
    expect(search.legsPrepared).toBeGreaterThan(500);
  });
});
