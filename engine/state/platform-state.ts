import { openDatabase, openMigratedDatabase } from './db/open-database.js';
import type { MigrateResult } from './db/migrations.js';
import type { SqlClient } from './db/sql-client.js';
import type { DependencyStatus } from './kv/kv-store.js';
import type { KeySpace } from './kv/key-space.js';
import { openKeySpace } from './kv/open-kv.js';

/**
 * The platform's state as a service opens it from its settings: the database (migrated) and the
 * key space, each a real server when its URL is set, else the embedded default.
 */

export interface PlatformStateSettings {
  'database.url': string;
  'database.dataDir': string;
  'redis.url': string;
  'redis.password': string;
  'redis.keyPrefix': string;
}

export interface PlatformState {
  db: SqlClient;
  keys: KeySpace;
  migrations: MigrateResult;
  /** What readiness needs: each dependency, reachable or not, with its round trip. */
  dependencyStatus(): Promise<DependencyStatus[]>;
  close(): Promise<void>;
}

export function databaseOptions(v: Pick<PlatformStateSettings, 'database.url' | 'database.dataDir'>): { url: string; dataDir: string } {
  return { url: v['database.url'], dataDir: v['database.dataDir'] };
}

/** `minConnections`: database connections kept open while idle (a service whose every trade queries, the executor). */
export async function openPlatformState(v: PlatformStateSettings, options: { minConnections?: number } = {}): Promise<PlatformState> {
  const { db, migrations } = await openMigratedDatabase({ ...databaseOptions(v), ...(options.minConnections === undefined ? {} : { min: options.minConnections }) });
  let keys: KeySpace;
  try {
    keys = await openKeySpace({ url: v['redis.url'], password: v['redis.password'], prefix: v['redis.keyPrefix'] });
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
  return {
    db,
    keys,
    migrations,
    dependencyStatus: () => Promise.all([databaseStatus(db), keys.store.status()]),
    close: async () => {
      await Promise.allSettled([keys.store.close(), db.close()]);
    },
  };
}

/** The database's readiness: a `SELECT 1` round trip. */
export async function databaseStatus(db: SqlClient): Promise<DependencyStatus> {
  const started = performance.now();
  try {
    await db.ping();
    return { name: 'postgres', target: db.target, ok: true, latencyMs: performance.now() - started };
  } catch (err) {
    return { name: 'postgres', target: db.target, ok: false, error: (err as Error).message };
  }
}

export { openDatabase };
