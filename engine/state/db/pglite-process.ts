import { fork, type ChildProcess } from 'node:child_process';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';

import { ErrorCode, TpError, type ErrorCode as ErrorCodeType, type ErrorContextOf } from '../../errors.js';
import type { PgliteClientOptions } from './pglite-client.js';
import type { SqlClient, SqlParam, SqlQueryable } from './sql-client.js';

/**
 * SqlClient over the embedded PostgreSQL running in a child process of its own. PGlite executes
 * WebAssembly synchronously: in this process every statement would stall the event loop for its
 * duration (up to ~190 ms while it opens, milliseconds per statement after, measured on the 2-core
 * box), and in `npm start` this process serves quotes. In a child, at a lower CPU priority
 * (nice 10), its start-up (initdb needs ~700 MB at its peak) neither takes this process's memory
 * nor competes first for the cores. Messages use the advanced serialization (bigint and Date
 * survive); errors keep their SQLSTATE `code`, and TpErrors their code and context. The child
 * exits with its parent.
 */

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export type ThreadRequest =
  | { id: number; kind: 'open'; options: unknown }
  | { id: number; kind: 'query'; text: string; params: readonly SqlParam[] | undefined; lease?: number }
  | { id: number; kind: 'exec'; script: string; lease?: number }
  | { id: number; kind: 'lease' }
  | { id: number; kind: 'release'; lease: number }
  | { id: number; kind: 'close' };

export type ThreadReply =
  | { id: number; ok: true; rows?: unknown[]; target?: string; lease?: number }
  | { id: number; ok: false; error: { message: string; code: string | undefined; tp: boolean; context: unknown } };

export const DEFAULT_PGLITE_CHILD = fileURLToPath(new URL('./pglite-child.js', import.meta.url));
/** The child's CPU priority (nice): the engine's work goes first. */
const CHILD_NICE = 10;

type Pending = { resolve: (r: ThreadReply & { ok: true }) => void; reject: (err: Error) => void };

export class PgliteProcessClient implements SqlClient {
  readonly kind = 'pglite' as const;
  target = 'embedded PostgreSQL (child process)';
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;
  private exited: Error | undefined;

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (reply: ThreadReply) => {
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
    child.on('error', (err) => fail(new TpError(ErrorCode.DbUnavailable, `embedded database process failed: ${err.message}`, { cause: err })));
    child.on('exit', (code, signal) => fail(new TpError(ErrorCode.DbUnavailable, `embedded database process exited (${signal ?? code})`)));
  }

  /** Starts the child and opens the database in it. `workerFilename` defaults to the compiled child module beside this one. */
  static async open(options: PgliteClientOptions & { workerFilename?: string } = {}): Promise<PgliteProcessClient> {
    const { workerFilename, ...clientOptions } = options;
    const child = fork(workerFilename ?? DEFAULT_PGLITE_CHILD, [], { serialization: 'advanced', stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    try {
      if (child.pid !== undefined) setPriority(child.pid, CHILD_NICE);
    } catch {
      // Not allowed here: it runs at our priority.
    }
    const client = new PgliteProcessClient(child);
    try {
      const reply = await client.request({ kind: 'open', options: clientOptions });
      client.target = reply.target ?? client.target;
      return client;
    } catch (err) {
      child.kill();
      throw err;
    }
  }

  private request(req: DistributiveOmit<ThreadRequest, 'id'>): Promise<ThreadReply & { ok: true }> {
    if (this.exited !== undefined) return Promise.reject(this.exited);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ ...req, id } as ThreadRequest, (err) => {
        if (err === null || !this.pending.has(id)) return;
        this.pending.delete(id);
        reject(new TpError(ErrorCode.DbUnavailable, `embedded database process unreachable: ${err.message}`, { cause: err }));
      });
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
    if (this.exited !== undefined) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    try {
      await this.request({ kind: 'close' });
      await exited;
    } catch {
      this.child.kill();
    }
  }
}

function toError(e: { message: string; code: string | undefined; tp: boolean; context: unknown }): Error {
  if (e.tp && e.code !== undefined) {
    // The child's TpError, rebuilt: its context was typed where the child built it.
    return new TpError(e.code as ErrorCodeType, e.message, e.context === undefined || e.context === null ? {} : { context: e.context as ErrorContextOf<ErrorCodeType> });
  }
  const err = new Error(e.message) as Error & { code?: string };
  if (e.code !== undefined) err.code = e.code;
  return err;
}
