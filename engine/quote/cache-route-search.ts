/**
 * The cache path's route search: route-search.ts `chooseRoute` over the pools of the cache (read
 * only through its read API: `candidates` into one reused scratch, reads by id), filtered by the
 * request's route filter (route-filter.ts), each hop quoted with the exact swap math on the decoded
 * pool, its context and its mints' Token-2022 transfer fees.
 *
 * It also answers what the quote memo and the gRPC stream need to know when an answer may change:
 * `versionOf`, one number that moves whenever any pool of any pair a route may use changes (the
 * direct pair, and with two-hop routes allowed both legs through every intermediate token).
 *
 * Allocation: one scratch per search object; a recomputation allocates the chosen hops and the
 * route, never a pool list. Single-threaded, like the cache.
 */
import type { PairCandidates, PoolCache } from '../cache/index.js';
import { NO_ID } from '../cache/index.js';
import { quoteSwap, type SwapMode } from '../dex/index.js';
import { ErrorCode } from '../errors.js';
import type { RouteQuote } from './quote-answer.js';
import { quoteFailure, type QuoteFailure } from './quote-failure.js';
import { allowsDexCode, allowsMultiHop, filtersDexes } from './route-filter.js';
import { betterSwap, chooseRoute, routeQuoteOf, sameSwap, type HopChoice, type HopFinder, type PoolFacts } from './route-search.js';

/** A route found in the cache. */
export interface CacheRoute {
  readonly ok: true;
  readonly route: RouteQuote;
  /** The cache ids of the route's pools, in hop order (valid while the versions stand). */
  readonly poolIds: readonly number[];
  /** Age in ms of the oldest state the route used, at the search's clock reading. */
  readonly ageMs: number;
  /** When the newest pool left out for its age (any leg read) was stored; -Infinity: none. */
  readonly excludedNewest: number;
}

/** What NoPoolsInCache says when the route filter, not the cache, left no pool. */
export const FILTERED_OUT_MESSAGE = 'no route: no pool of the pair passes the route filter (dexes / excludeDexes)';

export class CacheRouteSearch implements HopFinder<number> {
  readonly intermediates: readonly string[];
  private readonly cache: PoolCache;
  private readonly scratch: PairCandidates;
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

  constructor(cache: PoolCache, intermediates: readonly string[]) {
    this.cache = cache;
    this.scratch = cache.newCandidates();
    this.intermediates = intermediates;
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
    this.maxAgeMs = maxAgeMs;
    this.filterKey = filterKey;
    this.newestExcluded = -Infinity;
    this.now = cache.nowMs();
    this.fresh = 0;
    this.passed = 0;
    this.total = 0;
    const chosen = chooseRoute(this, inputMint, outputMint, amount, mode, this.intermediates, allowsMultiHop(filterKey));
    if (chosen === undefined) {
      cache.recordMiss();
      return this.failure(inputMint, outputMint);
    }
    cache.recordHit();
    const poolIds = chosen.map((hop) => hop.pool);
    let ageMs = 0;
    for (const id of poolIds) {
      const age = cache.ageAt(id, this.now);
      if (age > ageMs) ageMs = age;
    }
    const route = routeQuoteOf(mode, chosen, (id) => this.factsOf(id));
    return { ok: true, route, poolIds, ageMs, excludedNewest: this.newestExcluded };
  }

  /** HopFinder: the best fresh, allowed pool of one leg (ties to the lower address). */
  best(inputMint: string, outputMint: string, amount: bigint, mode: SwapMode): HopChoice<number> | undefined {
    const cache = this.cache;
    const x = cache.mintIdOf(inputMint);
    if (x === NO_ID) return undefined;
    const y = cache.mintIdOf(outputMint);
    if (y === NO_ID) return undefined;
    const candidates = cache.candidates(x, y, this.maxAgeMs, this.scratch);
    if (candidates.newestExcluded > this.newestExcluded) this.newestExcluded = candidates.newestExcluded;
    this.now = candidates.now;
    this.fresh += candidates.count;
    this.total += candidates.total;
    const key = this.filterKey;
    let bestId = NO_ID;
    let best;
    for (let i = 0; i < candidates.count; i++) {
      const id = candidates.ids[i]!;
      if (!allowsDexCode(key, cache.dexCodeAt(id))) continue;
      this.passed++;
      const pool = cache.poolAt(id);
      if (pool === undefined) continue;
      let aToB: boolean;
      if (inputMint === pool.tokenA && outputMint === pool.tokenB) aToB = true;
      else if (inputMint === pool.tokenB && outputMint === pool.tokenA) aToB = false;
      else continue;
      const result = quoteSwap(pool, { aToB, mode, amount }, cache.contextAt(id), cache.transferFeesAt(id));
      if (!result.ok) continue;
      if (best === undefined || betterSwap(result, best, mode) || (sameSwap(result, best, mode) && cache.addressOf(id)! < cache.addressOf(bestId)!)) {
        best = result;
        bestId = id;
      }
    }
    return best === undefined ? undefined : { pool: bestId, swap: best, inputMint, outputMint };
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
