/**
 * Realized P&L of a grid traded end to end on real services: the simulator, the local NATS
 * JetStream, PostgreSQL, a planner (grid) and a paper executor in this process.
 *
 *   market event ─▶ planner ─▶ paper executor ─▶ trades (strategy_id) ─▶ StrategyAdmin.show().pnl
 *
 * A one-level grid above the price buys, the price rises past its sell price, it sells; the P&L is
 * computed by hand from the two ExecutionResults the executor published. Without the executor
 * writing trades.strategy_id the strategy has no fills and the check fails.
 */
import type { NatsConnection, Subscription } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createExecutorApp, executorSchema, type ExecutorApp } from '../app/executor-app.js';
import { createPlannerApp, plannerSchema, type PlannerApp } from '../app/planner-app.js';
import { confirmedOn } from '../app/testing/executor.js';
import { eventually } from '../app/testing.js';
import { TEST_STREAM_MAX_BYTES_SCALE, connectLocal, deleteStreams, uniqueName } from '../bus/testing/local-nats.js';
import { loadConfig } from '../config/loader.js';
import { startSimulator } from '../executor/testing/submitter-sim.js';
import { decodeExecutionResult, deterministicUuid, encodeMarketEvent, executionResultFilter, marketEventSubject, type ExecutionResult, type MarketEvent } from '../messages/index.js';
import { createLogger } from '../obs/logger.js';
import type { LoadedPool } from '../pools/index.js';
import { openPriceGap, type SimPoolView } from '../sim/index.js';
import type { SimEndpoints, Simulator } from '../sim/simulator.js';
import { openMigratedDatabase, type SqlClient } from '../state/index.js';
import { createServerDatabase, type TestDatabase } from '../state/db/testing.js';
import { priceOf } from './order-opportunity.js';
import { StrategyAdmin } from './strategy-admin.js';

const logger = createLogger({ name: 'strategy-pnl-fills-test', level: process.env.TEST_LOG ?? 'silent' });
const prefix = `${uniqueName('SPF')}_`;
const STREAMS = ['MARKET_EVENTS', 'TRADE_OPPORTUNITIES', 'EXECUTION_ORDERS', 'SYSTEM_METRICS', 'SIGNALS', 'DEAD_LETTERS'].map((n) => `${prefix}${n}`);
let sim: Simulator;
let endpoints: SimEndpoints;
let nc: NatsConnection;
let database: TestDatabase;
let db: SqlClient;
let planner: PlannerApp;
let executor: ExecutorApp;
let pool: SimPoolView;
let sub: Subscription;
let gridId: string;
let amountPerLevel: string;
let p0: number;
const results = new Map<string, ExecutionResult>();

beforeAll(async () => {
  ({ sim, endpoints } = await startSimulator(41));
  nc = await connectLocal();
  sub = nc.subscribe(executionResultFilter(prefix));
  void (async () => {
    for await (const m of sub) {
      const r = decodeExecutionResult(m.data);
      results.set(r.opportunityId, r);
    }
  })();
  database = await createServerDatabase();
  db = (await openMigratedDatabase({ url: database.url! })).db;
  pool = sim.chain.pools().find((p) => p.transferFees === undefined && p.dex === 'dexa_amm')!;
  const common = { 'rpc-endpoints': endpoints.rpc, 'database-url': database.url!, port: '0', 'subject-prefix': prefix, 'stream-max-bytes-scale': String(TEST_STREAM_MAX_BYTES_SCALE) };
  // One level: buys at 1.01 × the price (so it buys at once), sells at 1.02 ×. A grid planner starts with one row.
  p0 = priceNow();
  amountPerLevel = BigInt(Math.ceil(10_000_000 / p0)).toString();
  gridId = (await new StrategyAdmin(db).add('grid', { pool: pool.address, token: pool.pool.tokenA, lowerPrice: p0 * 1.01, upperPrice: p0 * 1.02, levels: 2, amountPerLevel, orderTtlMs: 600_000 })).id;
  executor = await createExecutorApp(loadConfig(executorSchema, { env: { PAPER_TRADING: 'true' }, flags: { ...common, 'executor-id': 'pnl-executor' } }), { logger });
  await executor.start();
  planner = await createPlannerApp(loadConfig(plannerSchema, { env: {}, flags: { ...common, strategy: 'grid', 'planner-id': 'pnl-planner', 'strategy-reload-interval': '200' } }), { logger, pools: [pool.address], retryDelayMs: 20 });
  await planner.start();
}, 60_000);

afterAll(async () => {
  sub?.unsubscribe();
  await planner?.close();
  await executor?.close();
  await deleteStreams(nc, STREAMS);
  await nc?.close();
  await db?.close();
  await database?.drop();
  await sim?.close();
});

function priceNow(): number {
  return priceOf({ pool: sim.chain.pool(pool.address)!.pool } as LoadedPool, pool.pool.tokenA)!;
}

let seq = 0;
async function announce(): Promise<void> {
  seq++;
  const event: MarketEvent = { version: 1, id: `${pool.address}:${seq}:pnl`, type: 'pool_update', protocol: pool.dex, poolAddress: pool.address, tokenA: pool.pool.tokenA, tokenB: pool.pool.tokenB, timestamp: Date.now(), slot: sim.chain.slot('confirmed').toString(), data: {} };
  await nc.jetstream().publish(marketEventSubject(pool.dex, 'pool_update', prefix), encodeMarketEvent(event), { msgID: event.id });
}

describe('realized P&L from the executor\'s trades', () => {
  it('a grid that bought then sold: the P&L is the sell\'s proceeds minus the average cost of what it sold', async () => {
    const admin = new StrategyAdmin(db);
    const grid = { id: gridId };

    await announce();
    const buy = await eventually(async () => results.get(deterministicUuid(`grid:${grid.id}:0:buy:0`)), 20_000, 'the buy\'s result');
    expect(buy).toMatchObject({ status: 'paper', strategyId: grid.id });
    const [qb, Qb] = [buy.filledOutput!, buy.filledInput!];
    await eventually(async () => ((await admin.show(grid.id)).pnl.fills === 1 ? true : undefined), 10_000, 'the buy counted');
    expect((await admin.show(grid.id)).pnl).toMatchObject({ mint: pool.pool.tokenB, realizedPnl: 0n, position: qb, costBasis: Qb });

    // Three per cent up: past the sell price; the buy's fill re-armed the sell (the level's next round).
    const { signature } = openPriceGap(sim.chain, { pool: pool.address, gapBps: 300, direction: 'up' });
    await confirmedOn(sim.chain, signature);
    expect(priceNow()).toBeGreaterThan(p0 * 1.02);
    await announce();
    const sell = await eventually(async () => results.get(deterministicUuid(`grid:${grid.id}:0:sell:1`)), 20_000, 'the sell\'s result');
    const [qs, Qs] = [sell.filledInput!, sell.filledOutput!];
    expect(qs).toBe(BigInt(amountPerLevel));
    expect(qs).toBeLessThanOrEqual(qb);
    // By hand: the qs tokens sold cost ⌊Qb × qs / qb⌋ of the buy's quote.
    const cost = (Qb * qs) / qb;
    const pnl = await eventually(async () => {
      const shown = (await admin.show(grid.id)).pnl;
      return shown.fills === 2 ? shown : undefined;
    }, 10_000, 'the sell counted');
    expect(pnl.realizedPnl).toBe(Qs - cost);
    expect(pnl.realizedPnl).toBeGreaterThan(0n);
    expect(pnl.position).toBe(qb - qs);
    expect(pnl.costBasis).toBe(Qb - cost);
    expect(pnl.fees).toBe(buy.fees + sell.fees);
    const rows = await db.query<{ strategy: string; strategy_id: string }>('SELECT strategy, strategy_id FROM trades WHERE strategy_id = $1', [grid.id]);
    expect(rows).toEqual([{ strategy: 'grid', strategy_id: grid.id }, { strategy: 'grid', strategy_id: grid.id }]);
    const sides = await db.query<{ side: string }>('SELECT side FROM grid_orders WHERE strategy_id = $1 ORDER BY side', [grid.id]);
    expect(sides.map((r) => r.side)).toEqual(['buy', 'sell']);
  });
});
