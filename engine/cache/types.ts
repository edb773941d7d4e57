/**
 * The pool cache's public shapes: what goes in (a pool state update), what comes out (an entry,
 * statistics) and the slot-rule outcome of an upsert.
 */
import type { DecodedPool, Dex, PoolTransferFees, SwapContext } from '../dex/index.js';

/** What `upsert` did with an update: the rows of spec 02's cache entry state table. */
export const UpsertOutcome = {
  /** absent → present: stored, `lastUpdated` = now. */
  Inserted: 'inserted',
  /** present, new slot > stored slot: entry replaced. */
  Replaced: 'replaced',
  /** present, new slot = stored slot (and no newer write version): ignored silently. */
  IgnoredEqualSlot: 'ignored_equal_slot',
  /** present, new slot < stored slot: ignored, counted; the caller logs it as stale. */
  IgnoredOlderSlot: 'ignored_older_slot',
} as const;
export type UpsertOutcome = (typeof UpsertOutcome)[keyof typeof UpsertOutcome];

/** One pool state, as the consumer builds it from a PoolStateUpdateEvent (u64 fields as bigint). */
export interface PoolStateUpdate {
  address: string;
  dex: Dex | string;
  tokenA: string;
  tokenB: string;
  reserveA: bigint;
  reserveB: bigint;
  slot: bigint;
  /**
   * The account stream's write version of the newest write this state includes, within `slot`
   * (scanner.stateSource geyser). At an equal slot, an update with a higher write version than the
   * stored one replaces it; a state without one (an RPC read: the end of its slot) is never replaced
   * by one of the same slot.
   */
  writeVersion?: bigint;
  /**
   * Optional in the event. When absent, taken from `pool` when it carries a fee (AMM numerator /
   * denominator; concentrated pools feeRate / 1,000,000), else 0 / 0 meaning "unknown: the swap
   * math uses the decoded pool's own fee".
   */
  feeNumerator?: bigint;
  feeDenominator?: bigint;
  /** The decoded pool the swap math quotes on. */
  pool?: DecodedPool;
  /** Tick / bin arrays; when absent, a replaced entry keeps its previous context. */
  context?: SwapContext;
  /**
   * The Token-2022 transfer fees of the pool's mints and the epoch they were read at (RpcPoolLoader
   * `readMints`), for quotes in the trader's amounts; when absent, a replaced entry keeps the
   * previous ones (absent on insert: transfers free).
   */
  transferFees?: PoolTransferFees;
}

/** A snapshot of one cache entry (spec 02 PoolState plus the quoting objects). */
export interface PoolEntry {
  /** Interned pool id: the index into the cache's typed arrays, valid while the entry lives. */
  id: number;
  address: string;
  dex: Dex;
  tokenA: string;
  tokenB: string;
  reserveA: bigint;
  reserveB: bigint;
  slot: bigint;
  /** Unix ms when the entry was stored. */
  lastUpdated: number;
  feeNumerator: bigint;
  feeDenominator: bigint;
  pool: DecodedPool | undefined;
  context: SwapContext | undefined;
}

/**
 * The candidates of a quote on one pair (PoolCache.candidates): a scratch the caller allocates once
 * (`PoolCache.newCandidates`) and reuses; each call overwrites it.
 */
export interface PairCandidates {
  /** `ids[0..count)`: pool ids fresh enough for the request (PoolCache.isFresh). */
  readonly ids: Uint32Array;
  count: number;
  /** Pools trading the pair, any age; 0: no cached pool trades it. */
  total: number;
  /** Unix ms (cache clock) when the newest pool left out for its age was stored; -Infinity: none. */
  newestExcluded: number;
  /** The cache clock reading every age of this call was measured at. */
  now: number;
  /** Pools left out beyond the staleness threshold (each counted once in `staleReads` by this call). */
  stale: number;
  /**
   * Cache clock time until which, while the pair's version (PoolCache.pairVersion) stays the same,
   * a call with the same `maxAgeMs` gives the same answer (the same candidates, `newestExcluded`
   * and `stale`): the first moment a candidate grows too old, or a pool left out grows stale.
   * Infinity: never, by age alone.
   */
  validUntil: number;
}

export interface PoolCacheStats {
  totalPools: number;
  freshPools: number;
  stalePools: number;
  /** Entries removed by the eviction tick. */
  evictedStale: number;
  /** Entries removed to make room past maxPoolCount (least recently updated first). */
  evictedOverCapacity: number;
  hits: number;
  misses: number;
  /** hits / (hits + misses); 0 before any quote. */
  hitRate: number;
  ignoredOlderSlot: number;
  ignoredEqualSlot: number;
  /** Lookups (`get`, `freshId`, `candidates`) that found an entry but refused it as stale. */
  staleReads: number;
}

export interface PoolCacheOptions {
  /** Spec 02 `Cache.MaxPoolCount`. */
  maxPoolCount?: number;
  /** Spec 02 `Cache.StalenessThreshold`, in ms: an entry older than this is stale. */
  stalenessThresholdMs?: number;
  /** Clock in Unix ms (tests pass a fake). */
  now?: () => number;
  /**
   * Pools first stored within this many ms of the cache's creation were there before the cache
   * (the start-up load): their first-seen time is only a lower bound of their age. Default 60 s.
   */
  startupWindowMs?: number;
}
