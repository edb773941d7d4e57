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
import { quoteSwap, SwapMode } from '../dex/index.js';
import { ErrorCode } from '../errors.js';
import type { RouteQuote } from './quote-answer.js';
import { quoteFailure, type QuoteFailure } from './quote-failure.js';
import { FILTER_KEY_COUNT, allowsDexCode, allowsMultiHop, filtersDexes } from './route-filter.js';
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

/** A leg's best hop, kept while its pair's version stands (see CacheRouteSearch, leg memo). */
interface LegEntry {
  readonly hop: HopChoice<number>;
  /** When the newest pool of the leg's pair left out for its age was stored; -Infinity: none. */
  readonly excludedNewest: number;
}

/** The leg entries of one directed pair, mode and filter, valid at one version of the pair. */
interface LegSlot {
  version: number;
  readonly byAmount: Map<bigint, LegEntry>;
}

/** Leg entries kept at most; at the bound the leg memo starts over empty. */
export const DEFAULT_LEG_MEMO_ENTRIES = 16_384;

/** What NoPoolsInCache says when the route filter, not the cache, left no pool. */
export const FILTERED_OUT_MESSAGE = 'no route: no pool of the pair passes the route filter (dexes / excludeDexes)';

export class CacheRouteSearch implements HopFinder<number> {
  readonly intermediates: readonly string[];
  private readonly cache: PoolCache;
  private readonly scratch: PairCandidates;
  /**
   * Leg memo: the best hop of a leg (directed pair, mode, filter, amount), valid while the pair's
   * version stands and under the quote memo's age conditions (the hop's pool still a candidate, no
   * pool left out then a candidate now: quote-memo.ts). A route's version moves with any of its
   * five pairs, but a recomputation then reprices only the legs whose pair moved (or whose amount
   * did): the other legs come from here. First legs are shared by every route from the same input
   * and amount through the same intermediate.
   */
  private readonly legs = new Map<number, LegSlot>();
  private legCount = 0;
  private readonly maxLegEntries: number;
  private readonly legStride: number;
  private readonly pairStride: number;
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

  constructor(cache: PoolCache, intermediates: readonly string[], maxLegEntries = DEFAULT_LEG_MEMO_ENTRIES) {
    this.cache = cache;
    this.scratch = cache.newCandidates();
    this.intermediates = intermediates;
    this.maxLegEntries = maxLegEntries;
    // Mint ids stay below 2 × maxPoolCount (PoolCache); mode 1 bit, filter key 5 bits.
    this.pairStride = 2 * cache.maxPoolCount;
    this.legStride = 2 * FILTER_KEY_COUNT;
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
    const legKey = (x * this.pairStride + y) * this.legStride + (mode === SwapMode.ExactOut ? FILTER_KEY_COUNT : 0) + this.filterKey;
    const version = cache.pairVersion(x, y);
    let slot = this.legs.get(legKey);
    if (slot !== undefined && slot.version !== version) {
      this.legCount -= slot.byAmount.size;
      slot.byAmount.clear();
      slot.version = version;
    }
    const kept = slot?.byAmount.get(amount);
    if (kept !== undefined) {
      const now = cache.nowMs();
      if (cache.isFresh(cache.ageAt(kept.hop.pool, now), this.maxAgeMs) && !cache.isFresh(now - kept.excludedNewest, this.maxAgeMs)) {
        if (kept.excludedNewest > this.newestExcluded) this.newestExcluded = kept.excludedNewest;
        this.now = now;
        this.fresh++;
        this.passed++;
        return kept.hop;
      }
    }
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
    if (best === undefined) return undefined;
    const hop: HopChoice<number> = { pool: bestId, swap: best, inputMint, outputMint };
    if (this.maxLegEntries > 0) {
      if (this.legCount >= this.maxLegEntries) {
        this.legs.clear();
        this.legCount = 0;
        slot = undefined;
      }
      if (slot === undefined) {
        slot = { version, byAmount: new Map() };
        this.legs.set(legKey, slot);
      }
      if (!slot.byAmount.has(amount)) this.legCount++;
      slot.byAmount.set(amount, { hop, excludedNewest: candidates.newestExcluded });
    }
    return hop;
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
