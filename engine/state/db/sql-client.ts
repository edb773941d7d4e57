/**
 * The one interface the platform's state code talks to PostgreSQL through, implemented over a real
 * server (`pg`, pg-client.ts) and over the embedded PostgreSQL (PGlite, pglite-client.ts), so the
 * same migrations and queries run on both.
 *
 * Value conventions, the same on both implementations:
 * - `bigint` (int8) columns come back as JS `bigint`, never as a rounded number;
 * - `numeric` comes back as its decimal text (the repositories turn u64 amounts into bigint);
 * - `timestamp` (without time zone) holds UTC: every session runs with `TimeZone=UTC` and values
 *   are read as UTC instants; `timestamptz` is an instant as usual; both come back as `Date`;
 * - parameters: a bigint is sent as its decimal text, a Date as ISO-8601 UTC text, a plain object
 *   as JSON text (for jsonb), an array as a PostgreSQL array.
 */

/** What a query parameter may be. */
export type SqlParam = string | number | bigint | boolean | Date | null | Uint8Array | Record<string, unknown> | readonly unknown[];

/** Runs statements on one connection (a transaction, or the whole embedded database). */
export interface SqlQueryable {
  /** One statement with `$1`-style parameters; its rows. */
  query<R = Record<string, unknown>>(text: string, params?: readonly SqlParam[]): Promise<R[]>;
  /** A script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
}

export type SqlBackendKind = 'postgres' | 'pglite';

export interface SqlClient extends SqlQueryable {
  readonly kind: SqlBackendKind;
  /** Where it points, with any password removed (for logs and status output). */
  readonly target: string;
  /** Runs `fn` inside BEGIN … COMMIT on one connection; ROLLBACK and rethrow when it throws. */
  transaction<T>(fn: (tx: SqlQueryable) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` on one connection held for its whole duration (session-level advisory locks,
   * statements that must not run inside a transaction).
   */
  withConnection<T>(fn: (conn: SqlQueryable) => Promise<T>): Promise<T>;
  /** `SELECT 1`; throws TP_ERR_DB_UNAVAILABLE when the database does not answer. */
  ping(): Promise<void>;
  /** A pool (PgClient): opens the connections it keeps while idle now, not at the first queries. */
  warm?(): Promise<void>;
  /** Closes every connection. Idempotent. */
  close(): Promise<void>;
}

/** OIDs of the types whose parsing both implementations override. */
export const PgType = { INT8: 20, NUMERIC: 1700, TIMESTAMP: 1114 } as const;

/** `timestamp` without time zone text (`2026-11-09 10:11:12.345`), read as UTC. */
export function parseUtcTimestamp(text: string): Date {
  if (text === 'infinity' || text === '-infinity') return new Date(text === 'infinity' ? 8.64e15 : -8.64e15);
  return new Date(text.replace(' ', 'T') + 'Z');
}

/** Parameters as both drivers take them: bigint as decimal text, objects as JSON text. */
export function normalizeParams(params: readonly SqlParam[] | undefined): unknown[] {
  if (params === undefined) return [];
  const out = new Array<unknown>(params.length);
  for (let i = 0; i < params.length; i++) {
    const p = params[i];
    if (typeof p === 'bigint') out[i] = p.toString();
    // ISO text in UTC: a `timestamp` column drops an offset instead of applying it.
    else if (p instanceof Date) out[i] = p.toISOString();
    else if (p !== null && typeof p === 'object' && !Array.isArray(p) && !(p instanceof Uint8Array)) {
      out[i] = JSON.stringify(p, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    } else out[i] = p;
  }
  return out;
}

/** A connection URL without its password. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable database URL)';
  }
}
