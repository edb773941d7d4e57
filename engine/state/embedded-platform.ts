import type { Logger } from '../obs/index.js';
import type { ScannerMetrics } from '../obs/index.js';
import { migrateUp } from './db/migrations.js';
import { openDatabase } from './db/open-database.js';
import type { SqlClient } from './db/sql-client.js';
import type { KeySpace } from './kv/key-space.js';
import type { DependencyStatus } from './kv/kv-store.js';
import { openKeySpace } from './kv/open-kv.js';
import type { PlatformStateSettings } from './platform-state.js';
import { startServiceState, type ServiceState } from './service-state.js';

/**
 * The platform state inside `tidepool start` (npm start), on the embedded defaults unless URLs
 * are set: heartbeats of every service of the process at once (in-process store, or Redis), then,
 * in the background so start-up does not wait for it, the database (PGlite in a child process, or
 * PostgreSQL), its migrations and the scanner's scanner_metrics rows. A database that cannot be
 * opened (its data directory held by another process, a server down) is logged and left out: the
 * engine runs on, without its metrics rows.
 *
 * The embedded database starts `platform.databaseDelay` after the engine (default 10 s): PGlite's
 * start-up (1-3 s of CPU for an existing data directory, 5-8 s and ~700 MB for a new one, in its
 * child process) made the first aggregated quotes of a fresh engine miss their 10 ms deadline on
 * the 2-core box; after the start-up burst it costs the quote path nothing measurable.
 */

export interface EmbeddedPlatformOptions {
  settings: PlatformStateSettings & { 'platform.scannerMetricsInterval': number; 'platform.databaseDelay': number };
  /** Service names for `system:health:{service}`. */
  services: readonly string[];
  scanner: { metrics: ScannerMetrics; scannerId: string };
  logger: Logger;
  /** The compiled PGlite worker (tests). */
  pgliteWorkerFilename?: string;
  /**
   * A key space already open on these settings (the quote cache's, opened before the engine): used
   * instead of opening one, and left open by `close` (its opener closes it).
   */
  keys?: KeySpace;
}

export interface EmbeddedPlatform {
  readonly keys: KeySpace;
  /** Resolves once the database is open and migrated (undefined when it could not be). */
  readonly database: Promise<SqlClient | undefined>;
  dependencyStatus(): Promise<DependencyStatus[]>;
  close(): Promise<void>;
}

export async function startEmbeddedPlatform(options: EmbeddedPlatformOptions): Promise<EmbeddedPlatform> {
  const { settings: v, logger } = options;
  const ownsKeys = options.keys === undefined;
  const keys = options.keys ?? (await openKeySpace({ url: v['redis.url'], password: v['redis.password'], prefix: v['redis.keyPrefix'] }));
  const beats = await startServiceState({ services: options.services, keys, logger });
  let scannerState: ServiceState | undefined;
  let db: SqlClient | undefined;
  let closing = false;
  let wake: (() => void) | undefined;
  const database = (async (): Promise<SqlClient | undefined> => {
    const delay = v['database.url'] === '' ? v['platform.databaseDelay'] : 0;
    if (delay > 0) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, delay).unref();
      });
    }
    if (closing) return undefined;
    const started = performance.now();
    try {
      db = await openDatabase({
        url: v['database.url'],
        dataDir: v['database.dataDir'],
        separateProcess: true,
        ...(options.pgliteWorkerFilename === undefined ? {} : { workerFilename: options.pgliteWorkerFilename }),
      });
      await migrateUp(db);
      if (closing) return undefined;
      scannerState = await startServiceState({
        services: [],
        keys,
        db,
        scanner: { ...options.scanner, intervalMs: v['platform.scannerMetricsInterval'] },
        logger,
      });
      logger.info({ database: db.target, ms: Math.round(performance.now() - started) }, 'platform state ready: scanner_metrics rows are written');
      return db;
    } catch (err) {
      logger.warn({ err }, 'platform database not opened; running without scanner_metrics rows');
      await db?.close().catch(() => undefined);
      db = undefined;
      return undefined;
    }
  })();
  return {
    keys,
    database,
    async dependencyStatus() {
      const out = await beats.dependencyStatus();
      if (scannerState !== undefined) out.push(...(await scannerState.dependencyStatus()).filter((d) => d.name === 'postgres'));
      return out;
    },
    async close() {
      closing = true;
      wake?.();
      await database;
      await scannerState?.close();
      await beats.close();
      await db?.close();
      if (ownsKeys) await keys.store.close();
    },
  };
}
