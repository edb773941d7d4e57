import { cpSync, mkdtempSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ErrorCode, isTpError } from '../../errors.js';
import { migrateUp, migrationStatus, migrationsDir, MIGRATIONS_TABLE, readMigrationFiles } from './migrations.js';
import { PgClient } from './pg-client.js';
import type { SqlClient } from './sql-client.js';
import { TEST_BACKENDS, createServerDatabase, type TestDatabase } from './testing.js';

/** Spec 03's three fully specified tables: column → [type, nullable, default]. */
const SPEC_COLUMNS: Record<string, Record<string, [string, 'YES' | 'NO', string | null]>> = {
  wallets: {
    id: ['uuid', 'NO', 'gen_random_uuid()'],
    tier: ['character varying(20)', 'NO', null],
    address: ['character varying(44)', 'NO', null],
    encrypted_private_key: ['text', 'NO', null],
    expected_balance: ['jsonb', 'YES', "'{}'::jsonb"],
    actual_balance: ['jsonb', 'YES', "'{}'::jsonb"],
    last_sync: ['timestamp without time zone', 'YES', 'now()'],
    enabled: ['boolean', 'YES', 'true'],
    created_at: ['timestamp without time zone', 'YES', 'now()'],
  },
  trades: {
    id: ['uuid', 'NO', 'gen_random_uuid()'],
    strategy: ['character varying(50)', 'YES', null],
    wallet_id: ['uuid', 'YES', null],
    signature: ['character varying(88)', 'YES', null],
    expected_profit: ['bigint', 'YES', null],
    actual_profit: ['bigint', 'YES', null],
    status: ['character varying(20)', 'YES', "'pending'::character varying"],
    error_message: ['text', 'YES', null],
    created_at: ['timestamp without time zone', 'YES', 'now()'],
    confirmed_at: ['timestamp without time zone', 'YES', null],
    slot: ['bigint', 'YES', null],
    // migration 006: the strategy_configs row (TradeOpportunity.strategyId) beside spec 03's type
    strategy_id: ['character varying(64)', 'YES', null],
    // migration 007: what a real trade's transaction actually filled
    landed_input_amount: ['numeric(20,0)', 'YES', null],
    landed_output_amount: ['numeric(20,0)', 'YES', null],
    // migration 008: the transaction that last wrote the row (incremental strategy P&L)
    change_xid: ['bigint', 'YES', null],
  },
  trade_routes: {
    id: ['uuid', 'NO', 'gen_random_uuid()'],
    trade_id: ['uuid', 'YES', null],
    step: ['integer', 'YES', null],
    protocol: ['character varying(50)', 'YES', null],
    pool: ['character varying(44)', 'YES', null],
    input_mint: ['character varying(44)', 'YES', null],
    output_mint: ['character varying(44)', 'YES', null],
    input_amount: ['bigint', 'YES', null],
    output_amount: ['bigint', 'YES', null],
  },
  scanner_metrics: {
    time: ['timestamp with time zone', 'NO', null],
    scanner_id: ['character varying(50)', 'NO', null],
    events_processed: ['integer', 'YES', null],
    latency_p50: ['real', 'YES', null],
    latency_p99: ['real', 'YES', null],
    error_count: ['integer', 'YES', null],
  },
};

async function columns(db: SqlClient, table: string): Promise<Record<string, [string, string, string | null]>> {
  const rows = await db.query<{ column_name: string; type: string; is_nullable: string; column_default: string | null }>(
    `SELECT a.attname AS column_name, format_type(a.atttypid, a.atttypmod) AS type,
            CASE WHEN a.attnotnull THEN 'NO' ELSE 'YES' END AS is_nullable,
            pg_get_expr(d.adbin, d.adrelid) AS column_default
       FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
    [table],
  );
  return Object.fromEntries(rows.map((r) => [r.column_name, [r.type, r.is_nullable, r.column_default]]));
}

async function indexDefs(db: SqlClient, table: string): Promise<string[]> {
  const rows = await db.query<{ indexdef: string }>('SELECT indexdef FROM pg_indexes WHERE tablename = $1 ORDER BY indexname', [table]);
  return rows.map((r) => r.indexdef.replace(/ ON public\./, ' ON '));
}

describe.each(TEST_BACKENDS)('migrations on $name', ({ create }) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await create();
  });
  afterAll(async () => {
    await t?.drop();
  });

  it('applies every migration once; a second run is a no-op', async () => {
    const first = await migrateUp(t.db);
    expect(first.applied.map((m) => m.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(first.applied.every((m) => m.variant === 'plain')).toBe(true);
    const second = await migrateUp(t.db);
    expect(second.applied).toEqual([]);
    expect(second.skipped).toBe(8);
    const status = await migrationStatus(t.db);
    expect(status.map((s) => [s.version, s.state])).toEqual([
      [1, 'applied'],
      [2, 'applied'],
      [3, 'applied'],
      [4, 'applied'],
      [5, 'applied'],
      [6, 'applied'],
      [7, 'applied'],
      [8, 'applied'],
    ]);
    const rows = await t.db.query<{ n: bigint }>(`SELECT count(*) AS n FROM ${MIGRATIONS_TABLE}`);
    expect(rows[0]!.n).toBe(8n);
  });

  it('creates the spec 03 tables with exactly their columns, types, defaults and indexes', async () => {
    for (const [table, expected] of Object.entries(SPEC_COLUMNS)) {
      expect(await columns(t.db, table), table).toEqual(expected);
    }
    expect(await indexDefs(t.db, 'wallets')).toEqual([
      'CREATE INDEX idx_wallets_enabled ON wallets USING btree (enabled)',
      'CREATE INDEX idx_wallets_tier ON wallets USING btree (tier)',
      'CREATE UNIQUE INDEX wallets_address_key ON wallets USING btree (address)',
      'CREATE UNIQUE INDEX wallets_pkey ON wallets USING btree (id)',
    ]);
    expect(await indexDefs(t.db, 'trades')).toEqual([
      'CREATE INDEX idx_trades_created_at ON trades USING btree (created_at DESC)',
      'CREATE INDEX idx_trades_status ON trades USING btree (status)',
      'CREATE INDEX idx_trades_strategy ON trades USING btree (strategy)',
      'CREATE INDEX idx_trades_strategy_id_change_xid ON trades USING btree (strategy_id, change_xid)',
      'CREATE UNIQUE INDEX trades_pkey ON trades USING btree (id)',
      'CREATE UNIQUE INDEX trades_signature_key ON trades USING btree (signature)',
    ]);
    expect(await indexDefs(t.db, 'trade_routes')).toEqual([
      'CREATE INDEX idx_trade_routes_trade_id ON trade_routes USING btree (trade_id)',
      'CREATE UNIQUE INDEX trade_routes_pkey ON trade_routes USING btree (id)',
    ]);
    for (const table of ['wallet_transactions', 'strategy_configs', 'grid_orders', 'planner_metrics', 'executor_metrics']) {
      expect(Object.keys(await columns(t.db, table)).length, table).toBeGreaterThan(0);
    }
    expect(Object.keys(await columns(t.db, 'wallet_transactions'))).toEqual(['id', 'wallet_id', 'signature', 'amount', 'token', 'timestamp']);
    expect(Object.keys(await columns(t.db, 'strategy_configs'))).toEqual(['id', 'strategy_type', 'parameters', 'enabled', 'last_run']);
    expect(Object.keys(await columns(t.db, 'grid_orders'))).toEqual(['id', 'strategy_id', 'price_level', 'amount', 'filled', 'status', 'side']);
    expect(Object.keys(await columns(t.db, 'planner_metrics'))).toEqual(['timestamp', 'planner_id', 'opportunities_found', 'avg_profit']);
    expect(Object.keys(await columns(t.db, 'executor_metrics'))).toEqual(['timestamp', 'executor_id', 'tx_submitted', 'success_rate']);
  });

  it('keeps bigint amounts exact, timestamps in UTC, and deletes a trade with its routes', async () => {
    const max = 9_223_372_036_854_775_807n;
    const [wallet] = await t.db.query<{ id: string; created_at: Date; expected_balance: unknown }>(
      `INSERT INTO wallets (tier, address, encrypted_private_key) VALUES ('worker', $1, 'x') RETURNING id, created_at, expected_balance`,
      ['11111111111111111111111111111112'],
    );
    expect(wallet!.expected_balance).toEqual({});
    expect(Math.abs(wallet!.created_at.getTime() - Date.now())).toBeLessThan(60_000);
    const [trade] = await t.db.query<{ id: string; status: string; expected_profit: bigint }>(
      'INSERT INTO trades (strategy, wallet_id, expected_profit) VALUES ($1, $2, $3) RETURNING id, status, expected_profit',
      ['arbitrage', wallet!.id, max],
    );
    expect(trade!.status).toBe('pending');
    expect(trade!.expected_profit).toBe(max);
    await t.db.query('INSERT INTO trade_routes (trade_id, step, input_amount, output_amount) VALUES ($1, 0, $2, $3), ($1, 1, $3, $2)', [
      trade!.id,
      max - 1n,
      2n ** 53n + 1n,
    ]);
    const routes = await t.db.query<{ input_amount: bigint }>('SELECT input_amount FROM trade_routes WHERE trade_id = $1 ORDER BY step', [trade!.id]);
    expect(routes.map((r) => r.input_amount)).toEqual([max - 1n, 2n ** 53n + 1n]);
    await t.db.query('DELETE FROM trades WHERE id = $1', [trade!.id]);
    expect(await t.db.query('SELECT 1 FROM trade_routes WHERE trade_id = $1', [trade!.id])).toEqual([]);
    await expect(t.db.query(`INSERT INTO wallets (tier, address, encrypted_private_key) VALUES ('boss', 'a', 'x')`)).rejects.toMatchObject({
      code: '23514',
    });
    const at = new Date('2026-03-01T12:34:56.789Z');
    const [row] = await t.db.query<{ confirmed_at: Date }>('UPDATE trades SET confirmed_at = $1 WHERE strategy IS NULL RETURNING confirmed_at', [at]);
    expect(row).toBeUndefined();
    const [again] = await t.db.query<{ confirmed_at: Date }>(
      `INSERT INTO trades (strategy, confirmed_at) VALUES ('x', $1) RETURNING confirmed_at`,
      [at],
    );
    expect(again!.confirmed_at.toISOString()).toBe(at.toISOString());
  });

  it('refuses an applied migration whose file changed, and rolls a failing one back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tp-migrations-'));
    try {
      cpSync(migrationsDir(), dir, { recursive: true });
      writeFileSync(join(dir, '009_broken.sql'), 'CREATE TABLE tp_half_done (a int);\nSELECT no_such_function();\n');
      const err = await migrateUp(t.db, { dir }).catch((e: unknown) => e);
      expect(isTpError(err, ErrorCode.DbMigration)).toBe(true);
      expect((err as Error).message).toMatch(/009_broken\.sql failed: .*no_such_function/);
      expect(await t.db.query("SELECT to_regclass('tp_half_done')::text AS t")).toEqual([{ t: null }]);
      expect((await migrationStatus(t.db, { dir })).find((s) => s.version === 9)?.state).toBe('pending');

      rmSync(join(dir, '009_broken.sql'));
      appendFileSync(join(dir, '001_platform_tables.sql'), '\n-- edited\n');
      const changed = await migrateUp(t.db, { dir }).catch((e: unknown) => e);
      expect(isTpError(changed, ErrorCode.DbMigration)).toBe(true);
      expect((changed as Error).message).toMatch(/001_platform_tables\.sql was changed after it was applied/);
      expect((await migrationStatus(t.db, { dir }))[0]?.state).toBe('changed');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('migrations on the real server under concurrency', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createServerDatabase();
  });
  afterAll(async () => {
    await t?.drop();
  });

  it('two processes migrating at once apply each migration exactly once', async () => {
    const clients = [new PgClient({ url: t.url! }), new PgClient({ url: t.url! }), new PgClient({ url: t.url! })];
    try {
      const results = await Promise.all(clients.map((c) => migrateUp(c)));
      const applied = results.flatMap((r) => r.applied.map((m) => m.version)).sort();
      expect(applied).toEqual(readMigrationFiles().filter((f) => f.variant === 'plain').map((f) => f.version));
      const rows = await t.db.query<{ version: number }>(`SELECT version FROM ${MIGRATIONS_TABLE} ORDER BY version`);
      expect(rows.map((r) => r.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it('a database that is down is a clear TP_ERR_DB_UNAVAILABLE', async () => {
    const down = new PgClient({ url: 'postgres://postgres@127.0.0.1:1/none', connectTimeoutMs: 2000 });
    try {
      const err = await migrateUp(down).catch((e: unknown) => e);
      expect(isTpError(err, ErrorCode.DbUnavailable)).toBe(true);
      expect((err as Error).message).toMatch(/database postgres:\/\/postgres@127\.0\.0\.1:1\/none unavailable: .*ECONNREFUSED/);
      await expect(down.ping()).rejects.toMatchObject({ code: ErrorCode.DbUnavailable });
    } finally {
      await down.close();
    }
  });
});
