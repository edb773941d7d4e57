import { PassThrough, Readable } from 'node:stream';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { StrategyConfigWatcher, StrategyStore, type PlannerStrategy, type StrategyConfigRow } from '../../planner/index.js';
import { createServerDatabase, type TestDatabase } from '../../state/db/testing.js';
import type { CliIo } from '../command.js';
import { runCli } from '../main.js';

/**
 * `tidepool strategies` on the real PostgreSQL, and a planner's StrategyConfigWatcher seeing what
 * the command changed (add, pause, resume, edit, remove) without a restart.
 */

const POOL = '58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2';
const TOKEN = 'So11111111111111111111111111111111111111112';
const QUOTE = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';

async function cli(argv: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (c) => (stdout += String(c)));
  err.on('data', (c) => (stderr += String(c)));
  const io: CliIo = { stdout: out, stderr: err, stdin: Readable.from([]), env };
  const code = await runCli(argv, io);
  return { code, stdout, stderr };
}

let t: TestDatabase;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  t = await createServerDatabase();
  env = { DATABASE_URL: t.url!, LOG_LEVEL: 'silent' };
});

afterAll(async () => {
  await t?.drop();
});

const gridArgs = ['strategies', 'add', 'grid', `pool=${POOL}`, `token=${TOKEN}`, 'lowerPrice=0.9', 'upperPrice=1.1', 'levels=5', 'amountPerLevel=1000000'];

describe('tidepool strategies', () => {
  it('adds a grid, lists and shows it with its orders, pauses (cancelling open orders), resumes and removes it', async () => {
    const added = await cli([...gridArgs, '--json'], env);
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    const row = JSON.parse(added.stdout) as { id: string; enabled: boolean; parameters: Record<string, unknown> };
    expect(row.enabled).toBe(true);
    expect(row.parameters).toEqual({ pool: POOL, token: TOKEN, lowerPrice: 0.9, upperPrice: 1.1, levels: 5, amountPerLevel: '1000000' });

    const db = t.db;
    await db.query("INSERT INTO grid_orders (id, strategy_id, price_level, amount, filled, status) VALUES (gen_random_uuid(), $1, 0.9, 1000000, 0, 'pending'), (gen_random_uuid(), $1, 0.95, 1000000, 400000, 'partial'), (gen_random_uuid(), $1, 1.0, 1000000, 1000000, 'filled')", [row.id]);

    const list = await cli(['strategies', 'list'], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(`${row.id}  grid`);
    expect(list.stdout).toContain('partial=1');

    const show = await cli(['strategies', 'show', row.id.slice(0, 8)], env);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain('filled 400000/1000000');

    const paused = await cli(['strategies', 'pause', row.id], env);
    expect(paused.stdout).toContain('2 open order(s) cancelled');
    const statuses = await db.query<{ status: string }>('SELECT status FROM grid_orders WHERE strategy_id = $1 ORDER BY price_level', [row.id]);
    expect(statuses.map((s) => s.status)).toEqual(['cancelled', 'cancelled', 'filled']);
    expect((await cli(['strategies', 'list'], env)).stdout).toContain('paused');

    expect((await cli(['strategies', 'resume', row.id], env)).code).toBe(0);
    expect((await cli(['strategies', 'list', '--json'], env)).stdout).toContain('"enabled": true');

    const removed = await cli(['strategies', 'remove', row.id], env);
    expect(removed.code).toBe(0);
    expect((await db.query('SELECT 1 FROM grid_orders WHERE strategy_id = $1', [row.id])).length).toBe(0);
    const gone = await cli(['strategies', 'show', row.id], env);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('TP_ERR_NOT_FOUND');
  });

  it('adds DCA and signal strategies from --params JSON', async () => {
    const dca = await cli(['strategies', 'add', 'dca', '--params', JSON.stringify({ token: TOKEN, quoteCurrency: QUOTE, pool: POOL, intervalMinutes: 60, amountPerOrder: '5000000', maxPosition: '100000000', stopLoss: 0.5 })], env);
    expect(dca.stderr).toBe('');
    expect(dca.code).toBe(0);
    const signal = await cli(['strategies', 'add', 'signal', `token=${TOKEN}`, `quoteCurrency=${QUOTE}`, `pool=${POOL}`, 'amountPerSignal=1000', 'maxPosition=5000', 'sources=trend,http', '--paused'], env);
    expect(signal.code).toBe(0);
    expect(signal.stdout).toContain('(paused)');
    const rows = await t.db.query<{ parameters: Record<string, unknown> }>("SELECT parameters FROM strategy_configs WHERE strategy_type = 'signal'");
    expect(rows[0]!.parameters['sources']).toEqual(['trend', 'http']);
  });

  it.each([
    [['levels=1'], 'levels'],
    [['levels=five'], 'levels'],
    [['amountPerLevel=1.5'], 'amountPerLevel'],
    [['upperPrice=0.8'], 'upperPrice'],
    [['pool=not-an-address'], 'pool'],
    [['amountPerLvl=10'], 'amountPerLvl'],
  ])('refuses a grid with %j, naming %s, and writes nothing', async (override, field) => {
    const before = (await t.db.query('SELECT id FROM strategy_configs')).length;
    const keys = override.map((o) => o.split('=')[0]);
    const args = [...gridArgs.filter((a) => !keys.includes(a.split('=')[0])), ...override];
    const r = await cli(args, env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('TP_ERR_CONFIG_INVALID');
    expect(r.stderr).toContain(field);
    expect((await t.db.query('SELECT id FROM strategy_configs')).length).toBe(before);
  });

  it('refuses an unknown type or action as a usage error (exit 2)', async () => {
    expect((await cli(['strategies', 'add', 'martingale'], env)).code).toBe(2);
    expect((await cli(['strategies', 'launch'], env)).code).toBe(2);
    expect((await cli(['strategies', 'pause'], env)).code).toBe(2);
  });
});

describe('StrategyConfigWatcher', () => {
  it('runs added and resumed rows and stops paused and removed ones, cancelling their open orders', async () => {
    const store = new StrategyStore(t.db);
    const built: string[] = [];
    const cancelled: string[] = [];
    let running: PlannerStrategy[] = [];
    const build = (row: StrategyConfigRow): PlannerStrategy & { cancelOpen(): Promise<number> } => {
      built.push(row.id);
      return { id: row.id, type: row.strategyType, onMarketEvent: () => [], cancelOpen: async () => (cancelled.push(row.id), 1) };
    };
    const watcher = new StrategyConfigWatcher({ store, types: ['grid'], initial: [], build, apply: (next) => (running = next) });
    await t.db.query("DELETE FROM strategy_configs WHERE strategy_type = 'grid'");
    expect(await watcher.poll()).toBe(false);

    const add = await cli([...gridArgs, '--json'], env);
    const id = (JSON.parse(add.stdout) as { id: string }).id;
    expect(await watcher.poll()).toBe(true);
    expect(running.map((s) => s.id)).toEqual([id]);
    const first = running[0];
    expect(await watcher.poll()).toBe(false); // unchanged: the same object keeps running
    expect(running[0]).toBe(first);

    await cli(['strategies', 'pause', id], env);
    expect(await watcher.poll()).toBe(true);
    expect(running).toEqual([]);
    expect(cancelled).toEqual([id]);

    await cli(['strategies', 'resume', id], env);
    expect(await watcher.poll()).toBe(true);
    expect(running.map((s) => s.id)).toEqual([id]);

    await t.db.query("UPDATE strategy_configs SET parameters = parameters || '{\"levels\": 7}'::jsonb WHERE id = $1", [id]);
    expect(await watcher.poll()).toBe(true);
    expect(built).toEqual([id, id, id]);

    await cli(['strategies', 'remove', id], env);
    expect(await watcher.poll()).toBe(true);
    expect(running).toEqual([]);
    await watcher.close();
  });

  it('keeps the running strategies when a changed row is refused, and applies it once it builds', async () => {
    const store = new StrategyStore(t.db);
    await t.db.query("DELETE FROM strategy_configs WHERE strategy_type = 'grid'");
    let refuse = true;
    let running: PlannerStrategy[] = [];
    const watcher = new StrategyConfigWatcher({
      store, types: ['grid'], initial: [],
      build: (row) => {
        if (refuse) throw new Error('refused');
        return { id: row.id, type: row.strategyType, onMarketEvent: () => [] };
      },
      apply: (next) => (running = next),
    });
    await cli(gridArgs, env);
    expect(await watcher.poll()).toBe(false);
    expect(running).toEqual([]);
    refuse = false;
    expect(await watcher.poll()).toBe(true);
    expect(running).toHaveLength(1);
    await watcher.close();
  });
});
