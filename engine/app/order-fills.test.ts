import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../config/loader.js';
import { createLogger } from '../obs/logger.js';
import { priceOf, StrategyStore, type DcaState } from '../planner/index.js';
import type { LoadedPool } from '../pools/index.js';
import { openMigratedDatabase, type SqlClient } from '../state/index.js';
import { decodeExecutionResult, executionResultFilter, decodeTradeOpportunity, deterministicUuid, encodeMarketEvent, marketEventSubject, type ExecutionResult, type MarketEvent, type TradeOpportunity } from '../messages/index.js';
import { openPriceGap, type SimPoolView } from '../sim/index.js';
import type { Simulator } from '../sim/simulator.js';
import { createExecutorApp, executorSchema, type ExecutorApp } from './executor-app.js';
import { createPlannerApp, plannerSchema, type PlannerApp } from './planner-app.js';
import { confirmedOn } from './testing/executor.js';
import { PlatformFixture } from './testing/platform-fixture.js';
import { eventually } from './testing.js';

/**
 * The whole order path on real services: a paper executor and a planner (grid, DCA) in this
 * process, the simulator, the local NATS JetStream and a PostgreSQL database.
 *
 *   market event ─▶ planner ─▶ trade.opportunities ─▶ paper executor ─▶ execution.orders
 *     ─▶ planner's execution consumer ─▶ grid_orders rows / the DCA position
 *
 * A level fills, re-arms, partially fills and expires; a DCA position is the fills, stops at its
 * max position and exits with exactly what it holds. Nothing is reconciled by hand: a planner
 * that stopped reading the results leaves the rows pending and the position empty, and every
 * wait below times out.
 */

const logger = createLogger({ name: 'order-fills-test', level: process.env.TEST_LOG ?? 'silent' });
const fx = new PlatformFixture();
let sim: Simulator;
let nc: NatsConnection;
let prefix: string;
let db: SqlClient;
let planner: PlannerApp;
let executor: ExecutorApp;
let gridPool: SimPoolView;
let dcaPool: SimPoolView;
let shortPool: SimPoolView;
let cappedPool: SimPoolView;
let gridId: string;
let dcaId: string;
let shortGridId: string;
let cappedDcaId: string;
const opportunities = new Map<string, TradeOpportunity>();
const results = new Map<string, ExecutionResult>();

/** The message with `id` once the test's own subscription has it. */
const seen = <T>(from: Map<string, T>, id: string): Promise<T> => eventually(() => from.get(id), 10_000, `message ${id}`);

beforeAll(async () => {
  ({ sim } = await fx.runningSimulator(40));
  ({ nc, prefix } = await fx.bus('OF'));
  fx.collect(`${prefix}trade.opportunities.>`, decodeTradeOpportunity, (op) => opportunities.set(op.id, op));
  fx.collect(executionResultFilter(prefix), decodeExecutionResult, (r) => results.set(r.opportunityId, r));
  const database = await fx.database();
  db = fx.closing((await openMigratedDatabase({ url: database.url! })).db, 'the test\'s database client');
  const plain = sim.chain.pools().filter((p) => p.transferFees === undefined);
  gridPool = plain.find((p) => p.dex === 'dexa_amm')!;
  dcaPool = plain.find((p) => p.dex === 'dexc_whirlpool')!;
  shortPool = plain.find((p) => p.dex === 'dexa_clmm')!;
  cappedPool = plain.find((p) => p.dex === 'dexb_dlmm')!;
  const common = fx.serviceFlags();
  await addStrategies();
  executor = fx.closing(await createExecutorApp(loadConfig(executorSchema, { env: { PAPER_TRADING: 'true' }, flags: { ...common, 'executor-id': 'fills-executor' } }), { logger }), 'the executor');
  await executor.start();
  planner = fx.closing(
    await createPlannerApp(loadConfig(plannerSchema, { env: {}, flags: { ...common, strategy: 'grid,dca', 'planner-id': 'fills-planner', 'strategy-reload-interval': '200' } }), {
      logger,
      pools: [gridPool.address, dcaPool.address, shortPool.address, cappedPool.address],
      retryDelayMs: 20,
    }),
    'the planner',
  );
  await planner.start();
}, 60_000);

afterAll(() => fx.close());

/** The pool's price of its token A (quote: token B atoms per token A atom), as the planner computes it. */
function priceNow(pool: SimPoolView): number {
  return priceOf({ pool: sim.chain.pool(pool.address)!.pool } as LoadedPool, pool.pool.tokenA)!;
}

/** Moves the pool's price by `bps` with a real swap and waits for it to be confirmed. */
async function move(pool: SimPoolView, bps: number): Promise<void> {
  const { signature } = openPriceGap(sim.chain, { pool: pool.address, gapBps: Math.abs(bps), direction: bps > 0 ? 'up' : 'down' });
  await confirmedOn(sim.chain, signature);
}

/** Announces `pool` (every 100 ms at most) until `probe` gives a value: a strategy whose next step waits for time to pass. */
function announcingUntil<T>(pool: SimPoolView, probe: () => Promise<T | undefined>, what: string): Promise<T> {
  let last = 0;
  return eventually(async () => {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() - last >= 100) {
      last = Date.now();
      await announce(pool);
    }
    return undefined;
  }, 20_000, what);
}

let seq = 0;
/** Publishes a pool_update of `pool` as the market scanner does. */
async function announce(pool: SimPoolView): Promise<void> {
  seq++;
  const event: MarketEvent = { version: 1, id: `${pool.address}:${seq}:fills`, type: 'pool_update', protocol: pool.dex, poolAddress: pool.address, tokenA: pool.pool.tokenA, tokenB: pool.pool.tokenB, timestamp: Date.now(), slot: sim.chain.slot('confirmed').toString(), data: {} };
  await nc.jetstream().publish(marketEventSubject(pool.dex, 'pool_update', prefix), encodeMarketEvent(event), { msgID: event.id });
}

interface GridRow {
  id: string;
  price_level: number;
  amount: string;
  filled: string;
  status: string;
}

async function gridRow(id: string): Promise<GridRow | undefined> {
  const rows = await db.query<GridRow>('SELECT id, price_level, amount::text, filled::text, status FROM grid_orders WHERE id = $1', [id]);
  return rows[0];
}

/** Waits for grid order `id` to reach `status`. */
function gridOrderReaches(id: string, status: string, what: string): Promise<GridRow> {
  return eventually(async () => {
    const row = await gridRow(id);
    return row?.status === status ? row : undefined;
  }, 20_000, what);
}

async function addStrategies(): Promise<void> {
  const p = priceNow(gridPool);
  const q = priceNow(dcaPool);
  const store = new StrategyStore(db);
  // Points at 0.985, 0.995, 1.005 of the price: level 0 buys at 0.985 and sells at 0.995, level 1
  // buys at 0.995 and sells at 1.005. At the price itself only level 0's sell triggers.
  const amountPerLevel = BigInt(Math.ceil(10_000_000 / p)).toString();
  gridId = (await store.insert('grid', { pool: gridPool.address, token: gridPool.pool.tokenA, lowerPrice: p * 0.985, upperPrice: p * 1.005, levels: 3, amountPerLevel, orderTtlMs: 600_000 })).id;
  // A level that buys at (a hair above) the price itself: the pool's fee and impact give fewer
  // tokens than the level's amount, a partial fill; its order lives 3 s.
  const s = priceNow(shortPool);
  shortGridId = (await store.insert('grid', { pool: shortPool.address, token: shortPool.pool.tokenA, lowerPrice: s * 1.00001, upperPrice: s * 1.02, levels: 2, amountPerLevel: '1000000000', orderTtlMs: 3_000 })).id;
  // A DCA buying about 10,000,000 tokens every 300 ms, capped at 15,000,000: one buy, then max_position.
  const c = priceNow(cappedPool);
  cappedDcaId = (await store.insert('dca', { pool: cappedPool.address, token: cappedPool.pool.tokenA, quoteCurrency: cappedPool.pool.tokenB, intervalMinutes: 0.005, amountPerOrder: BigInt(Math.ceil(10_000_000 * c)).toString(), maxPosition: '15000000' })).id;
  dcaId = (await store.insert('dca', { pool: dcaPool.address, token: dcaPool.pool.tokenA, quoteCurrency: dcaPool.pool.tokenB, intervalMinutes: 600, amountPerOrder: BigInt(Math.ceil(10_000_000 * q)).toString(), maxPosition: '1000000000000000', takeProfit: q * 1.01 })).id;
}

const gridOrderId = (level: number, side: 'buy' | 'sell', round: number): string => deterministicUuid(`grid:${gridId}:${level}:${side}:${round}`);

describe('grid and DCA orders, executor to planner over the bus', () => {
  it('a grid level fills from the paper executor\'s result, and the fill re-arms the opposite side', async () => {
    const p0 = priceNow(gridPool);
    const amount = (await db.query<{ parameters: { amountPerLevel: string } }>('SELECT parameters FROM strategy_configs WHERE id = $1', [gridId]))[0]!.parameters.amountPerLevel;

    // 1. At the price: level 0 sells (its sell price, 0.995 of it, is below), fills, is `filled`.
    await announce(gridPool);
    const sell0 = await gridOrderReaches(gridOrderId(0, 'sell', 0), 'filled', 'level 0\'s sell filled');
    expect(sell0.filled).toBe(amount);
    expect(await seen(results, sell0.id)).toMatchObject({ status: 'paper', strategyId: gridId, filledInput: BigInt(amount) });

    // 2. Three per cent down: both buys trigger; the executor fills them (more tokens than the
    //    level's amount at a price below the level), each row `filled` at its amount.
    await move(gridPool, -300);
    expect(priceNow(gridPool)).toBeLessThan(p0 * 0.985);
    await announce(gridPool);
    const buy0 = await gridOrderReaches(gridOrderId(0, 'buy', 1), 'filled', 'level 0\'s buy filled');
    expect(buy0.filled).toBe(amount);
    expect((await seen(results, buy0.id)).filledOutput).toBeGreaterThanOrEqual(BigInt(amount));
    await gridOrderReaches(gridOrderId(1, 'buy', 0), 'filled', 'level 1\'s buy filled');

    // 3. Back up above level 0's sell price: that buy's fill re-armed the sell, which triggers
    //    again (round 2) and fills. Without the fill the level would stay sell-filled for ever.
    await move(gridPool, 300);
    expect(priceNow(gridPool)).toBeGreaterThanOrEqual(p0 * 0.995);
    await announce(gridPool);
    const again = await gridOrderReaches(gridOrderId(0, 'sell', 2), 'filled', 'level 0\'s sell re-armed and filled');
    expect(again.filled).toBe(amount);
    const statuses = await db.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM grid_orders WHERE strategy_id = $1 GROUP BY status', [gridId]);
    expect(statuses).toEqual([{ status: 'filled', n: 4 }]);
    // The executor's requests beside the results are not the planner's: none is dead-lettered.
    expect((await (await nc.jetstreamManager()).streams.info(`${prefix}DEAD_LETTERS`)).state.messages).toBe(0);
  });

  it('a level the pool fills short of its amount is partial at what was filled, then expires', async () => {
    const id = deterministicUuid(`grid:${shortGridId}:0:buy:0`);
    await announce(shortPool);
    const partial = await gridOrderReaches(id, 'partial', 'the level\'s buy partially filled');
    const result = await seen(results, id);
    expect(result.filledOutput).toBeGreaterThan(0n);
    expect(result.filledOutput).toBeLessThan(BigInt(partial.amount));
    expect(partial.filled).toBe(result.filledOutput!.toString());
    // its 3 s pass: the next event sweeps it to expired, keeping what it filled
    const expired = await announcingUntil(shortPool, async () => {
      const row = await gridRow(id);
      return row?.status === 'expired' ? row : undefined;
    }, 'the partial order expired');
    expect(expired.filled).toBe(partial.filled);
  });

  it('a DCA run stops at its max position, counted from the buy the executor filled', async () => {
    const state = async (): Promise<DcaState | null> => planner.state.keys.getStrategyState<DcaState>(cappedDcaId);
    await announce(cappedPool);
    const bought = await eventually(async () => {
      const s = await state();
      return s !== null && s.position !== '0' ? s : undefined;
    }, 20_000, 'the capped DCA\'s first fill');
    const buy = await seen(results, bought.decisions.find((d) => d.action === 'buy')!.opportunityId!);
    expect(bought.position).toBe(buy.filledOutput!.toString());
    // the next intervals: the position plus another buy would pass 15,000,000
    const capped = await announcingUntil(cappedPool, async () => {
      const s = await state();
      return s?.decisions.some((d) => d.reason === 'max_position') === true ? s : undefined;
    }, 'a max_position decision');
    expect(capped.decisions.filter((d) => d.action === 'buy')).toHaveLength(1);
    expect(capped.position).toBe(buy.filledOutput!.toString());
  });

  it('a DCA buy becomes the position the executor filled, and its take profit sells exactly that position', async () => {
    const state = async (): Promise<DcaState> => (await planner.state.keys.getStrategyState<DcaState>(dcaId))!;

    // 1. The first event decides interval 0: a buy; its fill is the position.
    await announce(dcaPool);
    const bought = await eventually(async () => {
      const s = await planner.state.keys.getStrategyState<DcaState>(dcaId);
      return s !== null && s.position !== '0' ? s : undefined;
    }, 20_000, 'the DCA position from the buy\'s fill');
    const buyId = bought.decisions.find((d) => d.action === 'buy')!.opportunityId!;
    const buy = await seen(results, buyId);
    expect(buy.status).toBe('paper');
    expect(bought.position).toBe(buy.filledOutput!.toString());
    expect(bought.cost).toBe(buy.filledInput!.toString());
    expect(bought.pending).toEqual({});

    // 2. Two per cent up passes the take profit: the exit sells the position the fill made, and
    //    its own fill empties it.
    await move(dcaPool, 200);
    await announce(dcaPool);
    const sold = await eventually(async () => {
      const s = await state();
      return s.position === '0' && s.exits === 1 && Object.keys(s.pending ?? {}).length === 0 ? s : undefined;
    }, 20_000, 'the DCA position sold at the take profit');
    const exit = sold.decisions.find((d) => d.action === 'sell')!;
    expect(exit.reason).toBe('take_profit');
    expect((await seen(opportunities, exit.opportunityId!)).inputAmount).toBe(buy.filledOutput);
    expect((await seen(results, exit.opportunityId!)).filledInput).toBe(buy.filledOutput);
  });
});
