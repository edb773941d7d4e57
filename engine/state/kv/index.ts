/**
 * engine/state/kv: the platform's key-value state (spec 03's key space) over Redis or the
 * in-process store: key patterns and TTLs, the executor lock, the quote service's batched cache
 * writer and replica reader, and service heartbeats.
 */
export type { DependencyStatus, KvEntry, KvStore } from './kv-store.js';
export { RedisStore, type RedisStoreOptions } from './redis-store.js';
export { MemoryStore, type MemoryStoreOptions } from './memory-store.js';
export {
  ExecutorLock,
  HeartbeatStatus,
  KEY_TTL_MS,
  KeySpace,
  toJsonText,
  type ExecutorLockValue,
  type HealthValue,
  type PriceValue,
  type RouteTemplatePool,
  type RouteTemplateValue,
  type VolumeValue,
  type WalletBalanceValue,
} from './key-space.js';
export {
  QuoteCacheReader,
  QuoteCacheWriter,
  type QuoteCacheReaderStats,
  type QuoteCacheWriterOptions,
  type QuoteCacheWriterStats,
} from './quote-cache.js';
export { isRouteTemplate, prefetchOf, routeTemplateHash, routeTemplateOf, sameRouteTemplate, type RouteTemplateHop, type RouteTemplatePlan } from './route-template.js';
export { KvQuoteCache, type KvQuoteCacheOptions, type KvQuoteCacheStats } from './kv-quote-cache.js';
export { HealthHeartbeat, type HealthHeartbeatOptions } from './health-heartbeat.js';
export { openKeySpace, openKvStore, type OpenKeySpaceOptions } from './open-kv.js';
