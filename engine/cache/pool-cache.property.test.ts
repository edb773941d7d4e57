/**
 * Property test: random sequences of upserts, clock steps, lookups and eviction ticks against a
 * naive Map-based model of the same rules (slot rule, staleness, eviction tick, least recently
 * updated eviction past capacity). Seeded: a failure names its seed and step.
 */
import { describe, expect, it } from 'vitest';

import { DEX_KINDS, type Dex } from '../dex/types.js';
import { Prng } from '../dex/testing/prng.js';
import { PoolCache } from './pool-cache.js';
import { UpsertOutcome, type PoolCacheStats } from './types.js';

interface ModelEntry {
  dex: Dex;
  tokenA: string;
  tokenB: string;
  reserveA: bigint;
  reserveB: bigint;
  slot: bigint;
  lastUpdated: number;
  /** Update order: the smallest is the least recently updated. */
  seq: number;
}

/** The rules of spec 02 written the obvious way. */
class Model {
  readonly entries = new Map<string, ModelEntry>();
  seq = 0;
  newest = 0n;
  evictedStale = 0;
  evictedOverCapacity = 0;
  ignoredOlder = 0;
  ignoredEqual = 0;
  staleReads = 0;

  constructor(
    private readonly max: number,
    private readonly staleMs: number,
  ) {}

  upsert(address: string, e: Omit<ModelEntry, 'seq'>): UpsertOutcome {
    const old = this.entries.get(address);
    if (old !== undefined) {
      if (e.slot === old.slot) {
        this.ignoredEqual++;
        return UpsertOutcome.IgnoredEqualSlot;
      }
      if (e.slot < old.slot) {
        this.ignoredOlder++;
        return UpsertOutcome.IgnoredOlderSlot;
      }
    } else if (this.entries.size >= this.max) {
      let victim: string | undefined;
      let minSeq = Infinity;
      for (const [k, v] of this.entries) if (v.seq < minSeq) [victim, minSeq] = [k, v.seq];
      this.entries.delete(victim!);
      this.evictedOverCapacity++;
    }
    this.entries.set(address, { ...e, seq: this.seq++ });
    if (e.slot > this.newest) this.newest = e.slot;
    return old === undefined ? UpsertOutcome.Inserted : UpsertOutcome.Replaced;
  }

  stale(e: ModelEntry, now: number): boolean {
    return now - e.lastUpdated > this.staleMs;
  }

  get(address: string, now: number): ModelEntry | undefined {
    const e = this.entries.get(address);
    if (e === undefined) return undefined;
    if (this.stale(e, now)) {
      this.staleReads++;
      return undefined;
    }
    return e;
  }

  pair(x: string, y: string, now: number): string[] {
    const out: string[] = [];
    for (const [k, e] of this.entries) {
      if (!((e.tokenA === x && e.tokenB === y) || (e.tokenA === y && e.tokenB === x))) continue;
      if (this.stale(e, now)) this.staleReads++;
      else out.push(k);
    }
    return out.sort();
  }

  evictStale(now: number): number {
    let n = 0;
    for (const [k, e] of this.entries) {
      if (this.stale(e, now)) {
        this.entries.delete(k);
        n++;
      }
    }
    this.evictedStale += n;
    return n;
  }

  mints(): string[] {
    const s = new Set<string>();
    for (const e of this.entries.values()) s.add(e.tokenA).add(e.tokenB);
    return [...s].sort();
  }

  stats(now: number): Omit<PoolCacheStats, 'hits' | 'misses' | 'hitRate'> {
    let fresh = 0;
    for (const e of this.entries.values()) if (!this.stale(e, now)) fresh++;
    return {
      totalPools: this.entries.size,
      freshPools: fresh,
      stalePools: this.entries.size - fresh,
      evictedStale: this.evictedStale,
      evictedOverCapacity: this.evictedOverCapacity,
      ignoredOlderSlot: this.ignoredOlder,
      ignoredEqualSlot: this.ignoredEqual,
      staleReads: this.staleReads,
    };
  }
}

const ADDRESSES = Array.from({ length: 12 }, (_, i) => `pool${i}`);
const MINTS = ['mintA', 'mintB', 'mintC', 'mintD', 'mintE'];
const SEEDS = 150;
const STEPS = 400;

function pick<T>(rng: Prng, xs: readonly T[]): T {
  return xs[rng.int(0, xs.length - 1)]!;
}

describe('PoolCache against a Map-based model', () => {
  it('agrees on every outcome, lookup, pair list, mint list and statistic over random sequences', () => {
    for (let seed = 1; seed <= SEEDS; seed++) {
      const rng = new Prng(seed);
      const max = rng.int(1, 8);
      const staleMs = rng.int(0, 50);
      let now = 1_000;
      const cache = new PoolCache({ maxPoolCount: max, stalenessThresholdMs: staleMs, now: () => now });
      const scratch = cache.newCandidates();
      const model = new Model(max, staleMs);
      for (let step = 0; step < STEPS; step++) {
        const where = `seed ${seed} step ${step}`;
        const op = rng.int(0, 9);
        if (op <= 4) {
          const address = pick(rng, ADDRESSES);
          // Tokens mostly fixed per address, sometimes changed, to exercise pair re-keying.
          const i = ADDRESSES.indexOf(address);
          const tokenA = rng.chance(0.1) ? pick(rng, MINTS) : MINTS[i % MINTS.length]!;
          const tokenB = rng.chance(0.1) ? pick(rng, MINTS) : MINTS[(i + 1 + (i >> 2)) % MINTS.length]!;
          const e = {
            dex: pick(rng, DEX_KINDS),
            tokenA,
            tokenB,
            reserveA: rng.chance(0.05) ? 2n ** 64n - 1n : BigInt(rng.u32()),
            reserveB: BigInt(rng.u32()) * BigInt(rng.u32()),
            slot: rng.chance(0.005) ? 2n ** 64n - 1n : BigInt(rng.int(0, 30)),
            lastUpdated: now,
          };
          const got = cache.upsert({ address, ...e });
          expect(got, where).toBe(model.upsert(address, e));
        } else if (op === 5) {
          now += rng.int(0, 20);
        } else if (op === 6) {
          const address = pick(rng, ADDRESSES);
          const got = cache.get(address);
          const want = model.get(address, now);
          if (want === undefined) expect(got, where).toBeUndefined();
          else {
            expect(got, where).toMatchObject({
              address,
              dex: want.dex,
              tokenA: want.tokenA,
              tokenB: want.tokenB,
              reserveA: want.reserveA,
              reserveB: want.reserveB,
              slot: want.slot,
              lastUpdated: want.lastUpdated,
            });
          }
        } else if (op === 7) {
          const x = pick(rng, MINTS);
          const y = pick(rng, MINTS);
          const r = cache.candidates(cache.mintIdOf(x), cache.mintIdOf(y), Infinity, scratch);
          const got = Array.from(r.ids.subarray(0, r.count), (id) => cache.addressOf(id)!).sort();
          expect(got, where).toEqual(model.pair(x, y, now));
        } else if (op === 8) {
          expect(cache.evictStale(), where).toBe(model.evictStale(now));
        } else {
          const address = pick(rng, ADDRESSES);
          expect(cache.slotOf(address), where).toBe(model.entries.get(address)?.slot);
        }
        expect(cache.size, where).toBe(model.entries.size);
      }
      const { hits: _h, misses: _m, hitRate: _r, ...stats } = cache.stats();
      expect(stats, `seed ${seed}`).toEqual(model.stats(now));
      expect(cache.pools().sort(), `seed ${seed}`).toEqual([...model.entries.keys()].sort());
      expect(cache.mints().sort(), `seed ${seed}`).toEqual(model.mints());
      expect(cache.newestSlot, `seed ${seed}`).toBe(model.newest);
    }
  });
});
