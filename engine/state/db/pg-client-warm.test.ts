import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PgClient } from './pg-client.js';
import { createServerDatabase, TEST_PG_ADMIN_URL, type TestDatabase } from './testing.js';

/**
 * A pool with `min`: `warm()` opens that many connections before any query, so the first queries
 * (an executor's first trades) do not each wait for a server process to be forked (issue 23).
 */
describe('PgClient warm', () => {
  let database: TestDatabase;
  let admin: pg.Client;
  const clients: PgClient[] = [];

  beforeAll(async () => {
    database = await createServerDatabase();
    admin = new pg.Client({ connectionString: TEST_PG_ADMIN_URL });
    await admin.connect();
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await admin?.end();
    await database?.drop();
  });

  async function backends(applicationName: string): Promise<number> {
    const r = await admin.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1', [applicationName]);
    return Number(r.rows[0]!.n);
  }

  it('opens `min` connections before any query, and they serve the queries that follow', async () => {
    const db = new PgClient({ url: database.url!, max: 6, min: 4, applicationName: 'tp-warm-test' });
    clients.push(db);
    expect(await backends('tp-warm-test')).toBe(0);
    await db.warm();
    expect(await backends('tp-warm-test')).toBe(4);
    const pids = await Promise.all(Array.from({ length: 4 }, () => db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, pg_sleep(0.05)')));
    expect(new Set(pids.map((r) => r[0]!.pid)).size).toBe(4);
    expect(await backends('tp-warm-test')).toBe(4);
  });

  it('opens none without `min`, and never more than `max`', async () => {
    const none = new PgClient({ url: database.url!, applicationName: 'tp-warm-none' });
    const capped = new PgClient({ url: database.url!, max: 2, min: 5, applicationName: 'tp-warm-capped' });
    clients.push(none, capped);
    await Promise.all([none.warm(), capped.warm()]);
    expect(await backends('tp-warm-none')).toBe(0);
    expect(await backends('tp-warm-capped')).toBe(2);
  });
});
