import pg from 'pg';

import { ErrorCode, TpError } from '../../errors.js';
import { normalizeParams, parseUtcTimestamp, PgType, redactUrl, type SqlClient, type SqlParam, type SqlQueryable } from './sql-client.js';

/**
 * SqlClient over a real PostgreSQL server with node-postgres (`pg`): a connection pool, int8 as
 * bigint and `timestamp` as UTC through per-pool type parsers (the process-wide `pg.types` are left
 * alone), every session in `TimeZone=UTC`. Connection failures become TP_ERR_DB_UNAVAILABLE with
 * the driver's message; SQL errors keep their SQLSTATE `code`.
 */

export interface PgClientOptions {
  /** `postgres://user:password@host:port/database`. */
  url: string;
  /** Pool size. Default 10. */
  max?: number;
  /**
   * Connections kept open while idle (pg-pool's `min`; default 0: an idle one closes after 10 s),
   * opened ahead of use by `warm()`: a query that finds none free waits for a new connection (a
   * server process forked, authenticated), tens of milliseconds on a loaded host.
   */
  min?: number;
  /** Connect timeout. Default 5000 ms. */
  connectTimeoutMs?: number;
  /** `application_name` seen in pg_stat_activity. Default `tidepool`. */
  applicationName?: string;
}

const pgTypes = pg.types;

const TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) => {
    if (format === undefined || format === 'text') {
      if (oid === PgType.INT8) return (text: string) => BigInt(text);
      if (oid === PgType.TIMESTAMP) return parseUtcTimestamp;
    }
    return pgTypes.getTypeParser(oid, format as 'text');
  }) as typeof pgTypes.getTypeParser,
};

/** Driver errors that mean "no usable connection", as opposed to a failing statement. */
const CONNECTION_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'EAI_AGAIN', 'EPIPE']);

export function isConnectionError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (e === null || typeof e !== 'object') return false;
  const code = typeof e.code === 'string' ? e.code : '';
  if (CONNECTION_ERROR_CODES.has(code)) return true;
  // SQLSTATE class 08 (connection exception), 28 (invalid authorization), 3D000 (no such database),
  // 57P01-57P03 (admin shutdown, crash shutdown, cannot connect now).
  if (/^(08|28)/.test(code) || code === '3D000' || /^57P0[123]$/.test(code)) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  return /timeout exceeded when trying to connect|Connection terminated|connection timeout|encountered a connection error and is not queryable/i.test(message);
}

function unavailable(target: string, err: unknown): TpError {
  return new TpError(ErrorCode.DbUnavailable, `database ${target} unavailable: ${(err as Error).message}`, {
    cause: err,
    context: { target },
  });
}

class PgConnection implements SqlQueryable {
  constructor(
    private readonly client: pg.ClientBase,
    private readonly target: string,
  ) {}

  async query<R>(text: string, params?: readonly SqlParam[]): Promise<R[]> {
    try {
      const result = await this.client.query(text, normalizeParams(params));
      return result.rows as R[];
    } catch (err) {
      throw isConnectionError(err) ? unavailable(this.target, err) : err;
    }
  }

  async exec(script: string): Promise<void> {
    try {
      await this.client.query(script);
    } catch (err) {
      throw isConnectionError(err) ? unavailable(this.target, err) : err;
    }
  }
}

export class PgClient implements SqlClient {
  readonly kind = 'postgres' as const;
  readonly target: string;
  private readonly pool: pg.Pool;
  private closed = false;

  constructor(options: PgClientOptions) {
    this.target = redactUrl(options.url);
    this.pool = new pg.Pool({
      connectionString: options.url,
      max: options.max ?? 10,
      min: Math.min(options.min ?? 0, options.max ?? 10),
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      application_name: options.applicationName ?? 'tidepool',
      options: '-c TimeZone=UTC',
      types: TYPES,
    });
    // An idle connection that breaks (server restart) must not crash the process; the next query
    // gets a fresh connection or a TP_ERR_DB_UNAVAILABLE.
    this.pool.on('error', () => undefined);
  }

  async query<R>(text: string, params?: readonly SqlParam[]): Promise<R[]> {
    try {
      const result = await this.pool.query(text, normalizeParams(params));
      return result.rows as R[];
    } catch (err) {
      throw isConnectionError(err) ? unavailable(this.target, err) : err;
    }
  }

  async exec(script: string): Promise<void> {
    await this.withConnection((c) => c.exec(script));
  }

  /** Opens the pool's `min` connections now (all at once, then idle); TP_ERR_DB_UNAVAILABLE if one cannot be. */
  async warm(): Promise<void> {
    const settled = await Promise.allSettled(Array.from({ length: this.pool.options.min ?? 0 }, () => this.pool.connect()));
    for (const r of settled) if (r.status === 'fulfilled') r.value.release();
    const failed = settled.find((r) => r.status === 'rejected');
    if (failed !== undefined) throw unavailable(this.target, failed.reason);
  }

  async transaction<T>(fn: (tx: SqlQueryable) => Promise<T>): Promise<T> {
    return this.withConnection(async (conn) => {
      await conn.exec('BEGIN');
      try {
        const out = await fn(conn);
        await conn.exec('COMMIT');
        return out;
      } catch (err) {
        await conn.exec('ROLLBACK').catch(() => undefined);
        throw err;
      }
    });
  }

  async withConnection<T>(fn: (conn: SqlQueryable) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw unavailable(this.target, err);
    }
    let broken: Error | undefined;
    // While checked out, the pool no longer listens to the connection's 'error' events: a reset
    // that arrives now (a server restart, pg_terminate_backend) would be an unhandled 'error' and
    // end the process. Listen for as long as it is held; the query in flight fails by itself with
    // TP_ERR_DB_UNAVAILABLE, and the broken connection is destroyed, not returned.
    const onError = (err: Error): void => {
      broken ??= unavailable(this.target, err);
    };
    client.on('error', onError);
    try {
      return await fn(new PgConnection(client, this.target));
    } catch (err) {
      if (err instanceof TpError && err.code === ErrorCode.DbUnavailable) broken ??= err;
      throw err;
    } finally {
      client.off('error', onError);
      // A connection that failed mid-way is destroyed rather than returned to the pool; so is one
      // that may still hold session state (advisory locks are released with it).
      client.release(broken);
    }
  }

  async ping(): Promise<void> {
    await this.query('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }
}
