import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

import { ErrorCode, TpError, type ErrorCode as ErrorCodeType } from '../../errors.js';
import type { PgliteClientOptions } from './pglite-client.js';
import type { SqlClient, SqlParam, SqlQueryable } from './sql-client.js';

/**
 * SqlClient over the embedded PostgreSQL running on a worker thread of its own. PGlite executes
 * WebAssembly synchronously: on the main thread every statement would stall the event loop for
 * its duration (about 190 ms at most while it opens, milliseconds per statement after, measured
 * on the 2-core box), and in `npm start` the main thread serves quotes. Here it only posts
 * messages. Rows cross by structured clone (bigint and Date survive); errors keep their SQLSTATE
 * `code`, and TpErrors their code and context.
 */

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export type ThreadRequest =
  | { id: number; kind: 'open' }
  | { id: number; kind: 'query'; text: string; params: readonly SqlParam[] | undefined; lease?: number }
  | { id: number; kind: 'exec'; script: string; lease?: number }
  | { id: number; kind: 'lease' }
  | { id: number; kind: 'release'; lease: number }
  | { id: number; kind: 'close' };

export type ThreadReply =
  | { id: number; ok: true; rows?: unknown[]; target?: string; lease?: number }
  | { id: number; ok: false; error: { message: string; code: string | undefined; tp: boolean; context: unknown } };

export const DEFAULT_PGLITE_WORKER = fileURLToPath(new URL('./pglite-worker.js', import.meta.url));

type Pending = { resolve: (r: ThreadReply & { ok: true }) => void; reject: (err: Error) => void };

export class PgliteThreadClient implements SqlClient {
  readonly kind = 'pglite' as const;
  target = 'embedded PostgreSQL (thread)';
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;
  private exited: Error | undefined;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (reply: ThreadReply) => {
      const p = this.pending.get(reply.id);
      if (p === undefined) return;
      this.pending.delete(reply.id);
      if (reply.ok) p.resolve(reply);
      else p.reject(toError(reply.error));
    });
    const fail = (err: Error): void => {
      this.exited = err;
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    worker.on('error', (err) => fail(new TpError(ErrorCode.DbUnavailable, `embedded database thread failed: ${err.message}`, { cause: err })));
    worker.on('exit', (code) => fail(new TpError(ErrorCode.DbUnavailable, `embedded database thread exited (${code})`)));
  }

  /** Starts the thread and opens the database in it. `workerFilename` defaults to the compiled worker beside this module. */
  static async open(options: PgliteClientOptions & { workerFilename?: string } = {}): Promise<PgliteThreadClient> {
    const { workerFilename, ...clientOptions } = options;
    const worker = new Worker(workerFilename ?? DEFAULT_PGLITE_WORKER, { workerData: clientOptions });
    const client = new PgliteThreadClient(worker);
    try {
      const reply = await client.request({ kind: 'open' });
      client.target = reply.target ?? client.target;
      return client;
    } catch (err) {
      await worker.terminate();
      throw err;
    }
  }

  private request(req: DistributiveOmit<ThreadRequest, 'id'>): Promise<ThreadReply & { ok: true }> {
    if (this.exited !== undefined) return Promise.reject(this.exited);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...req, id } as ThreadRequest);
    });
  }

  private queryable(lease?: number): SqlQueryable {
    return {
      query: async <R>(text: string, params?: readonly SqlParam[]) =>
        ((await this.request({ kind: 'query', text, params, ...(lease === undefined ? {} : { lease }) })).rows ?? []) as R[],
      exec: async (script: string) => {
        await this.request({ kind: 'exec', script, ...(lease === undefined ? {} : { lease }) });
      },
    };
  }

  query<R>(text: string, params?: readonly SqlParam[]): Promise<R[]> {
    return this.queryable().query<R>(text, params);
  }

  exec(script: string): Promise<void> {
    return this.queryable().exec(script);
  }

  async withConnection<T>(fn: (conn: SqlQueryable) => Promise<T>): Promise<T> {
    const { lease } = await this.request({ kind: 'lease' });
    try {
      return await fn(this.queryable(lease!));
    } finally {
      await this.request({ kind: 'release', lease: lease! }).catch(() => undefined);
    }
  }

  transaction<T>(fn: (tx: SqlQueryable) => Promise<T>): Promise<T> {
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

  async ping(): Promise<void> {
    await this.query('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      if (this.exited === undefined) await this.request({ kind: 'close' });
    } finally {
      await this.worker.terminate();
    }
  }
}

function toError(e: { message: string; code: string | undefined; tp: boolean; context: unknown }): Error {
  if (e.tp && e.code !== undefined) {
    return new TpError(e.code as ErrorCodeType, e.message, { context: (e.context ?? {}) as Record<string, unknown> });
  }
  const err = new Error(e.message) as Error & { code?: string };
  if (e.code !== undefined) err.code = e.code;
  return err;
}
