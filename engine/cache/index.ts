/**
 * engine/cache: the quote service's typed-array pool cache (spec 02). What the rest of the engine
 * may use: `PoolCache` (slot rule, staleness, eviction tick, over-capacity eviction, pair index,
 * statistics) and its shapes.
 */
export {
  DEFAULT_EVICTION_INTERVAL_MS,
  DEFAULT_MAX_POOL_COUNT,
  DEFAULT_STALENESS_THRESHOLD_MS,
  PoolCache,
  U64_MAX,
} from './pool-cache.js';
export { NO_ID } from './intern-table.js';
export { DexCode, dexCodeOf, dexOf } from './dex-code.js';
export {
  UpsertOutcome,
  type PairCandidates,
  type PoolCacheOptions,
  type PoolCacheStats,
  type PoolEntry,
  type PoolStateUpdate,
} from './types.js';
export { CachePoolStateSink } from './cache-sink.js';
export { poolStateOfLoaded } from './loaded-pool-state.js';
