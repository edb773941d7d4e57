import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { Backoff } from '../../common/index.js';
import { ErrorCode, TpError } from '../../errors.js';
import { packagePath } from '../../package-files.js';
import { splitSqlStatements } from './sql-script.js';
import type { SqlClient, SqlQueryable } from './sql-client.js';

/**
 * Versioned schema migrations: plain SQL files `schemas/sql/NNN_name.sql`, applied in order by
 * `tidepool migrate up`, each recorded in `tidepool_migrations` with the SHA-256 of the file.
 *
 * - Under a session-level advisory lock: two processes starting at once apply each migration
 *   once; the second waits (up to `lockTimeoutMs`) and then finds nothing left to do.
 * - Each file runs in its own transaction with its record, so a failing file leaves no trace and
 *   the next run retries it. A file whose first line is `-- tidepool:no-transaction` runs
 *   statement by statement instead (TimescaleDB's continuous aggregates demand it).
 * - Variants: `NNN_name.timescaledb.sql` replaces `NNN_name.sql` on a server where the
 *   TimescaleDB extension is available; the variant applied is recorded.
 * - Applying twice is a no-op. An applied file that has since changed is refused
 *   (TP_ERR_DB_MIGRATION): a schema must not silently differ between two databases.
 */

export const MIGRATIONS_TABLE = 'tidepool_migrations';
/** pg_advisory_lock key of the migrator: "tidepool" in ASCII, as a positive int8. */
export const MIGRATION_LOCK_KEY = 0x7469_6465_706f_6f6cn;
const NO_TRANSACTION_MARKER = '-- tidepool:no-transaction';
const FILE_RE = /^(\d{3})_([a-z0-9_]+?)(?:\.(timescaledb))?\.sql$/;

export type MigrationVariant = 'plain' | 'timescaledb';

export interface MigrationFile {
  version: number;
  name: string;
  variant: MigrationVariant;
  file: string;
  sql: string;
  checksum: string;
  transactional: boolean;
}

export interface MigrationStatus {
  version: number;
  name: string;
  /** The variant applied, or the one `up` would apply. */
  variant: MigrationVariant;
  state: 'applied' | 'pending' | 'changed';
  appliedAt?: Date;
}

export interface MigrateOptions {
  /** Directory of the .sql files. Default: the package's schemas/sql. */
  dir?: string;
  /** How long to wait for another migrator's lock. Default 60 s. */
  lockTimeoutMs?: number;
  /** Called before each file is applied. */
  onApply?: (m: MigrationFile) => void;
}

export interface MigrateResult {
  applied: MigrationFile[];
  /** Migrations that were already applied. */
  skipped: number;
}

/** schemas/sql of the package. */
export function migrationsDir(): string {
  return packagePath('schemas', 'sql');
}

/** Every migration file of `dir`, both variants, ordered by version. */
export function readMigrationFiles(dir = migrationsDir()): MigrationFile[] {
  const out: MigrationFile[] = [];
  for (const file of readdirSync(dir).sort()) {
    const m = FILE_RE.exec(file);
    if (m === null) continue;
    const sql = readFileSync(join(dir, file), 'utf8').replace(/\r\n/g, '\n');
    out.push({
      version: Number(m[1]),
      name: m[2]!,
      variant: m[3] === 'timescaledb' ? 'timescaledb' : 'plain',
      file,
      sql,
      checksum: createHash('sha256').update(sql).digest('hex'),
      transactional: !sql.startsWith(NO_TRANSACTION_MARKER),
    });
  }
  const plain = new Map<number, string>();
  for (const f of out) {
    if (f.variant !== 'plain') continue;
    const other = plain.get(f.version);
    if (other !== undefined) throw new TpError(ErrorCode.DbMigration, `two migrations numbered ${f.version}: ${other} and ${f.file}`);
    plain.set(f.version, f.file);
  }
  for (const f of out) {
    if (f.variant !== 'plain' && !plain.has(f.version)) {
      throw new TpError(ErrorCode.DbMigration, `${f.file} has no plain variant ${String(f.version).padStart(3, '0')}_${f.name}.sql`);
    }
  }
  return out.sort((a, b) => a.version - b.version || a.variant.localeCompare(b.variant));
}

/** Whether the server can install TimescaleDB (PGlite: no). */
export async function timescaleAvailable(db: SqlQueryable): Promise<boolean> {
  const rows = await db.query<{ available: boolean }>(
    "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'timescaledb') AS available",
  );
  return rows[0]?.available === true;
}

/** The file of each version that this server would apply. */
function chooseVariants(files: readonly MigrationFile[], timescale: boolean): MigrationFile[] {
  const byVersion = new Map<number, MigrationFile>();
  for (const f of files) {
    const current = byVersion.get(f.version);
    if (current === undefined || (timescale && f.variant === 'timescaledb')) byVersion.set(f.version, f);
  }
  return [...byVersion.values()].sort((a, b) => a.version - b.version);
}

interface AppliedRow {
  version: number;
  name: string;
  variant: MigrationVariant;
  checksum: string;
  applied_at: Date;
}

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (
  version    integer PRIMARY KEY,
  name       text NOT NULL,
  variant    text NOT NULL,
  checksum   text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`;

async function readApplied(db: SqlQueryable): Promise<Map<number, AppliedRow>> {
  const exists = await db.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [MIGRATIONS_TABLE]);
  if (exists[0]?.t === null || exists[0]?.t === undefined) return new Map();
  const rows = await db.query<AppliedRow>(`SELECT version, name, variant, checksum, applied_at FROM ${MIGRATIONS_TABLE} ORDER BY version`);
  return new Map(rows.map((r) => [r.version, r]));
}

function changedError(file: MigrationFile): TpError {
  return new TpError(
    ErrorCode.DbMigration,
    `migration ${file.file} was changed after it was applied (checksum differs); write a new migration instead`,
    { context: { version: file.version, file: file.file } },
  );
}

/** What is applied and what is pending; reads only. */
export async function migrationStatus(db: SqlClient, options: Pick<MigrateOptions, 'dir'> = {}): Promise<MigrationStatus[]> {
  const files = readMigrationFiles(options.dir);
  const applied = await readApplied(db);
  const chosen = chooseVariants(files, await timescaleAvailable(db));
  const out: MigrationStatus[] = [];
  for (const f of chosen) {
    const row = applied.get(f.version);
    if (row === undefined) {
      out.push({ version: f.version, name: f.name, variant: f.variant, state: 'pending' });
      continue;
    }
    const file = files.find((x) => x.version === row.version && x.variant === row.variant);
    out.push({
      version: row.version,
      name: row.name,
      variant: row.variant,
      state: file !== undefined && file.checksum === row.checksum ? 'applied' : 'changed',
      appliedAt: row.applied_at,
    });
  }
  return out;
}

/** Applies every pending migration, under the advisory lock. See the module comment. */
export async function migrateUp(db: SqlClient, options: MigrateOptions = {}): Promise<MigrateResult> {
  const files = readMigrationFiles(options.dir);
  const lockTimeoutMs = options.lockTimeoutMs ?? 60_000;
  return db.withConnection(async (conn) => {
    await takeLock(conn, lockTimeoutMs);
    try {
      await conn.exec(CREATE_TABLE);
      const applied = await readApplied(conn);
      const chosen = chooseVariants(files, await timescaleAvailable(conn));
      for (const [version, row] of applied) {
        const file = files.find((f) => f.version === version && f.variant === row.variant);
        if (file === undefined) {
          throw new TpError(ErrorCode.DbMigration, `migration ${version} (${row.name}) is applied but its file is missing`, {
            context: { version },
          });
        }
        if (file.checksum !== row.checksum) throw changedError(file);
      }
      const result: MigrateResult = { applied: [], skipped: 0 };
      for (const file of chosen) {
        if (applied.has(file.version)) {
          result.skipped++;
          continue;
        }
        options.onApply?.(file);
        await applyOne(conn, file);
        result.applied.push(file);
      }
      return result;
    } finally {
      await conn.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    }
  });
}

async function takeLock(conn: SqlQueryable, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const backoff = Backoff.doubling(50, 1000);
  for (;;) {
    const rows = await conn.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [MIGRATION_LOCK_KEY]);
    if (rows[0]?.locked === true) return;
    if (Date.now() >= deadline) {
      throw new TpError(ErrorCode.DbMigration, `another process has been migrating this database for over ${timeoutMs} ms`);
    }
    await new Promise((r) => setTimeout(r, backoff.next()));
  }
}

async function applyOne(conn: SqlQueryable, file: MigrationFile): Promise<void> {
  const record = `INSERT INTO ${MIGRATIONS_TABLE} (version, name, variant, checksum) VALUES ($1, $2, $3, $4)`;
  const params = [file.version, file.name, file.variant, file.checksum];
  try {
    if (file.transactional) {
      await conn.exec('BEGIN');
      try {
        await conn.exec(file.sql);
        await conn.query(record, params);
        await conn.exec('COMMIT');
      } catch (err) {
        await conn.exec('ROLLBACK').catch(() => undefined);
        throw err;
      }
    } else {
      for (const statement of splitSqlStatements(file.sql)) await conn.exec(statement);
      await conn.query(record, params);
    }
  } catch (err) {
    if (err instanceof TpError) throw err;
    throw new TpError(ErrorCode.DbMigration, `migration ${file.file} failed: ${(err as Error).message}`, {
      cause: err,
      context: { version: file.version, file: file.file },
    });
  }
}
