import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ErrorCode, isTpError } from '../../errors.js';
import type { SqlQueryable } from './sql-client.js';
import { createServerDatabase, TEST_PG_ADMIN_URL, type TestDatabase } from './testing.js';

/**
 * A connection reset while a connection is checked out (a PostgreSQL restart, a failover, an
 * administrator's pg_terminate_backend) must be a TP_ERR_DB_UNAVAILABLE for the work holding it,
 * never an unhandled 'error' event that ends the process; the client goes on with new connections.
 */
describe('PgClient when the server drops a connection it holds', () => {
  let database: TestDatabase;
  let admin: pg.Client;

  beforeAll(async () => {
    database = await createServerDatabase();
    admin = new pg.Client({ connectionString: TEST_PG_ADMIN_URL });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await database?.drop();
  });

  async function terminate(pid: number): Promise<void> {
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
  }

  it('turns a reset between two queries of a held connection into TP_ERR_DB_UNAVAILABLE, and serves the next call', async () => {
    const unhandled: unknown[] = [];
    const onUncaught = (err: unknown): void => void unhandled.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      const outcome = await database.db
        .withConnection(async (conn: SqlQueryable) => {
          const pid = (await conn.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0]!.pid;
          await terminate(pid);
          // Wait for the server's FATAL to reach the client while it is held and idle.
          for (let i = 0; i < 200; i++) {
            const alive = await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid]);
            if (alive.rowCount === 0) break;
          }
          await new Promise((r) => setTimeout(r, 50));
          return conn.query('SELECT 1');
        })
        .then(
          () => 'answered',
          (err: unknown) => err,
        );
      expect(outcome, String(outcome)).toSatisfy((e: unknown) => isTpError(e, ErrorCode.DbUnavailable));
      expect(unhandled).toEqual([]);
      // The broken connection was destroyed; the next call gets a fresh one.
      expect(await database.db.query<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });

  it('rides out a reset during a transaction: rolled back, reported, nothing half written', async () => {
    await database.db.exec('CREATE TABLE IF NOT EXISTS reset_probe (n int)');
    const outcome = await database.db
      .transaction(async (tx) => {
        await tx.query('INSERT INTO reset_probe VALUES (1)');
        const pid = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0]!.pid;
        await terminate(pid);
        await tx.query('INSERT INTO reset_probe VALUES (2)');
      })
      .then(
        () => 'committed',
        (err: unknown) => err,
      );
    expect(isTpError(outcome, ErrorCode.DbUnavailable)).toBe(true);
    expect(await database.db.query('SELECT n FROM reset_probe')).toEqual([]);
  });
});
