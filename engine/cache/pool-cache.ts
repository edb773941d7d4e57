/**
 * The quote service's pool cache (spec 02 "PoolState", "Cache entry" state table): every PoolState
 * field in struct-of-arrays typed arrays indexed by an interned pool id, preallocated to
 * `maxPoolCount`. The decoded pool and its swap context live in parallel plain arrays, since the
 * swap math takes objects.
 *
 * Hot-path contract: `upsert`, `get`, `freshId`, `candidates` and the reads by id do no JSON, build
 * no closures and allocate nothing beyond what they return (`get` returns a fresh snapshot;
 * `candidates` fills the caller's scratch; Map inserts of new keys are the only internal
 * allocation). The columns are private: readers use the read API (`candidates`, `ageAt`, `slotAt`,
 * `poolAt`, `pairVersion`, ...), and freshness is decided in one place, `isFresh`.
 *
 * Single-threaded: the main thread owns the cache (docs/architecture.md §1).
 */
import { ErrorCode, TpError } from '../errors.js';
import { Dex, type DecodedPool, type PoolTransferFees, type SwapContext } from '../dex/index.js';
import { compactSwapContext, rateBound } from '../dex/index.js';
import { DexCode, dexCodeOf, dexOf } from './dex-code.js';
import { InternTable, NO_ID } from './intern-table.js';
import { PairIndex } from './pair-index.js';
import { RecencyList } from './recency-list.js';
import {
  UpsertOutcome,
  type PairCandidates,
  type PoolCacheOptions,
  type PoolCacheStats,
  type PoolEntry,
  type PoolStateUpdate,
} from './types.js';

export const DEFAULT_MAX_POOL_COUNT = 1000;
export const DEFAULT_STALENESS_THRESHOLD_MS = 30_000;
export const DEFAULT_EVICTION_INTERVAL_MS = 60_000;
export const U64_MAX = 0xffff_ffff_ffff_ffffn;
/** See PoolCacheOptions.startupWindowMs. */
export const DEFAULT_STARTUP_WINDOW_MS = 60_000;
/**
 * A pool present at start-up has a known age only once the cache has run this long (one hour, the
 * age at which the aggregator's pool-age factor is full): before, "at least N seconds" would pass
 * for "N seconds" and make every pool of a freshly started engine look new.
 */
export const STARTUP_POOL_AGE_KNOWN_AFTER_SECONDS = 3600;
/** Concentrated pools' feeRate is in millionths. */
const CL_FEE_DENOMINATOR = 1_000_000n;

export class PoolCache {
  readonly maxPoolCount: number;
  readonly stalenessThresholdMs: number;

  // PoolState fields, indexed by pool id. The quote path reads dex, mint ids, slot, lastUpdated and
  // firstSeen (candidates, ages, routes); reserves and fees are the spec 02 PoolState of `get` /
  // `entryAt`, the snapshot that tools and pool listings read.
  private readonly dex: Uint8Array;
  /** Interned mint ids (see `mintOf`). */
  private readonly tokenA: Uint32Array;
  private readonly tokenB: Uint32Array;
  private readonly reserveA: BigUint64Array;
  private readonly reserveB: BigUint64Array;
  private readonly slot: BigUint64Array;
  /** Write version of the stored state within its slot; 0 when unknown (an RPC read: its slot's end). */
  private readonly writeVersion: BigUint64Array;
  /** Unix ms (cache clock) when the entry was stored. */
  private readonly lastUpdated: Float64Array;
  private readonly feeNumerator: BigUint64Array;
  private readonly feeDenominator: BigUint64Array;
  /** The decoded pool per id, for the swap math. */
  private readonly decodedPools: (DecodedPool | undefined)[];
  /**
   * Tick / bin arrays per id, in the compact form of compact-context.ts (only initialized ticks;
   * bins without zero limit-order fields, zeros shared): the swap math reads them as the originals.
   */
  private readonly contexts: (SwapContext | undefined)[];
  /**
   * The Token-2022 transfer fees of the pool's mints per id (read with the pool: RpcPoolLoader
   * `readMints`); undefined when its transfers are free or the fees were never read. A replacement
   * without them keeps the previous ones (mint accounts, like the context, live apart from the pool).
   */
  private readonly transferFees: (PoolTransferFees | undefined)[];
  /**
   * Unix ms (cache clock) when the pool now holding each id was first stored; 0 for a free id.
   * Set on insert, kept by replacements, cleared on eviction or removal (a pool evicted and seen
   * again starts over): the pool age of the gRPC quote stream (`poolAgeSeconds`).
   */
  private readonly firstSeen: Float64Array;
  /**
   * Per id, what its pool pays per atom sold at most, selling token A (2 × id) and token B
   * (2 × id + 1): engine/dex rate-bound.ts, computed when the state is stored, so the route search
   * orders and prunes candidates without quoting them. Infinity when unknown (prunes nothing).
   */
  private readonly rateBounds: Float64Array;
  /**
   * Per id, the pair version its last change took (PairIndex: one counter, never reused), 0 for a
   * free id: equal numbers at two moments mean the same pool in the same state.
   */
  private readonly poolVersions: Float64Array;

  private readonly now: () => number;
  /** Cache-clock time of construction, and the start-up window after it (PoolCacheOptions). */
  private readonly createdAt: number;
  private readonly startupWindowMs: number;
  private readonly addresses: InternTable;
  private readonly mintTable: InternTable;
  private readonly pairs: PairIndex;
  private readonly recency: RecencyList;
  private newest = 0n;
  private readonly changeListeners: (() => void)[] = [];
  private timer: NodeJS.Timeout | undefined;

  private evictedStale = 0;
  private evictedOverCapacity = 0;
  private hits = 0;
  private misses = 0;
  private ignoredOlderSlot = 0;
  private ignoredEqualSlot = 0;
  private staleReads = 0;

  constructor(options: PoolCacheOptions = {}) {
    const max = options.maxPoolCount ?? DEFAULT_MAX_POOL_COUNT;
    const staleness = options.stalenessThresholdMs ?? DEFAULT_STALENESS_THRESHOLD_MS;
    if (!Number.isInteger(max) || max < 1) {
      throw new TpError(ErrorCode.ConfigInvalid, `maxPoolCount must be a positive integer, got ${max}`, {
        context: { setting: 'maxPoolCount', value: max },
      });
    }
    if (!Number.isFinite(staleness) || staleness < 0) {
      throw new TpError(ErrorCode.ConfigInvalid, `stalenessThresholdMs must be a finite number >= 0, got ${staleness}`, {
        context: { setting: 'stalenessThresholdMs', value: staleness },
      });
    }
    this.maxPoolCount = max;
    this.stalenessThresholdMs = staleness;
    this.now = options.now ?? Date.now;
    this.createdAt = this.now();
    this.startupWindowMs = options.startupWindowMs ?? DEFAULT_STARTUP_WINDOW_MS;
    // Each live pool references at most two mints, so 2 × pools bounds the live mints.
    const mintCapacity = 2 * max;
    this.dex = new Uint8Array(max);
    this.tokenA = new Uint32Array(max);
    this.tokenB = new Uint32Array(max);
    this.reserveA = new BigUint64Array(max);
    this.reserveB = new BigUint64Array(max);
    this.slot = new BigUint64Array(max);
    this.writeVersion = new BigUint64Array(max);
    this.lastUpdated = new Float64Array(max);
    this.firstSeen = new Float64Array(max);
    this.rateBounds = new Float64Array(2 * max).fill(Infinity);
    this.poolVersions = new Float64Array(max);
    this.feeNumerator = new BigUint64Array(max);
    this.feeDenominator = new BigUint64Array(max);
    this.decodedPools = new Array<DecodedPool | undefined>(max).fill(undefined);
    this.contexts = new Array<SwapContext | undefined>(max).fill(undefined);
    this.transferFees = new Array<PoolTransferFees | undefined>(max).fill(undefined);
    this.addresses = new InternTable(max);
    this.mintTable = new InternTable(mintCapacity);
    this.pairs = new PairIndex(max, mintCapacity);
    this.recency = new RecencyList(max);
  }

  /** Number of entries, fresh or stale. */
  get size(): number {
    return this.addresses.size;
  }

  /** The highest slot stored so far (the quote's `contextSlot`); 0n before any update. */
  get newestSlot(): bigint {
    return this.newest;
  }

  /**
   * Stores `update` under the slot rule (spec 02): absent → inserted; newer slot → replaced; equal
   * slot → ignored silently, unless both carry an account-stream write version and the update's is
   * higher (a later write of the same slot: replaced); lower slot → ignored and counted (the caller logs it as stale). Past
   * `maxPoolCount`, the least recently updated entry is evicted first and counted.
   * Throws TpError(InvalidAmount) for a reserve, slot or fee outside u64 and TpError(AccountInvalid)
   * for an unknown DEX, leaving the cache unchanged.
   *
   * `overwriteEqualSlot`: an update at the stored slot replaces the entry (outcome `replaced`): only
   * for a state read again and found to differ from the stored one at the same slot (the quote
   * service's cache validation), where the stored state is the wrong one.
   */
  upsert(update: PoolStateUpdate, overwriteEqualSlot = false): UpsertOutcome {
    const code = dexCodeOf(update.dex);
    if (code === DexCode.None) {
      throw new TpError(ErrorCode.AccountInvalid, `unknown dex ${update.dex}`, {
        context: { address: update.address, dex: update.dex },
      });
    }
    checkU64(update.reserveA, 'reserveA', update.address);
    checkU64(update.reserveB, 'reserveB', update.address);
    checkU64(update.slot, 'slot', update.address);
    if (update.writeVersion !== undefined) checkU64(update.writeVersion, 'writeVersion', update.address);
    if (update.feeNumerator !== undefined) checkU64(update.feeNumerator, 'feeNumerator', update.address);
    if (update.feeDenominator !== undefined) checkU64(update.feeDenominator, 'feeDenominator', update.address);

    let id = this.addresses.idOf(update.address);
    let outcome: UpsertOutcome;
    if (id !== NO_ID) {
      const stored = this.slot[id]!;
      // slot rule: equal slots are ignored silently (unless a newer write version of the slot, from
      // the account stream, comes over a stored one that has one); lower slots are ignored and counted.
      const storedVersion = this.writeVersion[id]!;
      const newerWrite = update.writeVersion !== undefined && storedVersion !== 0n && update.writeVersion > storedVersion;
      if (update.slot === stored && !overwriteEqualSlot && !newerWrite) {
        this.ignoredEqualSlot++;
        return UpsertOutcome.IgnoredEqualSlot;
      }
      if (update.slot < stored) {
        this.ignoredOlderSlot++;
        return UpsertOutcome.IgnoredOlderSlot;
      }
      // slot rule: a newer slot replaces the entry. Re-key the pair only if the mints changed.
      if (this.mintTable.stringOf(this.tokenA[id]!) !== update.tokenA || this.mintTable.stringOf(this.tokenB[id]!) !== update.tokenB) {
        this.pairs.remove(id);
        this.mintTable.release(this.tokenA[id]!);
        this.mintTable.release(this.tokenB[id]!);
        this.linkMints(id, update.tokenA, update.tokenB);
      }
      outcome = UpsertOutcome.Replaced;
    } else {
      // Over MaxPoolCount: evict the least recently updated pool (docs/architecture.md §3).
      if (this.addresses.size >= this.maxPoolCount) {
        this.remove(this.recency.oldest());
        this.evictedOverCapacity++;
      }
      id = this.addresses.acquire(update.address);
      this.linkMints(id, update.tokenA, update.tokenB);
      this.contexts[id] = undefined;
      this.transferFees[id] = undefined;
      outcome = UpsertOutcome.Inserted;
    }

    this.dex[id] = code;
    this.reserveA[id] = update.reserveA;
    this.reserveB[id] = update.reserveB;
    this.slot[id] = update.slot;
    this.writeVersion[id] = update.writeVersion ?? 0n;
    const now = this.now();
    this.lastUpdated[id] = now;
    if (outcome === UpsertOutcome.Inserted) this.firstSeen[id] = now;
    this.writeFee(id, update);
    this.decodedPools[id] = update.pool;
    this.rateBounds[2 * id] = update.pool === undefined ? Infinity : rateBound(update.pool, true);
    this.rateBounds[2 * id + 1] = update.pool === undefined ? Infinity : rateBound(update.pool, false);
    if (update.context !== undefined) this.contexts[id] = compactSwapContext(update.context);
    if (update.transferFees !== undefined) this.transferFees[id] = update.transferFees;
    this.recency.touch(id);
    // The pair's pools changed: memoized quotes of the pair are void.
    this.poolVersions[id] = this.pairs.touch(id);
    if (update.slot > this.newest) this.newest = update.slot;
    this.notifyChanged();
    return outcome;
  }

  /**
   * Replaces the swap context (tick / bin arrays that arrive apart from the pool account) of a
   * present entry, and its mints' transfer fees when given; does not change its slot or age. False
   * when the address is not cached.
   */
  updateContext(address: string, context: SwapContext | undefined, transferFees?: PoolTransferFees): boolean {
    const id = this.addresses.idOf(address);
    if (id === NO_ID) return false;
    this.contexts[id] = context === undefined ? undefined : compactSwapContext(context);
    if (transferFees !== undefined) this.transferFees[id] = transferFees;
    this.poolVersions[id] = this.pairs.touch(id);
    this.notifyChanged();
    return true;
  }

  /**
   * Calls `listener` synchronously after every change that moves a pair version: an insert or
   * replacement (not an ignored update), a context update, and each eviction tick or over-capacity
   * insert that removed pools. The listener must be cheap and must not write the cache: it runs
   * inside `upsert` on the hot path, so it should only flag the change and defer the work (the
   * gRPC quote stream coalesces with setImmediate, then compares the pair versions it watches).
   * Returns the function that removes the listener.
   */
  onChange(listener: () => void): () => void {
    this.changeListeners.push(listener);
    return () => {
      const i = this.changeListeners.indexOf(listener);
      if (i >= 0) this.changeListeners.splice(i, 1);
    };
  }

  /**
   * Pool age in whole seconds of live pool `id`, since `firstSeen` (cache clock); undefined for a
   * free id, and unknown (undefined) for a pool first stored in the start-up window until the cache
   * has held it STARTUP_POOL_AGE_KNOWN_AFTER_SECONDS: such a pool existed before the cache did.
   */
  poolAgeSeconds(id: number): number | undefined {
    const first = this.firstSeen[id];
    if (first === undefined || first === 0 || this.addresses.stringOf(id) === undefined) return undefined;
    const age = Math.max(0, Math.floor((this.now() - first) / 1000));
    const presentAtStart = first - this.createdAt < this.startupWindowMs;
    return presentAtStart && age < STARTUP_POOL_AGE_KNOWN_AFTER_SECONDS ? undefined : age;
  }

  /**
   * The state version of the pair of mint ids {x, y} (either order): it changes whenever a pool
   * of the pair is inserted, replaced (slot rule), given a new context, evicted or removed, and a
   * value is never reused; 0 when no pool trades the pair. Equal versions at two moments mean
   * the same pools with the same states, so a quote computed at the first still holds at the
   * second (only the ages have moved).
   */
  pairVersion(mintIdX: number, mintIdY: number): number {
    return this.pairs.versionOf(mintIdX, mintIdY);
  }

  /** The pool id of `address`, fresh or stale; NO_ID (-1) when absent. */
  idOf(address: string): number {
    return this.addresses.idOf(address);
  }

  /** The cache's clock (Unix ms): what ages and staleness are measured against. */
  nowMs(): number {
    return this.now();
  }

  /**
   * The freshness rule (spec 02 staleness), the one place it is written: a state `ageMs` old is
   * fresh when its age is at most the staleness threshold, and usable by a request when it is also
   * at most that request's `maxAgeMs`. An age equal to a limit still passes. Every reader of the
   * cache (lookups, candidates, statistics, the eviction tick, the quote memo) decides with it.
   */
  isFresh(ageMs: number, maxAgeMs: number = Infinity): boolean {
    return ageMs <= this.stalenessThresholdMs && ageMs <= maxAgeMs;
  }

  /** A scratch for `candidates`, sized for any pair of this cache; the caller keeps and reuses it. */
  newCandidates(): PairCandidates {
    return { ids: new Uint32Array(this.maxPoolCount), count: 0, total: 0, newestExcluded: -Infinity, now: 0, stale: 0, validUntil: Infinity };
  }

  /**
   * The candidates of a quote on the pair of mint ids {x, y} (either order), into `out`, without
   * allocating: the pools of the pair that are fresh and at most `maxAgeMs` old at one reading of
   * the cache's clock (`out.now`). Also says how many pools trade the pair at
   * all (`out.total`, any age: 0 means no pool) and when the newest pool left out for its age was
   * stored (`out.newestExcluded`; -Infinity when none). Pools beyond the staleness threshold are
   * counted in `staleReads` (and in `out.stale`). `out.validUntil` says how long the answer holds
   * while the pair does not change. Returns `out`.
   */
  candidates(mintIdX: number, mintIdY: number, maxAgeMs: number, out: PairCandidates): PairCandidates {
    out.count = 0;
    out.total = 0;
    out.newestExcluded = -Infinity;
    out.stale = 0;
    out.validUntil = Infinity;
    const now = this.now();
    out.now = now;
    if (mintIdX === NO_ID || mintIdY === NO_ID) return out;
    const threshold = this.stalenessThresholdMs;
    // A candidate stays one while its age is at most both limits (isFresh).
    const limit = Math.min(threshold, maxAgeMs);
    for (let id = this.pairs.first(mintIdX, mintIdY); id !== NO_ID; id = this.pairs.nextOf(id)) {
      out.total++;
      const storedAt = this.lastUpdated[id]!;
      const age = now - storedAt;
      if (!this.isFresh(age, maxAgeMs)) {
        if (!this.isFresh(age)) {
          this.staleReads++;
          out.stale++;
        } else if (storedAt + threshold < out.validUntil) {
          out.validUntil = storedAt + threshold;
        }
        if (storedAt > out.newestExcluded) out.newestExcluded = storedAt;
        continue;
      }
      if (storedAt + limit < out.validUntil) out.validUntil = storedAt + limit;
      out.ids[out.count++] = id;
    }
    return out;
  }

  /**
   * Counts `count` reads of pools beyond the staleness threshold in `staleReads`: a caller that
   * reuses a `candidates` answer while it holds (PairCandidates.validUntil) reads its stale pools
   * again, as a new call would have.
   */
  recordStaleReads(count: number): void {
    this.staleReads += count;
  }

  /**
   * At most what pool `id` pays per atom sold (token A when `aToB`, else token B) in any swap of
   * its stored state, fees included (engine/dex rate-bound.ts); Infinity when unknown.
   */
  rateBoundAt(id: number, aToB: boolean): number {
    return this.rateBounds[aToB ? 2 * id : 2 * id + 1] ?? Infinity;
  }

  /**
   * The state version of live pool `id`: it changes whenever the pool is stored again or given a
   * new context, and an id given to another pool never reads an earlier pool's number; 0 for a
   * free id. (The pool's pair takes the same number then: `pairVersion`.)
   */
  poolVersionAt(id: number): number {
    return this.poolVersions[id] ?? 0;
  }

  /** Age in ms of live pool `id` at `now` (the cache clock by default). */
  ageAt(id: number, now: number = this.now()): number {
    return now - this.lastUpdated[id]!;
  }

  /** Slot of the state of live pool `id`. */
  slotAt(id: number): bigint {
    return this.slot[id]!;
  }

  /** DEX of live pool `id`; undefined for a free id. */
  dexAt(id: number): Dex | undefined {
    return dexOf(this.dex[id]!);
  }

  /** The decoded pool of live pool `id` (what the swap math quotes on). */
  poolAt(id: number): DecodedPool | undefined {
    return this.decodedPools[id];
  }

  /** One-byte DEX code (dex-code.ts) of live pool `id`; DexCode.None for a free id. Route filters test it. */
  dexCodeAt(id: number): number {
    return this.dex[id]!;
  }

  /** The Token-2022 transfer fees of live pool `id`'s mints; undefined when its transfers are free (or unread). */
  transferFeesAt(id: number): PoolTransferFees | undefined {
    return this.transferFees[id];
  }

  /** The swap context (tick / bin arrays, compact) of live pool `id`. */
  contextAt(id: number): SwapContext | undefined {
    return this.contexts[id];
  }

  /** Token A's mint of live pool `id`. */
  tokenAAt(id: number): string | undefined {
    return this.mintTable.stringOf(this.tokenA[id]!);
  }

  /** Token B's mint of live pool `id`. */
  tokenBAt(id: number): string | undefined {
    return this.mintTable.stringOf(this.tokenB[id]!);
  }

  /**
   * The pool id of a fresh entry for `address`, allocation-free; NO_ID when absent or stale
   * (a stale entry is counted in `staleReads`).
   */
  freshId(address: string): number {
    const id = this.addresses.idOf(address);
    if (id === NO_ID) return NO_ID;
    if (!this.isFresh(this.ageAt(id))) {
      this.staleReads++;
      return NO_ID;
    }
    return id;
  }

  /**
   * A snapshot of the entry for `address`; undefined when absent or stale (spec 02: `Get` returns
   * nothing for a stale entry, counted as stale).
   */
  get(address: string): PoolEntry | undefined {
    const id = this.freshId(address);
    return id === NO_ID ? undefined : this.entryAt(id);
  }

  /** A snapshot of live entry `id` regardless of age (undefined for a free id). */
  entryAt(id: number): PoolEntry | undefined {
    const address = this.addresses.stringOf(id);
    if (address === undefined) return undefined;
    return {
      id,
      address,
      dex: dexOf(this.dex[id]!) as Dex,
      tokenA: this.mintTable.stringOf(this.tokenA[id]!)!,
      tokenB: this.mintTable.stringOf(this.tokenB[id]!)!,
      reserveA: this.reserveA[id]!,
      reserveB: this.reserveB[id]!,
      slot: this.slot[id]!,
      lastUpdated: this.lastUpdated[id]!,
      feeNumerator: this.feeNumerator[id]!,
      feeDenominator: this.feeDenominator[id]!,
      pool: this.decodedPools[id],
      context: this.contexts[id],
    };
  }

  /** The mint string of an interned mint id (as stored in `tokenA` / `tokenB`). */
  mintOf(mintId: number): string | undefined {
    return this.mintTable.stringOf(mintId);
  }

  /** The interned id of a mint, NO_ID when no cached pool trades it. */
  mintIdOf(mint: string): number {
    return this.mintTable.idOf(mint);
  }

  /** The address of live pool `id`. */
  addressOf(id: number): string | undefined {
    return this.addresses.stringOf(id);
  }

  /** Stored slot of `address` (fresh or stale), undefined when absent. */
  slotOf(address: string): bigint | undefined {
    const id = this.addresses.idOf(address);
    return id === NO_ID ? undefined : this.slot[id];
  }

  /** Age in ms of the entry for `address` (fresh or stale), undefined when absent. */
  ageMs(address: string): number | undefined {
    const id = this.addresses.idOf(address);
    return id === NO_ID ? undefined : this.ageAt(id);
  }

  /** Mints traded by cached pools (a fresh array; not for hot paths). */
  mints(): string[] {
    return this.mintTable.values();
  }

  /** Addresses of cached pools, fresh or stale (a fresh array; not for hot paths). */
  pools(): string[] {
    return this.addresses.values();
  }

  /** The eviction tick (spec 02): removes every entry older than the staleness threshold. */
  evictStale(): number {
    const now = this.now();
    let removed = 0;
    let id = this.recency.oldest();
    while (id !== NO_ID) {
      const next = this.recency.newer(id);
      if (!this.isFresh(now - this.lastUpdated[id]!)) {
        this.remove(id);
        removed++;
      }
      id = next;
    }
    this.evictedStale += removed;
    if (removed > 0) this.notifyChanged();
    return removed;
  }

  /** Runs `evictStale` every `intervalMs` (spec 02 eviction interval) on an unref'd timer. */
  startEviction(intervalMs: number = DEFAULT_EVICTION_INTERVAL_MS): void {
    this.stop();
    this.timer = setInterval(this.evictStale.bind(this), intervalMs);
    this.timer.unref();
  }

  /** Stops the eviction timer. */
  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** A quote was answered from the cache. */
  recordHit(): void {
    this.hits++;
  }

  /** The cache could not answer a quote (no pools, or none fresh). */
  recordMiss(): void {
    this.misses++;
  }

  stats(): PoolCacheStats {
    const now = this.now();
    let fresh = 0;
    for (let id = this.recency.oldest(); id !== NO_ID; id = this.recency.newer(id)) {
      if (this.isFresh(now - this.lastUpdated[id]!)) fresh++;
    }
    const total = this.addresses.size;
    const asked = this.hits + this.misses;
    return {
      totalPools: total,
      freshPools: fresh,
      stalePools: total - fresh,
      evictedStale: this.evictedStale,
      evictedOverCapacity: this.evictedOverCapacity,
      hits: this.hits,
      misses: this.misses,
      hitRate: asked === 0 ? 0 : this.hits / asked,
      ignoredOlderSlot: this.ignoredOlderSlot,
      ignoredEqualSlot: this.ignoredEqualSlot,
      staleReads: this.staleReads,
    };
  }

  private linkMints(id: number, tokenA: string, tokenB: string): void {
    // Cannot fail: live mints <= 2 × live pools <= the mint table's capacity.
    const a = this.mintTable.acquire(tokenA);
    const b = this.mintTable.acquire(tokenB);
    this.tokenA[id] = a;
    this.tokenB[id] = b;
    this.pairs.add(id, a, b);
  }

  private writeFee(id: number, update: PoolStateUpdate): void {
    // Both fee fields or neither: a lone numerator or denominator is treated as absent.
    if (update.feeNumerator !== undefined && update.feeDenominator !== undefined) {
      this.feeNumerator[id] = update.feeNumerator;
      this.feeDenominator[id] = update.feeDenominator;
      return;
    }
    // Decision (spec 02 leaves it open): absent fee fields come from the decoded pool when it has a
    // fee, else 0 / 0 = unknown.
    const pool = update.pool;
    if (pool !== undefined && pool.dex === Dex.Amm) {
      this.feeNumerator[id] = pool.feeNumerator;
      this.feeDenominator[id] = pool.feeDenominator;
    } else if (pool !== undefined && (pool.dex === Dex.Clmm || pool.dex === Dex.Whirlpool) && pool.feeRate !== undefined) {
      this.feeNumerator[id] = BigInt(pool.feeRate);
      this.feeDenominator[id] = CL_FEE_DENOMINATOR;
    } else {
      this.feeNumerator[id] = 0n;
      this.feeDenominator[id] = 0n;
    }
  }

  private remove(id: number): void {
    this.pairs.remove(id);
    this.recency.remove(id);
    this.mintTable.release(this.tokenA[id]!);
    this.mintTable.release(this.tokenB[id]!);
    this.addresses.release(id);
    this.dex[id] = DexCode.None;
    this.decodedPools[id] = undefined;
    this.contexts[id] = undefined;
    this.transferFees[id] = undefined;
    this.firstSeen[id] = 0;
    this.poolVersions[id] = 0;
  }

  private notifyChanged(): void {
    const listeners = this.changeListeners;
    for (let i = 0; i < listeners.length; i++) listeners[i]!();
  }
}

function checkU64(value: bigint, field: string, address: string): void {
  if (value < 0n || value > U64_MAX) {
    throw new TpError(ErrorCode.InvalidAmount, `${field} ${value} is outside u64`, { context: { field, value: value.toString(), address } });
  }
}
