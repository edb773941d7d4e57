import { afterEach, describe, expect, it, vi } from 'vitest';

import { ErrorCode, isTpError } from '../errors.js';
import { Dex, type AmmPool, type ConcentratedPool, type SwapContext } from '../dex/types.js';
import { NO_ID } from './intern-table.js';
import { PoolCache, STARTUP_POOL_AGE_KNOWN_AFTER_SECONDS, U64_MAX } from './pool-cache.js';
import { UpsertOutcome, type PoolCacheOptions, type PoolStateUpdate } from './types.js';

const SOL = 'So11111111111111111111111111111111111111112';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const BONK = 'DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263';

function fakeClock(start = 1_700_000_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms) };
}

function update(address: string, slot: bigint, over: Partial<PoolStateUpdate> = {}): PoolStateUpdate {
  return { address, dex: Dex.Amm, tokenA: SOL, tokenB: USDC, reserveA: 1_000n, reserveB: 2_000n, slot, ...over };
}

function cacheWith(options: PoolCacheOptions = {}): { cache: PoolCache; advance: (ms: number) => void } {
  const clock = fakeClock();
  return { cache: new PoolCache({ now: clock.now, ...options }), advance: clock.advance };
}

function pairList(cache: PoolCache, x: string, y: string, maxAgeMs = Infinity): string[] {
  const r = cache.candidates(cache.mintIdOf(x), cache.mintIdOf(y), maxAgeMs, cache.newCandidates());
  return Array.from(r.ids.subarray(0, r.count), (id) => cache.addressOf(id)!).sort();
}

describe('PoolCache slot rule (spec 02 cache entry state table)', () => {
  it('inserts an absent pool with lastUpdated = now', () => {
    const { cache } = cacheWith({ now: () => 42_000 });
    expect(cache.upsert(update('P1', 10n))).toBe(UpsertOutcome.Inserted);
    const e = cache.get('P1')!;
    expect(e).toMatchObject({ address: 'P1', dex: Dex.Amm, tokenA: SOL, tokenB: USDC, reserveA: 1_000n, reserveB: 2_000n, slot: 10n, lastUpdated: 42_000 });
    expect(cache.size).toBe(1);
  });

  it('replaces the entry when the new slot is greater, resetting its age', () => {
    const { cache, advance } = cacheWith();
    cache.upsert(update('P1', 10n));
    advance(5_000);
    expect(cache.upsert(update('P1', 11n, { reserveA: 7n, reserveB: 9n }))).toBe(UpsertOutcome.Replaced);
    expect(cache.get('P1')).toMatchObject({ slot: 11n, reserveA: 7n, reserveB: 9n });
    expect(cache.ageMs('P1')).toBe(0);
    expect(cache.size).toBe(1);
  });

  it('ignores an update whose slot equals the stored slot, silently', () => {
    const { cache } = cacheWith();
    cache.upsert(update('P1', 10n));
    expect(cache.upsert(update('P1', 10n, { reserveA: 5n }))).toBe(UpsertOutcome.IgnoredEqualSlot);
    expect(cache.get('P1')!.reserveA).toBe(1_000n);
    expect(cache.stats()).toMatchObject({ ignoredEqualSlot: 1, ignoredOlderSlot: 0 });
  });

  it('replaces an equal-slot entry with a later account-stream write of that slot, never an earlier one', () => {
    const { cache } = cacheWith();
    cache.upsert(update('P1', 10n, { writeVersion: 5n }));
    expect(cache.upsert(update('P1', 10n, { reserveA: 5n, writeVersion: 7n }))).toBe(UpsertOutcome.Replaced);
    expect(cache.get('P1')!.reserveA).toBe(5n);
    expect(cache.upsert(update('P1', 10n, { reserveA: 6n, writeVersion: 6n }))).toBe(UpsertOutcome.IgnoredEqualSlot);
    expect(cache.upsert(update('P1', 10n, { reserveA: 6n }))).toBe(UpsertOutcome.IgnoredEqualSlot);
    expect(cache.get('P1')!.reserveA).toBe(5n);
    // A state read over RPC (no write version) is its slot's end: no write of that slot replaces it.
    cache.upsert(update('P2', 10n));
    expect(cache.upsert(update('P2', 10n, { reserveA: 5n, writeVersion: 9n }))).toBe(UpsertOutcome.IgnoredEqualSlot);
  });

  it('ignores an update whose slot is lower, and counts it as stale', () => {
    const { cache, advance } = cacheWith();
    cache.upsert(update('P1', 10n));
    advance(1_000);
    expect(cache.upsert(update('P1', 9n, { reserveA: 5n }))).toBe(UpsertOutcome.IgnoredOlderSlot);
    expect(cache.get('P1')).toMatchObject({ reserveA: 1_000n, slot: 10n });
    expect(cache.ageMs('P1')).toBe(1_000);
    expect(cache.stats()).toMatchObject({ ignoredOlderSlot: 1, ignoredEqualSlot: 0 });
  });

  it('tracks the newest slot seen as the context slot', () => {
    const { cache } = cacheWith();
    expect(cache.newestSlot).toBe(0n);
    cache.upsert(update('P1', 10n));
    cache.upsert(update('P2', 30n));
    cache.upsert(update('P1', 20n));
    expect(cache.newestSlot).toBe(30n);
    expect(cache.slotOf('P1')).toBe(20n);
    expect(cache.slotOf('nope')).toBeUndefined();
  });

  it('keeps the swap context across replacements unless a new one is given, and takes separate context updates', () => {
    const { cache } = cacheWith();
    const ctx1: SwapContext = { tickArrays: [] };
    const ctx2: SwapContext = { binArrays: [] };
    cache.upsert(update('P1', 1n, { context: ctx1 }));
    cache.upsert(update('P1', 2n));
    expect(cache.get('P1')!.context).toBe(ctx1);
    expect(cache.updateContext('P1', ctx2)).toBe(true);
    expect(cache.get('P1')!.context).toBe(ctx2);
    expect(cache.slotOf('P1')).toBe(2n);
    expect(cache.updateContext('absent', ctx2)).toBe(false);
  });

  it('keeps the decoded pool object for quoting, by id', () => {
    const { cache } = cacheWith();
    const pool: AmmPool = { dex: Dex.Amm, tokenA: SOL, tokenB: USDC, status: 1n, reserveA: 1_000n, reserveB: 2_000n, feeNumerator: 25n, feeDenominator: 10_000n };
    cache.upsert(update('P1', 1n, { pool }));
    const id = cache.idOf('P1');
    expect(cache.poolAt(id)).toBe(pool);
    expect(cache.get('P1')!.pool).toBe(pool);
  });
});

describe('PoolCache fees', () => {
  it('stores the event fee fields when given', () => {
    const { cache } = cacheWith();
    cache.upsert(update('P1', 1n, { feeNumerator: 30n, feeDenominator: 10_000n }));
    expect(cache.get('P1')).toMatchObject({ feeNumerator: 30n, feeDenominator: 10_000n });
  });

  it('takes the fee from the decoded pool when the event has none, else 0/0 (unknown)', () => {
    const { cache } = cacheWith();
    const amm: AmmPool = { dex: Dex.Amm, tokenA: SOL, tokenB: USDC, status: 1n, reserveA: 1n, reserveB: 1n, feeNumerator: 25n, feeDenominator: 10_000n };
    const cl: ConcentratedPool = { dex: Dex.Whirlpool, tokenA: SOL, tokenB: USDC, sqrtPrice: 1n << 64n, tick: 0, tickSpacing: 64, liquidity: 1n, feeRate: 3000, vaultA: 'va', vaultB: 'vb' };
    cache.upsert(update('A', 1n, { pool: amm }));
    cache.upsert(update('W', 1n, { dex: Dex.Whirlpool, pool: cl }));
    cache.upsert(update('X', 1n));
    expect(cache.get('A')).toMatchObject({ feeNumerator: 25n, feeDenominator: 10_000n });
    expect(cache.get('W')).toMatchObject({ feeNumerator: 3000n, feeDenominator: 1_000_000n });
    expect(cache.get('X')).toMatchObject({ feeNumerator: 0n, feeDenominator: 0n });
  });
});

describe('PoolCache staleness', () => {
  it('returns nothing for an entry older than the threshold and counts it as stale', () => {
    const { cache, advance } = cacheWith({ stalenessThresholdMs: 30_000 });
    cache.upsert(update('P1', 1n));
    advance(30_000);
    expect(cache.get('P1')).toBeDefined(); // age == threshold is still fresh
    expect(cache.stats()).toMatchObject({ totalPools: 1, freshPools: 1, stalePools: 0 });
    advance(1);
    expect(cache.get('P1')).toBeUndefined();
    expect(cache.freshId('P1')).toBe(NO_ID);
    expect(cache.stats()).toMatchObject({ totalPools: 1, freshPools: 0, stalePools: 1, staleReads: 2 });
    // still present until the eviction tick: slot and age stay visible
    expect(cache.slotOf('P1')).toBe(1n);
    expect(cache.ageMs('P1')).toBe(30_001);
  });

  it('makes a stale entry fresh again on a newer slot', () => {
    const { cache, advance } = cacheWith({ stalenessThresholdMs: 100 });
    cache.upsert(update('P1', 1n));
    advance(500);
    expect(cache.get('P1')).toBeUndefined();
    expect(cache.upsert(update('P1', 2n))).toBe(UpsertOutcome.Replaced);
    expect(cache.get('P1')!.slot).toBe(2n);
  });

  it('counts fresh and stale pools separately', () => {
    const { cache, advance } = cacheWith({ stalenessThresholdMs: 100 });
    cache.upsert(update('old1', 1n));
    cache.upsert(update('old2', 1n));
    advance(200);
    cache.upsert(update('new', 1n));
    expect(cache.stats()).toMatchObject({ totalPools: 3, freshPools: 1, stalePools: 2 });
  });
});

describe('PoolCache eviction tick', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('removes entries older than the threshold and returns how many', () => {
    const { cache, advance } = cacheWith({ stalenessThresholdMs: 100 });
    cache.upsert(update('a', 1n, { tokenA: BONK }));
    cache.upsert(update('b', 1n));
    advance(150);
    cache.upsert(update('c', 1n));
    expect(cache.evictStale()).toBe(2);
    expect(cache.pools()).toEqual(['c']);
    expect(cache.mints().sort()).toEqual([SOL, USDC].sort());
    expect(cache.slotOf('a')).toBeUndefined();
    expect(cache.stats()).toMatchObject({ totalPools: 1, freshPools: 1, stalePools: 0, evictedStale: 2 });
    expect(cache.evictStale()).toBe(0);
  });

  it('runs on an interval timer until stopped', () => {
    vi.useFakeTimers();
    let t = 0;
    const cache = new PoolCache({ stalenessThresholdMs: 100, now: () => t });
    cache.upsert(update('a', 1n));
    cache.startEviction(1_000);
    t = 500;
    vi.advanceTimersByTime(1_000);
    expect(cache.size).toBe(0);
    expect(cache.stats().evictedStale).toBe(1);
    cache.stop();
    cache.upsert(update('b', 1n));
    t = 5_000;
    vi.advanceTimersByTime(5_000);
    expect(cache.size).toBe(1);
  });
});

describe('PoolCache over capacity (docs/architecture.md §3)', () => {
  it('evicts the least recently updated pool, counts it and reuses its id', () => {
    const { cache, advance } = cacheWith({ maxPoolCount: 3 });
    cache.upsert(update('a', 1n, { tokenA: BONK }));
    advance(1);
    cache.upsert(update('b', 1n));
    advance(1);
    cache.upsert(update('c', 1n));
    advance(1);
    cache.upsert(update('a', 2n, { tokenA: BONK })); // a is now the most recently updated
    const bId = cache.idOf('b');
    advance(1);
    expect(cache.upsert(update('d', 1n))).toBe(UpsertOutcome.Inserted);
    expect(cache.pools().sort()).toEqual(['a', 'c', 'd']);
    expect(cache.idOf('b')).toBe(NO_ID);
    expect(cache.idOf('d')).toBe(bId);
    expect(cache.stats()).toMatchObject({ totalPools: 3, evictedOverCapacity: 1 });
    expect(pairList(cache, SOL, USDC)).toEqual(['c', 'd']);
    expect(pairList(cache, BONK, USDC)).toEqual(['a']);
  });

  it('does not evict on an ignored update or a replacement at capacity', () => {
    const { cache } = cacheWith({ maxPoolCount: 2 });
    cache.upsert(update('a', 5n));
    cache.upsert(update('b', 5n));
    cache.upsert(update('a', 4n));
    cache.upsert(update('b', 6n));
    expect(cache.size).toBe(2);
    expect(cache.stats().evictedOverCapacity).toBe(0);
  });

  it('updates the pair index and mint table when the evicted pool was the last of its pair', () => {
    const { cache, advance } = cacheWith({ maxPoolCount: 1 });
    cache.upsert(update('a', 1n, { tokenA: BONK }));
    advance(1);
    cache.upsert(update('b', 1n));
    expect(pairList(cache, BONK, USDC)).toEqual([]);
    expect(cache.mintIdOf(BONK)).toBe(NO_ID);
    expect(cache.mints().sort()).toEqual([SOL, USDC].sort());
  });
});

describe('PoolCache pair lookups', () => {
  it('finds the fresh pools of a pair in either order, without other pairs', () => {
    const { cache } = cacheWith();
    cache.upsert(update('p1', 1n));
    cache.upsert(update('p2', 1n, { tokenA: USDC, tokenB: SOL, dex: Dex.Whirlpool }));
    cache.upsert(update('p3', 1n, { tokenA: BONK }));
    expect(pairList(cache, SOL, USDC)).toEqual(['p1', 'p2']);
    expect(pairList(cache, USDC, SOL)).toEqual(['p1', 'p2']);
    expect(pairList(cache, USDC, BONK)).toEqual(['p3']);
    expect(pairList(cache, SOL, BONK)).toEqual([]);
    expect(pairList(cache, SOL, 'unknown')).toEqual([]);
  });

  it('skips stale pools of the pair', () => {
    const { cache, advance } = cacheWith({ stalenessThresholdMs: 100 });
    cache.upsert(update('old', 1n));
    advance(101);
    cache.upsert(update('new', 1n));
    expect(pairList(cache, SOL, USDC)).toEqual(['new']);
    expect(cache.stats().staleReads).toBe(1);
  });

  it('moves a pool to its new pair when a newer state changes its mints', () => {
    const { cache } = cacheWith();
    cache.upsert(update('p', 1n));
    cache.upsert(update('p', 2n, { tokenA: BONK }));
    expect(pairList(cache, SOL, USDC)).toEqual([]);
    expect(pairList(cache, BONK, USDC)).toEqual(['p']);
    expect(cache.mintIdOf(SOL)).toBe(NO_ID);
  });

  it("fills the caller's scratch, in either order of the mints", () => {
    const { cache } = cacheWith();
    cache.upsert(update('p', 1n));
    const scratch = cache.newCandidates();
    const first = cache.candidates(cache.mintIdOf(SOL), cache.mintIdOf(USDC), Infinity, scratch);
    expect(first).toBe(scratch);
    expect(first.count).toBe(1);
    const second = cache.candidates(cache.mintIdOf(USDC), cache.mintIdOf(SOL), Infinity, scratch);
    expect(second).toMatchObject({ count: 1, total: 1 });
    expect(cache.candidates(NO_ID, cache.mintIdOf(SOL), Infinity, scratch)).toMatchObject({ count: 0, total: 0 });
  });

  /**
   * Threshold 1,000 ms; pools 'old', 'mid' and 'new' of SOL/USDC stored at t, t + 600 and t + 900;
   * now t + 1,400: old 1,400 ms old (stale), mid 800, new 500.
   */
  function threeAges(): { cache: PoolCache; advance: (ms: number) => void; x: number; y: number } {
    const { cache, advance } = cacheWith({ stalenessThresholdMs: 1_000 });
    cache.upsert(update('old', 1n));
    advance(600);
    cache.upsert(update('mid', 1n));
    advance(300);
    cache.upsert(update('new', 1n));
    advance(500);
    return { cache, advance, x: cache.mintIdOf(SOL), y: cache.mintIdOf(USDC) };
  }

  it('tells the pools of the pair from its candidates: any age, and the newest left out for its age', () => {
    const { cache, x, y } = threeAges();
    const c = cache.candidates(x, y, 600, cache.newCandidates());
    expect(Array.from(c.ids.subarray(0, c.count), (id) => cache.addressOf(id))).toEqual(['new']);
    expect(c.total).toBe(3);
    expect(c.now - c.newestExcluded).toBe(800); // 'mid', too old for this request though fresh
    expect(cache.stats().staleReads).toBe(1); // 'old' only: beyond the staleness threshold
    const all = cache.candidates(x, y, Infinity, cache.newCandidates());
    expect(all.count).toBe(2);
    expect(all.now - all.newestExcluded).toBe(1_400);
    expect(cache.candidates(x, y, 0, cache.newCandidates())).toMatchObject({ count: 0, total: 3 });
  });

  it('says how long its answer holds while the pair does not change, and how many pools were stale', () => {
    const { cache, advance, x, y } = threeAges();
    // Limit 600: the candidate 'new' ages out at t + 900 + 600, before 'mid', left out, grows stale (t + 1,600).
    const c = cache.candidates(x, y, 600, cache.newCandidates());
    expect(c.stale).toBe(1);
    expect(c.validUntil - c.now).toBe(100);
    // Limit 0: no candidate; the answer changes when 'mid' grows stale (counted then).
    const none = cache.candidates(x, y, 0, cache.newCandidates());
    expect(none).toMatchObject({ count: 0, stale: 1 });
    expect(none.validUntil - none.now).toBe(200);
    // No request limit: the candidates 'mid' and 'new' age out at the threshold, 'mid' first.
    const all = cache.candidates(x, y, Infinity, cache.newCandidates());
    expect(all).toMatchObject({ count: 2, stale: 1 });
    expect(all.validUntil - all.now).toBe(200);
    advance(200); // 'mid' is exactly 1,000 ms old: still fresh (the limit passes)
    expect(cache.candidates(x, y, Infinity, cache.newCandidates()).count).toBe(2);
    advance(1);
    const later = cache.candidates(x, y, Infinity, cache.newCandidates());
    expect(later).toMatchObject({ count: 1, stale: 2 });
    expect(later.validUntil - later.now).toBe(299);
    expect(cache.candidates(NO_ID, y, Infinity, cache.newCandidates())).toMatchObject({ stale: 0, validUntil: Infinity });
  });

  it('decides freshness with one rule: an age equal to the threshold or the request limit passes', () => {
    const { cache } = cacheWith({ stalenessThresholdMs: 1_000 });
    expect(cache.isFresh(1_000)).toBe(true);
    expect(cache.isFresh(1_001)).toBe(false);
    expect(cache.isFresh(400, 400)).toBe(true);
    expect(cache.isFresh(401, 400)).toBe(false);
    expect(cache.isFresh(900, 5_000)).toBe(true);
    expect(cache.isFresh(1_001, 5_000)).toBe(false);
    expect(cache.isFresh(Infinity)).toBe(false);
  });
});

describe('PoolCache mint interning', () => {
  it('stores mints once, as ids in tokenA / tokenB, and forgets them with their last pool', () => {
    const { cache, advance } = cacheWith({ stalenessThresholdMs: 10 });
    cache.upsert(update('p1', 1n));
    cache.upsert(update('p2', 1n, { tokenA: USDC, tokenB: BONK }));
    const p1 = cache.idOf('p1');
    const p2 = cache.idOf('p2');
    expect(cache.tokenBAt(p1)).toBe(USDC);
    expect(cache.tokenAAt(p2)).toBe(USDC);
    expect(cache.mintIdOf(cache.tokenBAt(p1)!)).toBe(cache.mintIdOf(cache.tokenAAt(p2)!));
    expect(cache.tokenAAt(p1)).toBe(SOL);
    expect(cache.mints().sort()).toEqual([SOL, USDC, BONK].sort());
    advance(11);
    cache.upsert(update('p1', 2n));
    cache.evictStale();
    expect(cache.mints().sort()).toEqual([SOL, USDC].sort());
  });
});

describe('PoolCache u64 extremes', () => {
  it('keeps 2^64-1 reserves, slots and fees exactly', () => {
    const { cache } = cacheWith();
    cache.upsert(update('max', U64_MAX, { reserveA: U64_MAX, reserveB: U64_MAX - 1n, feeNumerator: U64_MAX, feeDenominator: U64_MAX }));
    expect(cache.get('max')).toMatchObject({ reserveA: U64_MAX, reserveB: U64_MAX - 1n, slot: U64_MAX, feeNumerator: U64_MAX, feeDenominator: U64_MAX });
    expect(cache.newestSlot).toBe(2n ** 64n - 1n);
    expect(cache.upsert(update('max', U64_MAX))).toBe(UpsertOutcome.IgnoredEqualSlot);
    expect(cache.upsert(update('max', U64_MAX - 1n))).toBe(UpsertOutcome.IgnoredOlderSlot);
    cache.upsert(update('zero', 0n, { reserveA: 0n, reserveB: 0n }));
    expect(cache.get('zero')).toMatchObject({ reserveA: 0n, reserveB: 0n, slot: 0n });
  });

  it('refuses values outside u64 and an unknown dex, leaving the cache unchanged', () => {
    const { cache } = cacheWith();
    cache.upsert(update('p', 1n));
    const bad: PoolStateUpdate[] = [
      update('p', 2n, { reserveA: 2n ** 64n }),
      update('p', 2n, { reserveB: -1n }),
      update('p', 2n ** 64n),
      update('p', 2n, { feeNumerator: -1n, feeDenominator: 1n }),
    ];
    for (const u of bad) {
      let err: unknown;
      try {
        cache.upsert(u);
      } catch (e) {
        err = e;
      }
      expect(isTpError(err, ErrorCode.InvalidAmount)).toBe(true);
    }
    let err: unknown;
    try {
      cache.upsert(update('q', 1n, { dex: 'raydium' }));
    } catch (e) {
      err = e;
    }
    expect(isTpError(err, ErrorCode.AccountInvalid)).toBe(true);
    expect(cache.pools()).toEqual(['p']);
    expect(cache.slotOf('p')).toBe(1n);
  });
});

describe('PoolCache statistics', () => {
  it('computes the hit rate from recorded hits and misses', () => {
    const { cache } = cacheWith();
    expect(cache.stats().hitRate).toBe(0);
    for (let i = 0; i < 4; i++) cache.recordHit();
    cache.recordMiss();
    expect(cache.stats()).toMatchObject({ hits: 4, misses: 1, hitRate: 0.8 });
  });

  it('rejects invalid options with a config error', () => {
    expect(() => new PoolCache({ maxPoolCount: 0 })).toThrow(/maxPoolCount/);
    expect(() => new PoolCache({ stalenessThresholdMs: -1 })).toThrow(/stalenessThresholdMs/);
  });
});

describe('PoolCache pair versions (what the quote memo keys on)', () => {
  function version(cache: PoolCache, x: string, y: string): number {
    return cache.pairVersion(cache.mintIdOf(x), cache.mintIdOf(y));
  }

  it('moves on every insert, replacement, context update and removal touching the pair, never back', () => {
    const { cache, advance } = cacheWith({ maxPoolCount: 2, stalenessThresholdMs: 1_000 });
    const seen = new Set<number>();
    const step = (what: () => unknown): number => {
      what();
      const v = version(cache, SOL, USDC);
      expect(seen.has(v)).toBe(false);
      seen.add(v);
      return v;
    };
    step(() => cache.upsert(update('P1', 1n)));
    step(() => cache.upsert(update('P2', 1n)));
    step(() => cache.upsert(update('P1', 2n, { reserveA: 5n })));
    step(() => cache.updateContext('P2', { tickArrays: [] }));
    // A pool of another pair evicts P2 (least recently updated) at capacity.
    step(() => cache.upsert(update('B1', 1n, { tokenA: BONK })));
    expect(cache.idOf('P2')).toBe(NO_ID);
    advance(1_001);
    cache.upsert(update('B1', 2n, { tokenA: BONK }));
    step(() => cache.evictStale());
    expect(cache.idOf('P1')).toBe(NO_ID);
    expect(version(cache, SOL, USDC)).toBe(0);
    // The pair comes back: a version never seen before, in either order.
    step(() => cache.upsert(update('P3', 1n)));
    expect(version(cache, USDC, SOL)).toBe(version(cache, SOL, USDC));
  });

  it('stays put on ignored updates and on changes to other pairs', () => {
    const { cache } = cacheWith();
    cache.upsert(update('P1', 5n));
    cache.upsert(update('B1', 1n, { tokenA: BONK }));
    const v = version(cache, SOL, USDC);
    cache.upsert(update('P1', 5n, { reserveA: 1n }));
    cache.upsert(update('P1', 4n, { reserveA: 1n }));
    cache.upsert(update('B1', 2n, { tokenA: BONK }));
    cache.updateContext('B1', {});
    cache.candidates(cache.mintIdOf(SOL), cache.mintIdOf(USDC), Infinity, cache.newCandidates());
    expect(version(cache, SOL, USDC)).toBe(v);
  });

  it('moves both pairs when a newer state moves a pool to another pair', () => {
    const { cache } = cacheWith();
    cache.upsert(update('P1', 1n));
    cache.upsert(update('P2', 1n));
    cache.upsert(update('B1', 1n, { tokenA: BONK }));
    const solUsdc = version(cache, SOL, USDC);
    const bonkUsdc = version(cache, BONK, USDC);
    cache.upsert(update('P1', 2n, { tokenA: BONK }));
    expect(version(cache, SOL, USDC)).not.toBe(solUsdc);
    expect(version(cache, BONK, USDC)).not.toBe(bonkUsdc);
  });

  it('counts every pool of a pair, stale ones too, in the candidates total', () => {
    const { cache, advance } = cacheWith({ stalenessThresholdMs: 100 });
    cache.upsert(update('P1', 1n));
    advance(200);
    cache.upsert(update('P2', 1n));
    const c = cache.candidates(cache.mintIdOf(USDC), cache.mintIdOf(SOL), Infinity, cache.newCandidates());
    expect(c.total).toBe(2);
    expect(cache.addressOf(c.ids[0]!)).toBe('P2');
    expect(c.count).toBe(1);
    expect(cache.nowMs()).toBe(1_700_000_000_200);
    expect(c.now).toBe(cache.nowMs());
  });
});

describe('PoolCache pool age (firstSeen) and change notification', () => {
  it('reports the pool age in whole seconds since the pool was first stored, kept across replacements', () => {
    const { cache, advance } = cacheWith({ startupWindowMs: 0 });
    cache.upsert(update('P1', 10n));
    const id = cache.idOf('P1');
    expect(cache.poolAgeSeconds(id)).toBe(0);
    advance(2_999);
    cache.upsert(update('P1', 11n));
    expect(cache.poolAgeSeconds(id)).toBe(2);
    advance(1);
    expect(cache.poolAgeSeconds(id)).toBe(3);
  });

  it('clears the first-seen time on eviction: a pool seen again starts over', () => {
    const { cache, advance } = cacheWith({ stalenessThresholdMs: 1_000, startupWindowMs: 0 });
    cache.upsert(update('P1', 10n));
    const id = cache.idOf('P1');
    advance(5_000);
    expect(cache.evictStale()).toBe(1);
    expect(cache.poolAgeSeconds(id)).toBeUndefined();
    expect(cache.entryAt(id)).toBeUndefined();
    cache.upsert(update('P1', 12n));
    expect(cache.poolAgeSeconds(cache.idOf('P1'))).toBe(0);
  });

  it('reports a pool stored in the start-up window as of unknown age until the cache has held it an hour', () => {
    const { cache, advance } = cacheWith({ startupWindowMs: 60_000 });
    advance(59_999);
    cache.upsert(update('OLD', 10n)); // the start-up load: the pool existed before the cache
    advance(1);
    cache.upsert(update('NEW', 10n)); // first seen after the window: its age is observed
    advance(5_000);
    expect(cache.poolAgeSeconds(cache.idOf('OLD'))).toBeUndefined();
    expect(cache.poolAgeSeconds(cache.idOf('NEW'))).toBe(5);
    advance(STARTUP_POOL_AGE_KNOWN_AFTER_SECONDS * 1000 - 5_000);
    expect(cache.poolAgeSeconds(cache.idOf('OLD'))).toBe(STARTUP_POOL_AGE_KNOWN_AFTER_SECONDS);
  });

  it('clears the first-seen time of a pool evicted over capacity, whose id another pool reuses', () => {
    const { cache, advance } = cacheWith({ maxPoolCount: 1, startupWindowMs: 0 });
    cache.upsert(update('P1', 10n));
    advance(10_000);
    cache.upsert(update('P2', 10n));
    expect(cache.idOf('P1')).toBe(NO_ID);
    expect(cache.poolAgeSeconds(cache.idOf('P2'))).toBe(0);
  });

  it('notifies listeners on insert, replacement, context update and eviction, not on ignored updates', () => {
    const { cache, advance } = cacheWith({ stalenessThresholdMs: 1_000 });
    let calls = 0;
    const off = cache.onChange(() => calls++);
    cache.upsert(update('P1', 10n));
    expect(calls).toBe(1);
    cache.upsert(update('P1', 11n));
    expect(calls).toBe(2);
    cache.upsert(update('P1', 11n));
    cache.upsert(update('P1', 9n));
    expect(calls).toBe(2);
    cache.updateContext('P1', undefined);
    expect(calls).toBe(3);
    expect(cache.evictStale()).toBe(0);
    expect(calls).toBe(3);
    advance(5_000);
    expect(cache.evictStale()).toBe(1);
    expect(calls).toBe(4);
    off();
    cache.upsert(update('P1', 12n));
    expect(calls).toBe(4);
  });
});
