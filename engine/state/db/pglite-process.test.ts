import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ErrorCode } from '../../errors.js';
import { migrateUp } from './migrations.js';
import { PgliteClient } from './pglite-client.js';
import { PgliteProcessClient } from './pglite-process.js';

/** The embedded database in a child process (its module runs from dist/: npm run build). */
const WORKER = resolve(import.meta.dirname, '../../../dist/engine/state/db/pglite-child.js');

let dir: string;
let db: PgliteProcessClient;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tp-pglite-process-'));
  db = await PgliteProcessClient.open({ dataDir: join(dir, 'pglite'), workerFilename: WORKER });
});

afterAll(async () => {
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('PgliteProcessClient', () => {
  it('migrates and queries in its process: bigint and timestamps cross exactly, SQLSTATE codes survive', async () => {
    expect((await migrateUp(db)).applied.map((m) => m.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect((await migrateUp(db)).applied).toEqual([]);
    const [row] = await db.query<{ p: bigint; t: Date }>(
      "INSERT INTO trades (strategy, expected_profit, created_at) VALUES ('x', $1, $2) RETURNING expected_profit AS p, created_at AS t",
      [9_223_372_036_854_775_807n, new Date('2026-01-02T03:04:05.678Z')],
    );
    expect(row).toEqual({ p: 9_223_372_036_854_775_807n, t: new Date('2026-01-02T03:04:05.678Z') });
    await expect(db.query("INSERT INTO wallets (tier, address, encrypted_private_key) VALUES ('boss', 'a', 'x')")).rejects.toMatchObject({ code: '23514' });
  });

  it('runs a transaction alone and rolls it back when it throws', async () => {
    const failing = db.transaction(async (tx) => {
      await tx.query("INSERT INTO trades (strategy) VALUES ('rolled-back')");
      throw new Error('boom');
    });
    const outside = db.query<{ n: bigint }>("SELECT count(*) AS n FROM trades WHERE strategy = 'rolled-back'");
    await expect(failing).rejects.toThrow('boom');
    expect((await outside)[0]!.n).toBe(0n);
    expect((await db.query<{ n: bigint }>("SELECT count(*) AS n FROM trades WHERE strategy = 'rolled-back'"))[0]!.n).toBe(0n);
  });

  it('refuses to open its data directory a second time, from this process or another', async () => {
    await expect(PgliteClient.open({ dataDir: join(dir, 'pglite') })).rejects.toMatchObject({ code: ErrorCode.DbLocked });
    await expect(PgliteProcessClient.open({ dataDir: join(dir, 'pglite'), workerFilename: WORKER })).rejects.toMatchObject({ code: ErrorCode.DbLocked });
  });
});
