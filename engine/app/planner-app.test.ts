import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { uniqueName } from '../bus/testing/local-nats.js';
import { loadConfig } from '../config/loader.js';
import { createLogger } from '../obs/logger.js';
import { StrategyAdmin } from '../planner/index.js';
import { decodeTradeOpportunity, encodeMarketEvent, marketEventSubject, type MarketEvent } from '../messages/index.js';
import { PriceGapError, openPriceGap, type SimPoolView } from '../sim/index.js';
import type { Simulator } from '../sim/simulator.js';
import { createPlannerApp, plannerSchema, type PlannerApp } from './planner-app.js';
import { PlatformFixture } from './testing/platform-fixture.js';
import { eventually } from './testing.js';

const logger = createLogger({ name: 'planner-test', level: process.env.TEST_LOG ?? 'silent' });
const fx = new PlatformFixture();
let sim: Simulator;
let nc: NatsConnection;
let prefix: string;
let app: PlannerApp;

beforeAll(async () => {
  ({ sim } = await fx.manualSimulator({ seed: 41 }));
  ({ nc, prefix } = await fx.bus('PL'));
  await fx.database();
  const loaded = loadConfig(plannerSchema, {
    env: {},
    flags: { ...fx.serviceFlags(), 'planner-id': 'test-planner', 'metrics-interval': '200', 'strategy-reload-interval': '200', 'flash-loan-reserves': sim.chain.genesis.lending.reserves.map((r) => r.reserve).join(',') },
  });
  app = fx.closing(await createPlannerApp(loaded, { logger, pools: sim.chain.pools().map((p) => p.address), retryDelayMs: 20 }), 'the planner');
}, 60_000);

afterAll(() => fx.close());

/** A gap on an AMM pool against another pool of its pair whose token A is wrapped SOL (the default base). */
function plantGap(): SimPoolView {
  const SOL = 'So11111111111111111111111111111111111111112';
  for (const p of sim.chain.pools().filter((v) => v.dex === 'dexa_amm' && v.transferFees === undefined && (v.pool.tokenA === SOL || v.pool.tokenB === SOL))) {
    const other = sim.chain.poolsForPair(p.pool.tokenA, p.pool.tokenB).find((o) => o.address !== p.address && o.transferFees === undefined);
    if (other === undefined) continue;
    try {
      openPriceGap(sim.chain, { pool: p.address, reference: other.address, gapBps: 80 });
    } catch (err) {
      if (err instanceof PriceGapError) continue;
      throw err;
    }
    sim.chain.advanceSlot();
    return p;
  }
  throw new Error('no SOL pool to plant a gap on');
}

function event(pool: SimPoolView, id: string): MarketEvent {
  return { version: 1, id, type: 'pool_update', protocol: pool.dex, poolAddress: pool.address, tokenA: pool.pool.tokenA, tokenB: pool.pool.tokenB, timestamp: Date.now(), slot: sim.chain.slot().toString(), data: {} };
}

describe('tidepool planner --strategy arbitrage', () => {
  it('consumes a market event and publishes the arbitrage it leads to, acked, with metrics and rows', async () => {
    const { http } = await app.start();
    const pool = plantGap();
    const js = nc.jetstream();
    // ids as the market scanner makes them: <pool>:<slot>:<signature>:<type>, up to 200 characters
    const longId = `${pool.address}:${sim.chain.slot()}:${'5'.repeat(88)}:pool_update`;
    await js.publish(marketEventSubject(pool.dex, 'pool_update', prefix), encodeMarketEvent(event(pool, longId)));
    // a pool of a Token-2022 mint with transfer fees is read and acked, never part of a cycle
    const toll = sim.chain.pools().find((p) => p.transferFees !== undefined)!;
    await js.publish(marketEventSubject(toll.dex, 'pool_update', prefix), encodeMarketEvent(event(toll, uniqueName('toll'))));
    const jsm = await nc.jetstreamManager();
    const info = await eventually(async () => {
      const i = await jsm.streams.info(`${prefix}TRADE_OPPORTUNITIES`);
      return i.state.messages > 0 ? i : undefined;
    }, 15_000, 'an opportunity');
    const stored = await jsm.streams.getMessage(`${prefix}TRADE_OPPORTUNITIES`, { seq: info.state.first_seq });
    expect(stored.subject).toBe(`${prefix}trade.opportunities.arbitrage`);
    const op = decodeTradeOpportunity(stored.data);
    expect(op.route.map((h) => h.pool)).toContain(pool.address);
    expect(op.expectedProfit).toBeGreaterThan(10_000n);
    // funded by the simulator's wrapped SOL reserve (flashLoan.reserves): its fee is a cost
    expect(op.flashLoan).toBe(true);
    expect(op.costs.flashLoanFee).toBeGreaterThan(0n);
    expect(stored.header.get('Nats-Msg-Id')).toBe(op.id);
    expect(op.strategyId).toBe(app.strategies[0]!.id);
    expect(op.sourceEvent?.id).toBe(longId);
    // acknowledged after processing: nothing pending on the durable consumer
    const consumer = await eventually(async () => {
      const c = await jsm.consumers.info(`${prefix}MARKET_EVENTS`, 'planner_test-planner');
      return c.num_ack_pending === 0 && c.num_pending === 0 ? c : undefined;
    }, 10_000, 'the event acknowledged');
    expect(consumer.config.ack_policy).toBe('explicit');
    expect(consumer.delivered.stream_seq).toBe(2); // both events, each delivered once
    expect((await jsm.streams.info(`${prefix}DEAD_LETTERS`)).state.messages).toBe(0);
    const metrics = await (await fetch(`${http}/metrics`)).text();
    expect(metrics).toMatch(/planner_opportunities_found_total\{strategy="arbitrage"\} [1-9]/);
    expect(metrics).toMatch(/planner_event_to_opportunity_seconds_count\{strategy="arbitrage"\} [1-9]/);
    expect((await fetch(`${http}/ready`)).status).toBe(200);
    const rows = await eventually(async () => {
      const r = await app.state.db.query<{ opportunities_found: number }>('SELECT opportunities_found FROM planner_metrics WHERE planner_id = $1 AND opportunities_found > 0', ['test-planner']);
      return r.length > 0 ? r : undefined;
    }, 10_000, 'a planner_metrics row');
    expect(rows[0]!.opportunities_found).toBeGreaterThan(0);
    const configs = await app.state.db.query<{ strategy_type: string; last_run: Date | null }>('SELECT strategy_type, last_run FROM strategy_configs');
    expect(configs.map((c) => c.strategy_type)).toEqual(['arbitrage']);
  });

  it('dead-letters a message that is not a market event at once: it would fail the same way every time', async () => {
    await nc.jetstream().publish(`${prefix}market.events.dexa_amm.pool_update`, new TextEncoder().encode('{"not":"a market event"}'));
    const jsm = await nc.jetstreamManager();
    const dead = await eventually(async () => {
      const i = await jsm.streams.info(`${prefix}DEAD_LETTERS`);
      return i.state.messages > 0 ? i : undefined;
    }, 20_000, 'a dead letter');
    const m = await jsm.streams.getMessage(`${prefix}DEAD_LETTERS`, { seq: dead.state.first_seq });
    expect(m.header.get('Tp-Dlq-Deliveries')).toBe('1');
    expect(m.header.get('Tp-Dlq-Reason')).toMatch(/TP_ERR_MESSAGE_INVALID/);
  });

  it('follows tidepool strategies while running: a paused row stops, a resumed one runs again, no restart', async () => {
    const admin = new StrategyAdmin(app.state.db);
    const [row] = await admin.list();
    await admin.pause(row!.id);
    await eventually(async () => (app.service.strategies.length === 0 ? true : undefined), 10_000, 'the paused strategy stopped');
    await admin.resume(row!.id);
    const running = await eventually(async () => (app.service.strategies.length === 1 ? app.service.strategies : undefined), 10_000, 'the resumed strategy running');
    expect(running[0]!.id).toBe(row!.id);
  });
});
