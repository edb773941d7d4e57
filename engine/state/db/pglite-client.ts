import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

import { PGlite } from '@electric-sql/pglite';

import { ErrorCode, TpError } from '../../errors.js';
import { normalizeParams, parseUtcTimestamp, PgType, type SqlClient, type SqlParam, type SqlQueryable } from './sql-client.js';

/**
 * SqlClient over the embedded PostgreSQL: PGlite, PostgreSQL compiled to WebAssembly, in this
 * process. It is the default when no database URL is configured, so `npm start` and the CLI need
 * no server. Same SQL, same migrations, same type conventions as the real server (sql-client.ts).
 *
 * - `dataDir` keeps the database on disk between runs (wallets must survive a restart); without
 *   it the database lives in memory and goes with the process.
 * - PGlite is one connection. A data directory may be open once only: a lock file beside it
 *   (`<dataDir>.lock`, holding the pid and the process start time) refuses a second opener, in
 *   another process or another thread of this one, with TP_ERR_DB_LOCKED instead of letting two
 *   of them corrupt it; a lock left by a process that is gone is taken over.
 * - `withConnection` holds the database for its callback alone (other callers wait), which is
 *   what a dedicated connection gives on the real server.
 *
 * Cost (measured on the 2-core box, shared): opening an existing data directory takes about 1 s
 * and 160 MB of RSS; creating one (initdb) about 5-8 s and a peak near 700 MB.
 */

export interface PgliteClientOptions {
  /** Directory of the database files; absent = in memory. */
  dataDir?: string;
  /**
   * A data directory dump (`dumpDataDir()` tarball) to start from instead of running initdb: a
   * fresh database in about a third of the time (tests start one per file).
   */
  template?: Blob;
}

/** Data directories opened by this process (PGlite has no cross-instance locking of its own). */
const openDirs = new Set<string>();

/** A small FIFO mutex: withConnection's callback runs alone. */
class Gate {
  private tail: Promise<void> = Promise.resolve();

  async run<T>(fn: () => Promise<T>): Promise<T> {
    let release!: () => void;
    const next = new Promise<void>((r) => (release = r));
    const before = this.tail;
    this.tail = before.then(() => next);
    await before;
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

class DirectConnection implements SqlQueryable {
  constructor(private readonly db: PGlite) {}

  async query<R>(text: string, params?: readonly SqlParam[]): Promise<R[]> {
    const result = await this.db.query<R>(text, normalizeParams(params));
    return result.rows;
  }

  async exec(script: string): Promise<void> {
    await this.db.exec(script);
  }
}

export class PgliteClient implements SqlClient {
  readonly kind = 'pglite' as const;
  readonly target: string;
  private readonly gate = new Gate();
  private readonly direct: DirectConnection;
  private closed = false;

  private constructor(
    private readonly db: PGlite,
    private readonly lock: DataDirLock | undefined,
  ) {
    this.direct = new DirectConnection(db);
    this.target = lock === undefined ? 'embedded PostgreSQL (in memory)' : `embedded PostgreSQL (${lock.dataDir})`;
  }

  /** Opens (creating when new) the embedded database. Throws TP_ERR_DB_LOCKED, TP_ERR_DB_UNAVAILABLE. */
  static async open(options: PgliteClientOptions = {}): Promise<PgliteClient> {
    const lock = options.dataDir === undefined ? undefined : DataDirLock.acquire(resolve(options.dataDir));
    try {
      const db = await PGlite.create({
        ...(lock === undefined ? {} : { dataDir: lock.dataDir }),
        ...(options.template === undefined ? {} : { loadDataDir: options.template }),
        parsers: {
          [PgType.INT8]: (text: string) => BigInt(text),
          // As node-postgres does: numeric stays text (u64 amounts must not become floats).
          [PgType.NUMERIC]: (text: string) => text,
          [PgType.TIMESTAMP]: parseUtcTimestamp,
        },
        // Small buffers: the embedded database holds platform state, not a warehouse.
        postgresqlconf: ['shared_buffers=16MB', 'TimeZone=UTC'],
      });
      await db.exec("SET TimeZone TO 'UTC'");
      return new PgliteClient(db, lock);
    } catch (err) {
      lock?.release();
      if (err instanceof TpError) throw err;
      throw new TpError(ErrorCode.DbUnavailable, `embedded database could not start: ${(err as Error).message}`, { cause: err });
    }
  }

  async query<R>(text: string, params?: readonly SqlParam[]): Promise<R[]> {
    return this.gate.run(() => this.direct.query<R>(text, params));
  }

  async exec(script: string): Promise<void> {
    return this.gate.run(() => this.direct.exec(script));
  }

  async transaction<T>(fn: (tx: SqlQueryable) => Promise<T>): Promise<T> {
    return this.gate.run(() =>
      this.db.transaction(async (tx) =>
        fn({
          query: async <R>(text: string, params?: readonly SqlParam[]) => (await tx.query<R>(text, normalizeParams(params))).rows,
          exec: async (script: string) => {
            await tx.exec(script);
          },
        }),
      ),
    );
  }

  async withConnection<T>(fn: (conn: SqlQueryable) => Promise<T>): Promise<T> {
    return this.gate.run(() => fn(this.direct));
  }

  /** The data directory as a tarball (see `template`). */
  async dump(): Promise<Blob> {
    return this.gate.run(async () => (await this.db.dumpDataDir('none')) as Blob);
  }

  async ping(): Promise<void> {
    if (this.closed) throw new TpError(ErrorCode.DbUnavailable, `${this.target} is closed`);
    await this.query('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.gate.run(() => this.db.close());
    } finally {
      this.lock?.release();
    }
  }
}

/** `<dataDir>.lock` holding the owner's pid; see PgliteClient. */
class DataDirLock {
  private released = false;

  private constructor(
    readonly dataDir: string,
    private readonly path: string,
  ) {}

  static acquire(dataDir: string): DataDirLock {
    if (openDirs.has(dataDir)) {
      throw new TpError(ErrorCode.DbLocked, `embedded database ${dataDir} is already open in this process`, { context: { dataDir } });
    }
    mkdirSync(dirname(dataDir), { recursive: true });
    const path = `${dataDir}.lock`;
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(path, 'wx', 0o600);
        writeSync(fd, `${process.pid} ${PROCESS_STARTED_AT}\n`);
        closeSync(fd);
        openDirs.add(dataDir);
        return new DataDirLock(dataDir, path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const owner = readOwner(path);
        // Held by this very process (another thread), or by another live process. A lock with our
        // pid but another start time was left by an earlier process that had the same pid.
        const ours = owner !== undefined && owner.pid === process.pid && Math.abs(owner.startedAt - PROCESS_STARTED_AT) < 2000;
        if (owner !== undefined && (ours || (owner.pid !== process.pid && isAlive(owner.pid)))) {
          throw new TpError(
            ErrorCode.DbLocked,
            `embedded database ${dataDir} is in use by process ${owner.pid}${ours ? ' (this one)' : ''}; stop it, or point DATABASE_URL at a PostgreSQL server to share the state`,
            { context: { dataDir, pid: owner.pid } },
          );
        }
        // Left by a process that is gone: take it over.
        try {
          unlinkSync(path);
        } catch {
          // Someone else took it over first; the next attempt sees their lock.
        }
      }
    }
    throw new TpError(ErrorCode.DbLocked, `embedded database ${dataDir}: could not take its lock ${path}`, { context: { dataDir } });
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    openDirs.delete(this.dataDir);
    try {
      const owner = readOwner(this.path);
      if (owner?.pid === process.pid && owner.startedAt === PROCESS_STARTED_AT) unlinkSync(this.path);
    } catch {
      // Already gone.
    }
  }
}

/** When this process started, ms since the epoch (tells our lock from an earlier process with the same pid). */
const PROCESS_STARTED_AT = Math.round(Date.now() - process.uptime() * 1000);

function readOwner(path: string): { pid: number; startedAt: number } | undefined {
  try {
    const [pidText, startedText] = readFileSync(path, 'utf8').trim().split(/\s+/);
    const pid = Number.parseInt(pidText ?? '', 10);
    const startedAt = Number.parseInt(startedText ?? '0', 10);
    return Number.isSafeInteger(pid) && pid > 0 ? { pid, startedAt: Number.isSafeInteger(startedAt) ? startedAt : 0 } : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
