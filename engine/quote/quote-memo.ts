/**
 * A memo of cache quotes. A cache quote is a pure function of the pair's pool states, the input,
 * the output, the mode and the amount; what time changes is only which pools are still young
 * enough to be candidates. So the memo keeps, per (input, output, mode, amount), the winning pool,
 * its swap result,
 * the response body without its per-response fields, and the pair's state version
 * (PoolCache.pairVersion, which every upsert, context update, eviction or removal touching the
 * pair changes, and never reuses).
 *
 * When an entry may answer (all checked per request, against the cache's clock now):
 * - the route version (every pair a route may use) is the one the entry holds: the same pools in
 *   the same states; or, when it moved, the entry's own pools are in their states of then and the
 *   rate bounds show no changed pool or route can take its place (CacheRouteSearch.stillBest: a
 *   check of the legs' candidates that quotes nothing), and the entry takes the new version;
 * - the winner is still a candidate: fresh and at most `maxStateAgeMs` old;
 * - no pool that was not a candidate then is one now: the newest of them (`excludedNewest`) is
 *   still too old for this request. Candidacy only depends on a pool's age, so the candidates now
 *   are a subset of the candidates then that holds the winner; the winner of a subset that holds
 *   the winner of the whole is the same pool (largest output for exact in, smallest input for
 *   exact out, ties to the lower address: a total order), with the same swap result.
 * When the route's own pools changed (under pool updates, most recomputations: a pool's own swaps
 * move it), its hops are quoted again on their new states and the same bound check decides
 * (CacheRouteSearch.requote): the answer is then the route's pools with their new amounts, and no
 * other pool is quoted. Otherwise the quote is computed again (the route search,
 * cache-route-search.ts) and the entry replaced. Candidacy is PoolCache.isFresh, the cache's one freshness rule, here as there.
 *
 * Accounting as quoteFromCache: an answer from the memo is a cache hit; a recomputation records
 * its own hit or miss. A memo answer touches only the winning pool's row, so it adds nothing to
 * the cache's `staleReads`. Failures are not memoized.
 *
 * Lookup without building a key string: a Map from the directed pair and the mode (two interned
 * mint ids and one bit, one number: an exact-out quote never answers an exact-in request of the
 * same amount) to the pair's entries, a Map from the amount's decimal text (the query's own
 * string) to the entry; each entry carries its own version. (A string key
 * `amount/input/output` in an LRU cost ~350 ns a lookup, against ~55 ns for the two Maps.)
 *
 * Bounded: at most `maxEntries` entries; at that count the memo starts over empty. A working set
 * larger than the bound would make an LRU miss on every request just the same; the bound only
 * caps memory (an entry is ~1 KB with its body). Single-threaded, like the cache.
 *
 * Entries are rewritten in place (memo-entry.ts says why): a key keeps its one MemoEntry.
 *
 * The slippage bounds depend on the request's tolerance, not on the states: they are computed per
 * answer from the entry's amounts (`slippageOf`).
 */
import { type PoolCache, NO_ID } from '../cache/index.js';
import { SwapMode } from '../dex/index.js';
import { invalidArgument } from '../errors.js';
import { CacheRouteSearch, type CacheRoute } from './cache-route-search.js';
import { QuoteSource, quoteOfAnswer, type Quote } from './quote-answer.js';
import { routeBodyParts } from './answer-json.js';
import { MemoEntry } from './memo-entry.js';
import type { QuoteFailure } from './quote-failure.js';
import type { RouteFilter } from './quote-request.js';
import { FILTER_KEY_COUNT, routeFilterKey } from './route-filter.js';
import { DEFAULT_INTERMEDIATE_MINTS } from './route-search.js';
import { DEFAULT_SLIPPAGE_BPS, slippageOf, type Slippage } from './slippage.js';

export const DEFAULT_QUOTE_MEMO_ENTRIES = 4096;

/** The memoized quotes of one directed pair, mode and filter, by amount (each with its own version). */
interface PairEntries {
  readonly byAmount: Map<string, MemoEntry>;
}

export interface QuoteMemoOptions {
  /** Entries kept at most; 0 turns the memo off (every quote is computed). Default 4096. */
  maxEntries?: number;
  /** Intermediate tokens of two-hop routes; default DEFAULT_INTERMEDIATE_MINTS (wrapped SOL, USDC). */
  intermediateMints?: readonly string[];
}

export class QuoteMemo {
  readonly maxEntries: number;
  /** Age in ms of the state of the last answer (`quote`), by the cache's clock at that answer. */
  stateAgeMs = 0;
  /** Answers given from the memo. */
  hits = 0;
  /** Answers computed (absent, or no longer valid). */
  misses = 0;
  /** Answers whose route version had moved, kept after the check that no changed route beats them. */
  revalidated = 0;
  /**
   * Answers whose own pools had changed, their hops quoted again on the new states and kept after
   * the same check (CacheRouteSearch.requote): no other pool quoted. Not counted in `misses`.
   */
  requoted = 0;
  /** The route search of recomputations, and the route versions. */
  readonly search: CacheRouteSearch;
  private readonly cache: PoolCache;
  /** By directed pair, mode and route filter (`keyOf`). */
  private readonly pairs = new Map<number, PairEntries>();
  /** Mint ids are below this (the cache's mint capacity): the stride of the directed pair key. */
  private readonly mintStride: number;
  private count = 0;
  private slotSeen = -1n;
  private slotText = '';

  constructor(cache: PoolCache, options: QuoteMemoOptions = {}) {
    const max = options.maxEntries ?? DEFAULT_QUOTE_MEMO_ENTRIES;
    if (!Number.isInteger(max) || max < 0) throw invalidArgument('maxEntries', max, `quote memo maxEntries must be an integer >= 0, got ${max}`);
    this.cache = cache;
    this.search = new CacheRouteSearch(cache, options.intermediateMints ?? DEFAULT_INTERMEDIATE_MINTS);
    this.maxEntries = max;
    // Each live pool holds at most two mints: ids stay below 2 × maxPoolCount (PoolCache).
    this.mintStride = 2 * cache.maxPoolCount;
  }

  /** Entries held (valid or not yet dropped). */
  get size(): number {
    return this.count;
  }

  /**
   * The cache quote of `amount` of `inputMint` for `outputMint`, as quoteFromCache gives it (same
   * pool, same numbers, same hit / miss accounting, same errors), from the memo when it holds a
   * valid entry. `amountText`: `amount` in decimal (leading zeros allowed), when the caller has it.
   * Sets `stateAgeMs` on success. The entry is the memo's and is rewritten by the next recomputation
   * of its key: read it at once, never change it (MemoEntry).
   */
  quote(
    inputMint: string,
    outputMint: string,
    amount: bigint,
    maxStateAgeMs: number = this.cache.stalenessThresholdMs,
    amountText?: string,
    mode: SwapMode = SwapMode.ExactIn,
    filter?: RouteFilter,
  ): MemoEntry | QuoteFailure {
    const cache = this.cache;
    return this.quoteByIds(cache.mintIdOf(inputMint), cache.mintIdOf(outputMint), inputMint, outputMint, amount, maxStateAgeMs, amountText, mode, filter);
  }

  /** The route version of (x → y) under `filter` (CacheRouteSearch.versionOf): moves when an answer may. */
  routeVersion(x: number, y: number, filter: RouteFilter | undefined): number {
    return this.search.versionOf(x, y, routeFilterKey(filter));
  }

  /**
   * `quote` for a caller that has looked up the interned mint ids already (`x` of `inputMint`, `y`
   * of `outputMint`, NO_ID when the cache does not know the mint).
   */
  quoteByIds(
    x: number,
    y: number,
    inputMint: string,
    outputMint: string,
    amount: bigint,
    maxStateAgeMs: number = this.cache.stalenessThresholdMs,
    amountText?: string,
    mode: SwapMode = SwapMode.ExactIn,
    filter?: RouteFilter,
  ): MemoEntry | QuoteFailure {
    const cache = this.cache;
    const filterKey = routeFilterKey(filter);
    if (x === NO_ID || y === NO_ID || this.maxEntries === 0) return this.compute(x, y, inputMint, outputMint, amount, mode, maxStateAgeMs, filterKey, 0, undefined, '');
    const version = this.search.versionOf(x, y, filterKey);
    const key = this.keyOf(x, y, mode, filterKey);
    let pair = this.pairs.get(key);
    const text = amountText ?? amount.toString();
    const entry = pair?.byAmount.get(text);
    const held = entry !== undefined && entry.inputMint === inputMint && entry.outputMint === outputMint;
    const moved = held && entry.version !== version && this.search.poolsMoved(entry);
    if (held && !moved && (entry.version === version || this.stillBest(entry, x, y, amount, mode, maxStateAgeMs, filterKey, version))) {
      const now = cache.nowMs();
      let age = cache.ageAt(entry.firstPool, now);
      if (entry.secondPool !== NO_ID) {
        const second = cache.ageAt(entry.secondPool, now);
        if (second > age) age = second;
      }
      // The route's pools are still candidates, and no pool left out then is one now (PoolCache.isFresh).
      if (cache.isFresh(age, maxStateAgeMs) && !cache.isFresh(now - entry.excludedNewest, maxStateAgeMs)) {
        cache.recordHit();
        this.hits++;
        this.stateAgeMs = age;
        return entry;
      }
    }
    if (moved) {
      const found = this.search.requote(entry, x, y, amount, mode, maxStateAgeMs, filterKey);
      if (found !== undefined) {
        this.requoted++;
        return this.take(entry, found, version);
      }
    }
    if (pair === undefined) {
      pair = { byAmount: new Map() };
      this.pairs.set(key, pair);
    }
    return this.compute(x, y, inputMint, outputMint, amount, mode, maxStateAgeMs, filterKey, version, pair, text);
  }

  /**
   * The slippage bounds of `entry` at `bps`, computed per answer: kept on the entry they would be
   * two bigints and two strings replaced with every recomputation, objects the scavenger promotes
   * (memo-entry.ts); made here they die young with the request.
   */
  slippageOf(entry: MemoEntry, bps: number): Slippage {
    return slippageOf(entry.mode, entry.inputAmount, entry.outputAmount, bps);
  }

  /** The cache's newest slot in decimal (the `contextSlot` field), converted once per new slot. */
  contextSlotText(): string {
    const slot = this.cache.newestSlot;
    if (slot !== this.slotSeen) {
      this.slotSeen = slot;
      this.slotText = slot.toString();
    }
    return this.slotText;
  }

  /** The /quote model of `entry` with the per-response fields of now (`stateAgeMs`, the context slot). */
  toQuote(entry: MemoEntry, stateAgeMs: number = this.stateAgeMs, slippageBps: number = DEFAULT_SLIPPAGE_BPS): Quote {
    return quoteOfAnswer({
      ok: true,
      quote: entry.route,
      source: QuoteSource.Cache,
      stateAgeMs,
      contextSlot: this.cache.newestSlot,
      slippage: this.slippageOf(entry, slippageBps),
      body: entry.body,
    });
  }

  /**
   * Whether `entry`, computed before some pair of its route version changed, is still the answer:
   * its own pools are in their states of then (same exact amounts) and no other pool's or route's
   * bound can take its place (CacheRouteSearch.stillBest, exact as the full search is). On yes the
   * entry takes the new version and the newest pool left out by the legs read.
   */
  private stillBest(entry: MemoEntry, x: number, y: number, amount: bigint, mode: SwapMode, maxStateAgeMs: number, filterKey: number, version: number): boolean {
    const excluded = this.search.stillBest(entry, x, y, amount, mode, maxStateAgeMs, filterKey);
    if (excluded === undefined) return false;
    this.revalidated++;
    entry.version = version;
    if (excluded > entry.excludedNewest) entry.excludedNewest = excluded;
    return true;
  }

  /** Drops every entry. */
  clear(): void {
    this.pairs.clear();
    this.count = 0;
  }

  /**
   * Computes the quote (CacheRouteSearch) and, with `pair`, keeps it under `text` at `version` (the
   * route version the caller read: the search changes no state, so it is the version after it too).
   */
  private compute(
    x: number,
    y: number,
    inputMint: string,
    outputMint: string,
    amount: bigint,
    mode: SwapMode,
    maxStateAgeMs: number,
    filterKey: number,
    version: number,
    pair: PairEntries | undefined,
    text: string,
  ): MemoEntry | QuoteFailure {
    this.misses++;
    // The route keeps the cache's own strings of the mints, never the request's (memo-entry.ts).
    const cache = this.cache;
    const found = this.search.search(cache.mintOf(x) ?? inputMint, cache.mintOf(y) ?? outputMint, amount, mode, maxStateAgeMs, filterKey);
    if (!found.ok) return found;
    // The key's entry is rewritten in place: from now on it answers with the new route only.
    let entry = pair?.byAmount.get(text);
    if (entry === undefined) {
      entry = new MemoEntry();
      if (pair !== undefined) {
        if (this.count >= this.maxEntries) {
          this.clear();
          this.pairs.set(this.keyOf(x, y, mode, filterKey), pair);
          pair.byAmount.clear();
        }
        pair.byAmount.set(text, entry);
        this.count++;
      }
    }
    return this.take(entry, found, version);
  }

  /** `entry` rewritten to hold `found` at route version `version`, its body too. */
  private take(entry: MemoEntry, found: CacheRoute, version: number): MemoEntry {
    this.stateAgeMs = found.ageMs;
    entry.hold(found, version);
    routeBodyParts(found.route, QuoteSource.Cache, entry.body);
    return entry;
  }

  /** The key of the directed pair (x sold, y bought) in `mode` under route filter key `filterKey`. */
  private keyOf(x: number, y: number, mode: SwapMode, filterKey: number): number {
    return ((x * this.mintStride + y) * 2 + (mode === SwapMode.ExactOut ? 1 : 0)) * FILTER_KEY_COUNT + filterKey;
  }
}
