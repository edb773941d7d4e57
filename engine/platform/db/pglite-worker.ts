import { parentPort, workerData } from 'node:worker_threads';

import { TpError } from '../../errors.js';
import { PgliteClient, type PgliteClientOptions } from './pglite-client.js';
import type { SqlParam, SqlQueryable } from './sql-client.js';
import type { ThreadReply, ThreadRequest } from './pglite-thread.js';

/**
 * The embedded database's thread (see pglite-thread.ts): owns the PgliteClient, answers one
 * request at a time in arrival order, holds a lease (a connection of its own) while the main
 * thread runs a transaction or a withConnection callback.
 */

const port = parentPort!;
const leases = new Map<number, { conn: SqlQueryable; release: () => void }>();
let nextLease = 1;
let db: PgliteClient | undefined;

function errorReply(id: number, err: unknown): ThreadReply {
  const e = err as { message?: string; code?: unknown; name?: string; context?: unknown };
  return {
    id,
    ok: false,
    error: {
      message: String(e?.message ?? err),
      code: typeof e?.code === 'string' ? e.code : undefined,
      tp: err instanceof TpError,
      context: err instanceof TpError ? err.context : undefined,
    },
  };
}

async function handle(req: ThreadRequest): Promise<ThreadReply> {
  switch (req.kind) {
    case 'open':
      db = await PgliteClient.open(workerData as PgliteClientOptions);
      return { id: req.id, ok: true, target: db.target };
    case 'query': {
      const conn = req.lease === undefined ? db! : leases.get(req.lease)!.conn;
      return { id: req.id, ok: true, rows: await conn.query(req.text, req.params as SqlParam[]) };
    }
    case 'exec': {
      const conn = req.lease === undefined ? db! : leases.get(req.lease)!.conn;
      await conn.exec(req.script);
      return { id: req.id, ok: true };
    }
    case 'lease': {
      const lease = nextLease++;
      // Resolves once the connection is ours; it stays ours until 'release'.
      await new Promise<void>((acquired) => {
        void db!.withConnection(
          (conn) =>
            new Promise<void>((release) => {
              leases.set(lease, { conn, release });
              acquired();
            }),
        );
      });
      return { id: req.id, ok: true, lease };
    }
    case 'release':
      leases.get(req.lease)?.release();
      leases.delete(req.lease);
      return { id: req.id, ok: true };
    case 'close':
      for (const l of leases.values()) l.release();
      leases.clear();
      await db?.close();
      return { id: req.id, ok: true };
  }
}

port.on('message', (req: ThreadRequest) => {
  handle(req).then(
    (reply) => port.postMessage(reply),
    (err: unknown) => port.postMessage(errorReply(req.id, err)),
  );
});
