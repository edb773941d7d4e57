import { PassThrough, Readable } from 'node:stream';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TradeStore, tradeIdOf } from '../../executor/trade-store.js';
import type { RouteHop } from '../../messages/index.js';
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

  it('shows and lists a grid\'s realized P&L from its trades, and the side of its orders', async () => {
    const id = (JSON.parse((await cli([...gridArgs, '--json'], env)).stdout) as { id: string }).id;
    const trades = new TradeStore(t.db);
    const paper = async (n: number, inputMint: string, inputAmount: bigint, outputMint: string, outputAmount: bigint): Promise<void> => {
      const opportunityId = `33333333-0000-4000-8000-${String(n).padStart(12, '0')}`;
      const hop: RouteHop = { step: 0, pool: POOL, dex: 'dexa_amm', inputMint, outputMint, inputAmount, outputAmount, fee: 0n, feeMint: inputMint, priceImpact: 0, slot: 1n };
      await trades.insertPaper({ id: tradeIdOf(opportunityId), opportunityId, executorId: 'cli-test', strategy: 'grid', strategyId: id, walletId: null, path: 'direct', profitMint: QUOTE, expectedProfit: 0n, tip: 0n, route: [hop], actualProfit: 0n, fees: 5_000n, slot: 1n });
    };
    // Buys 1,000,000 tokens (TOKEN) for 950,000 quote atoms, sells them for 1,010,000: 60,000 realized.
    await paper(1, QUOTE, 950_000n, TOKEN, 1_000_000n);
    await paper(2, TOKEN, 1_000_000n, QUOTE, 1_010_000n);
    await t.db.query("INSERT INTO grid_orders (strategy_id, side, price_level, amount, filled, status) VALUES ($1, 'buy', 0.95, 1000000, 1000000, 'filled')", [id]);
    const show = await cli(['strategies', 'show', id], env);
    expect(show.stdout).toContain(`pnl 60000 (${QUOTE}) position 0 cost 0 fills 2 fees 10000`);
    expect(show.stdout).toMatch(/buy {2}filled {4}price 0\.95/);
    expect((await cli(['strategies', 'list'], env)).stdout).toContain(`${id}  grid      enabled  -  pnl 60000 fills 2`);
    const json = JSON.parse((await cli(['strategies', 'show', id, '--json'], env)).stdout) as { pnl: Record<string, unknown> };
    expect(json.pnl).toMatchObject({ realizedPnl: '60000', position: '0', fills: 2, fees: '10000', mint: QUOTE });
    await cli(['strategies', 'remove', id], env);
  });

  it('edits a parameter; an invalid edit names the field and changes nothing', async () => {
    const id = (JSON.parse((await cli([...gridArgs, '--json'], env)).stdout) as { id: string }).id;
    const params = async (): Promise<Record<string, unknown>> => (await t.db.query<{ parameters: Record<string, unknown> }>('SELECT parameters FROM strategy_configs WHERE id = $1', [id]))[0]!.parameters;
    const edited = await cli(['strategies', 'edit', id.slice(0, 8), 'levels=7', 'slippageBps=30'], env);
    expect(edited.stderr).toBe('');
    expect(edited.code).toBe(0);
    expect(edited.stdout).toContain(`edited grid strategy ${id}`);
    expect(await params()).toEqual({ pool: POOL, token: TOKEN, lowerPrice: 0.9, upperPrice: 1.1, levels: 7, amountPerLevel: '1000000', slippageBps: 30 });
    expect((await cli(['strategies', 'edit', id, '--params', '{"slippageBps": null}'], env)).code).toBe(0);
    expect(await params()).not.toHaveProperty('slippageBps');

    const before = await params();
    for (const [change, field] of [['levels=1', 'levels'], ['upperPrice=0.5', 'upperPrice'], ['amountPerLevel=-3', 'amountPerLevel'], ['levelz=3', 'levelz']] as const) {
      const refused = await cli(['strategies', 'edit', id, change], env);
      expect(refused.code, change).toBe(1);
      expect(refused.stderr).toContain('TP_ERR_CONFIG_INVALID');
      expect(refused.stderr).toContain(field);
      expect(await params()).toEqual(before);
    }
    expect((await cli(['strategies', 'edit', id], env)).code).toBe(2);
    expect((await cli(['strategies', 'edit', id, 'levels=4', '--params', '{}'], env)).code).toBe(2);
    await cli(['strategies', 'remove', id], env);
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
    const builtParams: Record<string, unknown>[] = [];
    const build = (row: StrategyConfigRow): PlannerStrategy & { cancelOpen(): Promise<number> } => {
      built.push(row.id);
      builtParams.push(row.parameters);
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

    expect((await cli(['strategies', 'edit', id, 'levels=7'], env)).code).toBe(0);
    expect(await watcher.poll()).toBe(true);
    expect(built).toEqual([id, id, id]);
    expect(builtParams.at(-1)).toMatchObject({ levels: 7 });

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
