import { join } from 'node:path';

import { migrateUp, type MigrateResult } from './migrations.js';
import { PgClient } from './pg-client.js';
import { PgliteClient } from './pglite-client.js';
import { PgliteProcessClient } from './pglite-process.js';
import type { SqlClient } from './sql-client.js';

/**
 * Opens the platform's database: the PostgreSQL server at `url` when one is configured, otherwise
 * the embedded PostgreSQL (PGlite) in `<dataDir>/pglite` (or in memory for `dataDir: 'memory'`).
 */

export interface OpenDatabaseOptions {
  /** `database.url`; empty or absent = embedded. */
  url?: string;
  /** `database.dataDir`. Default `.tidepool`. */
  dataDir?: string;
  /** Pool size on a real server. */
  max?: number;
  /** Connections kept open while idle on a real server (PgClientOptions.min). */
  min?: number;
  connectTimeoutMs?: number;
  /**
   * Run the embedded database in a child process of its own (PgliteProcessClient), so its
   * WebAssembly never stalls this process's event loop; what `npm start` does.
   */
  separateProcess?: boolean;
  /** The compiled child module (tests run from sources). */
  workerFilename?: string;
}

export async function openDatabase(options: OpenDatabaseOptions = {}): Promise<SqlClient> {
  if (options.url !== undefined && options.url !== '') {
    return new PgClient({
      url: options.url,
      ...(options.max === undefined ? {} : { max: options.max }),
      ...(options.min === undefined ? {} : { min: options.min }),
      ...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
    });
  }
  const dir = options.dataDir ?? '.tidepool';
  const where = dir === 'memory' ? {} : { dataDir: join(dir, 'pglite') };
  if (options.separateProcess === true) {
    return PgliteProcessClient.open({ ...where, ...(options.workerFilename === undefined ? {} : { workerFilename: options.workerFilename }) });
  }
  return PgliteClient.open(where);
}

/** Opens the database and brings its schema up to date (what every service does at start). */
export async function openMigratedDatabase(options: OpenDatabaseOptions = {}): Promise<{ db: SqlClient; migrations: MigrateResult }> {
  const db = await openDatabase(options);
  try {
    const migrations = await migrateUp(db);
    return { db, migrations };
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
}
