import { loadConfig } from '../config/index.js';
import type { Logger } from '../obs/index.js';
import type { ScannerMetrics } from '../obs/index.js';
import { migrateUp } from './db/migrations.js';
import { PgClient } from './db/pg-client.js';
import { KeySpace } from './kv/key-space.js';
import { KvQuoteCache } from './kv/kv-quote-cache.js';
import type { DependencyStatus } from './kv/kv-store.js';
import { MemoryStore } from './kv/memory-store.js';
import { RedisStore } from './kv/redis-store.js';
import { openKeySpace } from './kv/open-kv.js';
import { databaseSchema, redisSchema, scannerMetricsSchema } from './platform-config.js';
import { startServiceState, type ServiceState, type ServiceStateOptions } from './service-state.js';

/**
 * Platform state of a service of the split deployment (`tidepool scanner`, `quote-service`,
 * `aggregator`, `external-quotes`), from the environment: with REDIS_URL its
 * `system:health:{service}` heartbeat goes there; a scanner with DATABASE_URL also writes its
 * scanner_metrics rows. Without them there is nothing to share between processes, and nothing is
 * kept (no embedded database: several processes of one machine cannot share one).
 */

const schema = { ...databaseSchema, ...redisSchema, ...scannerMetricsSchema };

/**
 * The key space of a split-deployment service's `system:health:{service}` heartbeat, from the
 * environment (REDIS_URL, REDIS_PASSWORD, REDIS_KEY_PREFIX); undefined without REDIS_URL (nothing to
 * share between processes). For a service whose host writes the heartbeat (ServiceHost.heartbeatTo).
 */
export async function openSplitKeySpace(env: NodeJS.ProcessEnv): Promise<KeySpace | undefined> {
  const { values: v } = loadConfig(redisSchema, { env: { ...env, TIDEPOOL_CONFIG: '' } });
  if (v['redis.url'] === '') return undefined;
  return openKeySpace({ url: v['redis.url'], password: v['redis.password'], prefix: v['redis.keyPrefix'] });
}

export interface SplitServiceStateOptions {
  service: string;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  scanner?: { metrics: ScannerMetrics; scannerId: string };
  /** The heartbeat's status, read at every beat; default ok. */
  status?: ServiceStateOptions['status'];
  /** Write the heartbeat here (default); false: its service host writes it (openSplitKeySpace). */
  heartbeat?: boolean;
}

export async function startSplitServiceState(options: SplitServiceStateOptions): Promise<ServiceState | undefined> {
  // Environment only: the command's own config file holds the command's settings, not these.
  const { values: v } = loadConfig(schema, { env: { ...options.env, TIDEPOOL_CONFIG: '' } });
  const wantsDb = options.scanner !== undefined && v['database.url'] !== '';
  const beats = options.heartbeat !== false;
  if ((v['redis.url'] === '' || !beats) && !wantsDb) return undefined;
  const store = v['redis.url'] === '' ? new MemoryStore() : await RedisStore.connect({ url: v['redis.url'], ...(v['redis.password'] ? { password: v['redis.password'] } : {}) });
  const keys = new KeySpace(store, v['redis.keyPrefix']);
  let db: PgClient | undefined;
  try {
    if (wantsDb) {
      db = new PgClient({ url: v['database.url'], max: 2 });
      await migrateUp(db);
    }
    const state = await startServiceState({
      services: beats ? [options.service] : [],
      keys,
      ...(db === undefined ? {} : { db }),
      ...(options.scanner === undefined ? {} : { scanner: { ...options.scanner, intervalMs: v['platform.scannerMetricsInterval'] } }),
      ...(options.status === undefined ? {} : { status: options.status }),
      logger: options.logger,
    });
    return {
      ...state,
      close: async () => {
        await state.close();
        await db?.close();
        await store.close();
      },
    };
  } catch (err) {
    await db?.close().catch(() => undefined);
    await store.close();
    throw err;
  }
}

/** A quote service's shared quote cache and the store under it; `close` flushes, then closes the store. */
export interface QuoteCacheHandle {
  readonly cache: KvQuoteCache;
  /**
   * The store under the quote cache (Redis, or the in-process store), for `/ready`: reachable or
   * not, with its round trip. Quotes do not need it (a Redis down costs shared answers, never a
   * quote), so a readiness check should report it rather than fail on it.
   */
  dependencyStatus(): Promise<DependencyStatus[]>;
  close(): Promise<void>;
}

/**
 * The shared quote cache of a quote service (`tidepool quote-service`, `tidepool engine`), from the
 * environment: over Redis when REDIS_URL is set (written and read: replicas share answers), else
 * over an in-process store (written only). A Redis that cannot be reached at start is an error
 * (TP_ERR_KV_UNAVAILABLE), as for the heartbeats; once running, its failures never reach a quote.
 */
export async function openSplitQuoteCache(options: { env: NodeJS.ProcessEnv; logger: Logger }): Promise<QuoteCacheHandle> {
  const { values: v } = loadConfig(redisSchema, { env: { ...options.env, TIDEPOOL_CONFIG: '' } });
  return openQuoteCache({ url: v['redis.url'], password: v['redis.password'], prefix: v['redis.keyPrefix'], logger: options.logger });
}

/** The shared quote cache over the key space at `url` (empty: in-process). */
export async function openQuoteCache(options: { url: string; password: string; prefix: string; logger: Logger }): Promise<QuoteCacheHandle> {
  const keys = await openKeySpace({ url: options.url, password: options.password, prefix: options.prefix });
  const cache = new KvQuoteCache(keys, { logger: options.logger });
  return {
    cache,
    dependencyStatus: async () => [await keys.store.status()],
    close: async () => {
      await cache.close();
      await keys.store.close();
    },
  };
}
