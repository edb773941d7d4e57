
import { TpError } from '../../errors.js';
import { PgliteClient, type PgliteClientOptions } from './pglite-client.js';
import type { SqlParam, SqlQueryable } from './sql-client.js';
import type { ThreadReply, ThreadRequest } from './pglite-process.js';

/**
 * The embedded database's process (see pglite-process.ts): owns the PgliteClient, answers
 * requests from its parent over IPC, holds a lease (a connection of its own) while the parent
 * runs a transaction or a withConnection callback. Exits when its parent goes.
 */

const send = (reply: ThreadReply): void => {
  process.send?.(reply);
};
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
      db = await PgliteClient.open(req.options as PgliteClientOptions);
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

process.on('message', (req: ThreadRequest) => {
  handle(req).then(
    (reply) => {
      send(reply);
      if (req.kind === 'close') process.disconnect();
    },
    (err: unknown) => send(errorReply(req.id, err)),
  );
});

// The parent is gone: close the database (releasing its lock) and end.
process.on('disconnect', () => {
  void (db?.close() ?? Promise.resolve()).finally(() => process.exit(0));
});
