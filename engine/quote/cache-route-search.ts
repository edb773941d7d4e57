/**
 * The cache path's route search: route-search.ts `chooseRoute` over the pools of the cache (read
 * only through its read API: `candidates` into one reused scratch, reads by id), filtered by the
 * request's route filter (route-filter.ts), each hop quoted with the exact swap math on the decoded
 * pool, its context and its mints' Token-2022 transfer fees.
 *
 * Rate bounds, prepared when the cache stores a state (PoolCache.rateBoundAt, engine/dex
 * rate-bound.ts), keep the exact math to the pools that can win: a leg's candidates are quoted best
 * bound first until no bound left reaches the best quote, and an intermediate token whose two legs
 * cannot beat the best route is not quoted at all. The answer is the full search's, ties included
 * (route-bounds.test.ts checks it against a search that quotes every pool).
 *
 * It also answers what the quote memo and the gRPC stream need to know when an answer may change:
 * `versionOf`, one number that moves whenever any pool of any pair a route may use changes (the
 * direct pair, and with two-hop routes allowed both legs through every intermediate token); and
 * `stillBest`, whether a route chosen before such a change is still the answer, from its pools'
 * versions and the bounds alone; and `requote`, when the route's own pools changed, the same
 * check after quoting the route's hops alone on their new states.
 *
 * Allocation: one scratch per leg (grown to the largest pair, never per request); a search
 * allocates the chosen hops, the route and its standing, never a pool list. Single-threaded, like
 * the cache. */
import type { PairCandidates, PoolCache } from '../cache/index.js';
import { NO_ID } from '../cache/index.js';
import { boundedInput, boundedOutput, quoteSwap, SwapMode } from '../dex/index.js';
import { ErrorCode } from '../errors.js';
import type { RouteQuote } from './quote-answer.js';
import { quoteFailure, type QuoteFailure } from './quote-failure.js';
import { allowsDexCode, allowsMultiHop, FILTER_KEY_COUNT, filtersDexes } from './route-filter.js';
import { betterSwap, boundCannotBeat, chooseRoute, routeQuoteOf, routeValue, sameSwap, type HopChoice, type HopFinder, type PoolFacts } from './route-search.js';

/** A route found in the cache. */
export interface CacheRoute {
  readonly ok: true;
  readonly route: RouteQuote;
  /** Age in ms of the oldest state the route used, at the search's clock reading. */
  readonly ageMs: number;
  /** When the newest pool left out for its age (any leg read) was stored; -Infinity: none. */
  readonly excludedNewest: number;
  /** What it takes to know later, without quoting, that the route is still the answer. */
  readonly standing: RouteStanding;
}

/**
 * A chosen route's place: which route it is in the search's order (0 the direct one, i + 1 through
 * intermediate i: ties go to the earlier), its value (route-search.ts routeValue), and the cache id
 * and state version (PoolCache.poolVersionAt) of each hop's pool. The rest of a hop's standing is
 * its RouteHop: the amount the leg was asked for (exact in: `inAmount`; exact out: `outAmount`)
 * and the hop's value for it (the other one).
 *
 * Flat, one object per memoized route (it lives as long as the memo entry, so every object here is
 * one the scavenger copies or promotes under pool updates).
 */
export interface RouteStanding {
  readonly position: number;
  readonly value: bigint;
  readonly firstPool: number;
  readonly firstVersion: number;
  /** NO_ID (and version -1) for a direct route. */
  readonly secondPool: number;
  readonly secondVersion: number;
}

/**
 * A route held since it was chosen (the quote memo's entry, memo-entry.ts): its standing and, per
 * hop, the mints and the amounts it was computed with. What `stillBest` reads.
 */
export interface HeldRoute extends RouteStanding {
  readonly hopCount: number;
  /** Per hop, the pool's address (a cache id may be reused by another pool after an eviction). */
  readonly hopPools: readonly string[];
  readonly hopInputMints: readonly string[];
  readonly hopOutputMints: readonly string[];
  hopInAmount(k: number): bigint;
  hopOutAmount(k: number): bigint;
}

/** What NoPoolsInCache says when the route filter, not the cache, left no pool. */
export const FILTERED_OUT_MESSAGE = 'no route: no pool of the pair passes the route filter (dexes / excludeDexes)';

/**
 * One leg (a directed pair under a route filter): its candidates (fresh, allowed by the filter,
 * quoting the leg's direction), best rate bound first, used both for the route bound and for the
 * exact quotes. Prepared once and kept across searches while it holds: the pair's version is the
 * one it was read at (no pool of the pair stored, changed or removed since), the request's age limit
 * is the same, and the cache clock has not passed the moment a candidate would age out
 * (PairCandidates.validUntil). Under pool updates most requests read legs whose pairs did not move
 * since the last request that read them: they sort nothing and read no pool.
 */
class LegScratch {
  from = NO_ID;
  to = NO_ID;
  /** What it was read at: PoolCache.pairVersion, the age limit, the clock reading, and until when it holds. */
  pairVersion = -1;
  maxAgeMs = NaN;
  readAt = 0;
  validUntil = -Infinity;
  /** The cache's answer besides the candidates (PairCandidates), and how many candidates the filter let through. */
  newestExcluded = -Infinity;
  fresh = 0;
  passed = 0;
  total = 0;
  stale = 0;
  count = 0;
  ids = new Int32Array(16);
  bounds = new Float64Array(16);
  aToB = new Uint8Array(16);

  /** Inserts a candidate in bound order (descending); grows with the largest pair, never per request. */
  insert(id: number, bound: number, aToB: boolean): void {
    if (this.count === this.ids.length) this.grow();
    let j = this.count++;
    const ids = this.ids;
    const bounds = this.bounds;
    const dirs = this.aToB;
    while (j > 0 && bounds[j - 1]! < bound) {
      ids[j] = ids[j - 1]!;
      bounds[j] = bounds[j - 1]!;
      dirs[j] = dirs[j - 1]!;
      j--;
    }
    ids[j] = id;
    bounds[j] = bound;
    dirs[j] = aToB ? 1 : 0;
  }

  /** Where pool `id` is among the candidates; -1 when it is not one. */
  indexOf(id: number): number {
    const ids = this.ids;
    for (let i = 0; i < this.count; i++) if (ids[i] === id) return i;
    return -1;
  }

  private grow(): void {
    const n = 2 * this.ids.length;
    const ids = new Int32Array(n);
    const bounds = new Float64Array(n);
    const dirs = new Uint8Array(n);
    ids.set(this.ids);
    bounds.set(this.bounds);
    dirs.set(this.aToB);
    this.ids = ids;
    this.bounds = bounds;
    this.aToB = dirs;
  }
}

/**
 * True when no candidate of `leg` but `pool` can do strictly better than `value` for `asked` (what
 * the leg is asked for), nor as well (a pool of lower address would win the tie), by its rate bound.
 */
function othersCannotBeat(leg: LegScratch, pool: number, asked: bigint, value: bigint, mode: SwapMode): boolean {
  for (let i = 0; i < leg.count; i++) {
    if (leg.ids[i] !== pool && !boundCannotBeat(asked, leg.bounds[i]!, value, mode, true)) return false;
  }
  return true;
}

/** Prepared legs kept at most; at that count they are dropped and prepared again as searches read them. */
const MAX_PREPARED_LEGS = 4096;

export class CacheRouteSearch implements HopFinder<number> {
  readonly intermediates: readonly string[];
  private readonly cache: PoolCache;
  private readonly scratch: PairCandidates;
  /** Legs prepared by earlier searches, by directed pair and filter key (the key `leg` makes). */
  private readonly prepared = new Map<number, LegScratch>();
  /** Mint ids are below this (the cache's mint capacity): the stride of the directed pair key. */
  private readonly mintStride: number;
  /** The legs read by the search in progress (at most the direct pair and two per intermediate). */
  private readonly legs: LegScratch[] = [];
  private legsUsed = 0;
  // The search in progress (single-threaded: one at a time).
  private maxAgeMs = 0;
  private filterKey = 0;
  private newestExcluded = -Infinity;
  private now = 0;
  /** Fresh candidates read (any DEX) and those the filter let through. */
  private fresh = 0;
  private passed = 0;
  /** Pools of the legs read, any age. */
  private total = 0;
  /** Exact swap quotes computed by searches (the work the rate bounds save shows here). */
  swapsQuoted = 0;
  /** Legs read from the cache (prepared), and legs reused as prepared before. */
  legsPrepared = 0;
  legsReused = 0;

  constructor(cache: PoolCache, intermediates: readonly string[]) {
    this.cache = cache;
    this.scratch = cache.newCandidates();
    this.intermediates = intermediates;
    // Each live pool holds at most two mints: ids stay below 2 × maxPoolCount (PoolCache).
    this.mintStride = 2 * cache.maxPoolCount;
  }

  /**
   * The best route selling `inputMint` for `outputMint` under `filterKey` (route-filter.ts), among
   * pools at most `maxAgeMs` old and fresh. Records one cache hit or miss. Fails with
   * NoPoolsInCache 'no pools found in cache' when no route of pools exists at all (the direct pair,
   * or both legs through one intermediate), with NoPoolsInCache FILTERED_OUT_MESSAGE when pools
   * exist but the filter refuses every fresh one, and with NoValidQuotes 'no valid quotes from
   * cache' when every usable pool is stale, too old for the request or refuses the amount.
   */
  search(inputMint: string, outputMint: string, amount: bigint, mode: SwapMode, maxAgeMs: number, filterKey: number): CacheRoute | QuoteFailure {
    const cache = this.cache;
    this.begin(maxAgeMs, filterKey);
    const chosen = chooseRoute(this, inputMint, outputMint, amount, mode, this.intermediates, allowsMultiHop(filterKey));
    if (chosen === undefined) {
      cache.recordMiss();
      return this.failure(inputMint, outputMint);
    }
    cache.recordHit();
    return this.found(chosen, mode);
  }

  /** The CacheRoute of `chosen`, the route the search (or the requote) in progress settled on. */
  private found(chosen: readonly HopChoice<number>[], mode: SwapMode): CacheRoute {
    const cache = this.cache;
    let ageMs = 0;
    for (let k = 0; k < chosen.length; k++) {
      const age = cache.ageAt(chosen[k]!.pool, this.now);
      if (age > ageMs) ageMs = age;
    }
    const route = routeQuoteOf(mode, chosen, (id) => this.factsOf(id));
    return { ok: true, route, ageMs, excludedNewest: this.newestExcluded, standing: this.standingOf(chosen, mode) };
  }

  /**
   * Whether the `held` route, chosen for (x → y, `amount`, `mode`) when some pools a route
   * may use held other states, is still what a full search gives now. Yes when its own pools are
   * in the states of then (so its exact amounts are unchanged) and rate bounds (engine/dex
   * rate-bound.ts) show that nothing else can take its place: no other candidate of each of its
   * legs can do strictly better for that leg's amount, and no other route can do strictly better
   * than the route, nor as well when it comes earlier in the search's order (it would win the
   * tie). Reads the legs' candidates, quotes nothing. Returns when the newest pool left out for its
   * age by the legs read was stored (-Infinity: none), or undefined when the route must be
   * searched again.
   */
  stillBest(held: HeldRoute, x: number, y: number, amount: bigint, mode: SwapMode, maxAgeMs: number, filterKey: number): number | undefined {
    const cache = this.cache;
    const hopCount = held.hopCount;
    if (this.poolsMoved(held)) return undefined;
    const inputMint = cache.mintOf(x);
    const outputMint = cache.mintOf(y);
    if (inputMint === undefined || outputMint === undefined) return undefined;
    this.begin(maxAgeMs, filterKey);
    const exactIn = mode === SwapMode.ExactIn;
    for (let k = 0; k < hopCount; k++) {
      const pool = k === 0 ? held.firstPool : held.secondPool;
      const asked = exactIn ? held.hopInAmount(k) : held.hopOutAmount(k);
      const value = exactIn ? held.hopOutAmount(k) : held.hopInAmount(k);
      const leg = this.leg(held.hopInputMints[k]!, held.hopOutputMints[k]!);
      if (leg === undefined || !othersCannotBeat(leg, pool, asked, value, mode)) return undefined;
    }
    if (!this.otherRoutesCannotBeat(inputMint, outputMint, amount, held.value, held.position, mode)) return undefined;
    return this.newestExcluded;
  }

  /** True when a pool of `held`'s route is no longer in the state the route was computed from. */
  poolsMoved(held: HeldRoute): boolean {
    const cache = this.cache;
    if (cache.poolVersionAt(held.firstPool) !== held.firstVersion) return true;
    return held.hopCount > 1 && cache.poolVersionAt(held.secondPool) !== held.secondVersion;
  }

  /**
   * The `held` route's pools quoted again in their states now, for (x → y, `amount`, `mode`), when
   * that is what a full search gives now; undefined when the route must be searched again. The
   * request path's work when a route's own pools changed (the common case under pool updates: a
   * pool's own swaps move it): the exact swap of each hop it answers with (its pools, each a fresh
   * candidate of its leg, the amount flowing from hop to hop) and the rate bounds of everything
   * else, as `stillBest` reads them, against the new amounts. No other pool is quoted. Records one
   * cache hit, as `search` does when it finds a route.
   */
  requote(held: HeldRoute, x: number, y: number, amount: bigint, mode: SwapMode, maxAgeMs: number, filterKey: number): CacheRoute | undefined {
    const cache = this.cache;
    const inputMint = cache.mintOf(x);
    const outputMint = cache.mintOf(y);
    if (inputMint === undefined || outputMint === undefined) return undefined;
    const hopCount = held.hopCount;
    // A pool id may be another pool's after an eviction: the held address must still be the id's.
    if (cache.addressOf(held.firstPool) !== held.hopPools[0]) return undefined;
    if (hopCount > 1 && cache.addressOf(held.secondPool) !== held.hopPools[1]) return undefined;
    this.begin(maxAgeMs, filterKey);
    const exactIn = mode === SwapMode.ExactIn;
    const chosen: HopChoice<number>[] = [];
    let asked = amount;
    // Exact in, from the first hop on (each sells what the one before bought); exact out, from the last.
    for (let j = 0; j < hopCount; j++) {
      const k = exactIn ? j : hopCount - 1 - j;
      const pool = k === 0 ? held.firstPool : held.secondPool;
      const inputOfHop = held.hopInputMints[k]!;
      const outputOfHop = held.hopOutputMints[k]!;
      const leg = this.leg(inputOfHop, outputOfHop);
      if (leg === undefined) return undefined;
      const at = leg.indexOf(pool);
      // No longer a candidate (too old, stale): the search decides.
      if (at < 0) return undefined;
      this.swapsQuoted++;
      const swap = quoteSwap(cache.poolAt(pool)!, { aToB: leg.aToB[at] === 1, mode, amount: asked }, cache.contextAt(pool), cache.transferFeesAt(pool));
      if (!swap.ok) return undefined;
      const value = exactIn ? swap.amountOut : swap.amountIn;
      if (!othersCannotBeat(leg, pool, asked, value, mode)) return undefined;
      chosen[k] = { pool, swap, inputMint: inputOfHop, outputMint: outputOfHop };
      asked = value;
    }
    if (!this.otherRoutesCannotBeat(inputMint, outputMint, amount, routeValue(chosen, mode), held.position, mode)) return undefined;
    cache.recordHit();
    return this.found(chosen, mode);
  }

  /**
   * True when no route other than the one at `position` (0 direct, i + 1 through intermediate i)
   * can do strictly better than `value` for (inputMint → outputMint, `amount`), nor as well when
   * it comes earlier in the search's order (it would win the tie), by the legs' rate bounds.
   */
  private otherRoutesCannotBeat(inputMint: string, outputMint: string, amount: bigint, value: bigint, position: number, mode: SwapMode): boolean {
    if (position !== 0 && !boundCannotBeat(amount, this.bound(inputMint, outputMint), value, mode, true)) return false;
    if (!allowsMultiHop(this.filterKey)) return true;
    const intermediates = this.intermediates;
    for (let i = 0; i < intermediates.length; i++) {
      const via = intermediates[i]!;
      if (i + 1 === position || via === inputMint || via === outputMint) continue;
      const bound = this.bound(inputMint, via) * this.bound(via, outputMint);
      if (!boundCannotBeat(amount, bound, value, mode, i + 1 < position)) return false;
    }
    return true;
  }

  /** Starts a search (or a check): the request's limits, no leg read yet, counters at zero. */
  private begin(maxAgeMs: number, filterKey: number): void {
    this.maxAgeMs = maxAgeMs;
    this.filterKey = filterKey;
    this.newestExcluded = -Infinity;
    this.now = this.cache.nowMs();
    this.fresh = 0;
    this.passed = 0;
    this.total = 0;
    this.legsUsed = 0;
  }

  /** The standing of route `chosen` (one hop, or two through an intermediate) at the cache's versions now. */
  private standingOf(chosen: readonly HopChoice<number>[], mode: SwapMode): RouteStanding {
    const cache = this.cache;
    const first = chosen[0]!.pool;
    const second = chosen.length > 1 ? chosen[1]!.pool : NO_ID;
    const position = chosen.length === 1 ? 0 : this.intermediates.indexOf(chosen[0]!.outputMint) + 1;
    return {
      position,
      value: routeValue(chosen, mode),
      firstPool: first,
      firstVersion: cache.poolVersionAt(first),
      secondPool: second,
      secondVersion: second === NO_ID ? -1 : cache.poolVersionAt(second),
    };
  }

  /** HopFinder: the largest rate bound among the leg's candidates; 0 when it has none. */
  bound(inputMint: string, outputMint: string): number {
    const leg = this.leg(inputMint, outputMint);
    return leg === undefined || leg.count === 0 ? 0 : leg.bounds[0]!;
  }

  /**
   * HopFinder: the best fresh, allowed pool of one leg (ties to the lower address). Candidates are
   * quoted best rate bound first, and the walk stops at the first whose bound cannot reach the best
   * exact quote so far: the pools after it cannot either (engine/dex rate-bound.ts).
   */
  best(inputMint: string, outputMint: string, amount: bigint, mode: SwapMode): HopChoice<number> | undefined {
    const leg = this.leg(inputMint, outputMint);
    if (leg === undefined) return undefined;
    const cache = this.cache;
    const exactIn = mode === SwapMode.ExactIn;
    const size = Number(amount);
    let bestId = NO_ID;
    let best;
    let limit = 0;
    for (let k = 0; k < leg.count; k++) {
      if (best !== undefined && (exactIn ? boundedOutput(size, leg.bounds[k]!) < limit : boundedInput(size, leg.bounds[k]!) > limit)) break;
      const id = leg.ids[k]!;
      this.swapsQuoted++;
      const result = quoteSwap(cache.poolAt(id)!, { aToB: leg.aToB[k] === 1, mode, amount }, cache.contextAt(id), cache.transferFeesAt(id));
      if (!result.ok) continue;
      if (best === undefined || betterSwap(result, best, mode) || (sameSwap(result, best, mode) && cache.addressOf(id)! < cache.addressOf(bestId)!)) {
        best = result;
        bestId = id;
        limit = Number(exactIn ? result.amountOut : result.amountIn);
      }
    }
    if (best === undefined) return undefined;
    return { pool: bestId, swap: best, inputMint, outputMint };
  }

  /**
   * The leg (inputMint → outputMint) of the search in progress: the prepared leg when it still
   * holds (LegScratch), else read from the cache now. Its counters and the newest pool left out
   * for its age (which the quote memo needs whether or not the leg is then quoted) count once per
   * search, as if read then. Undefined for a mint the cache does not know.
   */
  private leg(inputMint: string, outputMint: string): LegScratch | undefined {
    const cache = this.cache;
    const x = cache.mintIdOf(inputMint);
    if (x === NO_ID) return undefined;
    const y = cache.mintIdOf(outputMint);
    if (y === NO_ID) return undefined;
    for (let i = 0; i < this.legsUsed; i++) {
      const leg = this.legs[i]!;
      if (leg.from === x && leg.to === y) return leg;
    }
    const key = (x * this.mintStride + y) * FILTER_KEY_COUNT + this.filterKey;
    let leg = this.prepared.get(key);
    if (leg === undefined) {
      if (this.prepared.size >= MAX_PREPARED_LEGS) this.prepared.clear();
      leg = new LegScratch();
      this.prepared.set(key, leg);
    }
    const now = this.now;
    if (leg.from === x && leg.to === y && leg.pairVersion === cache.pairVersion(x, y) && leg.maxAgeMs === this.maxAgeMs && leg.readAt <= now && now <= leg.validUntil) {
      this.legsReused++;
      if (leg.stale > 0) cache.recordStaleReads(leg.stale);
    } else {
      this.prepare(leg, x, y, inputMint, outputMint);
    }
    if (leg.newestExcluded > this.newestExcluded) this.newestExcluded = leg.newestExcluded;
    this.fresh += leg.fresh;
    this.passed += leg.passed;
    this.total += leg.total;
    if (this.legsUsed === this.legs.length) this.legs.push(leg);
    else this.legs[this.legsUsed] = leg;
    this.legsUsed++;
    return leg;
  }

  /** `leg` read from the cache now (the pair of mint ids x → y, under the search's age limit and filter). */
  private prepare(leg: LegScratch, x: number, y: number, inputMint: string, outputMint: string): void {
    const cache = this.cache;
    this.legsPrepared++;
    // The version first: a change while reading (none: single-threaded) would make it stale, never wrong.
    leg.pairVersion = cache.pairVersion(x, y);
    const candidates = cache.candidates(x, y, this.maxAgeMs, this.scratch);
    leg.from = x;
    leg.to = y;
    leg.maxAgeMs = this.maxAgeMs;
    leg.readAt = candidates.now;
    leg.validUntil = candidates.validUntil;
    leg.newestExcluded = candidates.newestExcluded;
    leg.fresh = candidates.count;
    leg.total = candidates.total;
    leg.stale = candidates.stale;
    leg.passed = 0;
    leg.count = 0;
    const key = this.filterKey;
    for (let i = 0; i < candidates.count; i++) {
      const id = candidates.ids[i]!;
      if (!allowsDexCode(key, cache.dexCodeAt(id))) continue;
      leg.passed++;
      const pool = cache.poolAt(id);
      if (pool === undefined) continue;
      let aToB: boolean;
      if (inputMint === pool.tokenA && outputMint === pool.tokenB) aToB = true;
      else if (inputMint === pool.tokenB && outputMint === pool.tokenA) aToB = false;
      else continue;
      leg.insert(id, cache.rateBoundAt(id, aToB), aToB);
    }
  }

  /**
   * A number that moves whenever any pool of any pair a route of (x → y) under `filterKey` may use
   * changes: the direct pair's version (PoolCache.pairVersion) when two-hop routes are off; else a
   * combination of the versions of the direct pair and of both legs through every intermediate.
   *
   * The combination is max × (2k + 2) + (pairs with pools), k intermediates. Pair versions come from
   * one counter that only grows and read 0 when the pair empties, so between two readings either a
   * pair took a new number (larger than every number handed out before: the max grows) or pairs
   * only emptied (the count drops); and a later reading equal to an earlier one means no pair
   * changed in between (a number once replaced never comes back). Equal numbers: same pools, same
   * states. An intermediate the cache does not know counts as pairs without pools.
   */
  versionOf(x: number, y: number, filterKey: number): number {
    const cache = this.cache;
    const direct = cache.pairVersion(x, y);
    if (!allowsMultiHop(filterKey)) return direct;
    const intermediates = this.intermediates;
    let max = direct;
    let count = direct === 0 ? 0 : 1;
    for (let i = 0; i < intermediates.length; i++) {
      const m = cache.mintIdOf(intermediates[i]!);
      if (m === NO_ID || m === x || m === y) continue;
      const a = cache.pairVersion(x, m);
      const b = cache.pairVersion(m, y);
      if (a !== 0) count++;
      if (b !== 0) count++;
      if (a > max) max = a;
      if (b > max) max = b;
    }
    return max * (2 * intermediates.length + 2) + count;
  }

  /** Why nothing was found (see `search`); only on failure, so it may read the cache again. */
  private failure(inputMint: string, outputMint: string): QuoteFailure {
    const cache = this.cache;
    const x = cache.mintIdOf(inputMint);
    const y = cache.mintIdOf(outputMint);
    let routable = x !== NO_ID && y !== NO_ID && cache.pairVersion(x, y) !== 0;
    if (!routable && x !== NO_ID && y !== NO_ID && allowsMultiHop(this.filterKey)) {
      for (const via of this.intermediates) {
        const m = cache.mintIdOf(via);
        if (m === NO_ID || m === x || m === y) continue;
        if (cache.pairVersion(x, m) !== 0 && cache.pairVersion(m, y) !== 0) routable = true;
      }
    }
    if (!routable) return quoteFailure(ErrorCode.NoPoolsInCache, 'no pools found in cache', { inputMint, outputMint });
    if (filtersDexes(this.filterKey) && this.passed === 0 && this.fresh > 0) {
      return quoteFailure(ErrorCode.NoPoolsInCache, FILTERED_OUT_MESSAGE, { inputMint, outputMint, candidates: this.fresh });
    }
    return quoteFailure(ErrorCode.NoValidQuotes, 'no valid quotes from cache', {
      inputMint,
      outputMint,
      pools: this.total,
      candidates: this.passed,
    });
  }

  private factsOf(id: number): PoolFacts {
    const cache = this.cache;
    return { address: cache.addressOf(id)!, dex: cache.dexAt(id) ?? 'unknown', slot: cache.slotAt(id) };
  }
}
