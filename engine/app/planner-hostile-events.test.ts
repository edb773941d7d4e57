/**
 * Hostile market events over the real NATS: anyone who can publish on the bus can write one, so
 * every event that carries state the planner would use is checked first. Each of these is
 * dead-lettered at its first delivery with a reason naming the field, counted in
 * bus_dead_letters_total, and never planned on (no opportunity is published).
 */
import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { uniqueName } from '../bus/testing/local-nats.js';
import { loadConfig } from '../config/loader.js';
import { createLogger } from '../obs/logger.js';
import { marketEventSubject, type MarketEvent } from '../messages/index.js';
import type { Simulator } from '../sim/simulator.js';
import { createPlannerApp, plannerSchema, type PlannerApp } from './planner-app.js';
import { PlatformFixture } from './testing/platform-fixture.js';
import { eventually } from './testing.js';

const logger = createLogger({ name: 'planner-hostile-test', level: process.env.TEST_LOG ?? 'silent' });
const fx = new PlatformFixture();
let sim: Simulator;
let nc: NatsConnection;
let prefix: string;
let app: PlannerApp;

beforeAll(async () => {
  ({ sim } = await fx.manualSimulator({ seed: 43, poolsPerKind: 1 }));
  ({ nc, prefix } = await fx.bus('PH'));
  await fx.database();
  const loaded = loadConfig(plannerSchema, { env: {}, flags: { ...fx.serviceFlags(), 'planner-id': 'hostile-planner' } });
  app = fx.closing(await createPlannerApp(loaded, { logger, pools: sim.chain.pools().map((p) => p.address), retryDelayMs: 20 }), 'the planner');
}, 60_000);

afterAll(() => fx.close());

describe('hostile market events on the bus', () => {
  it('dead-letters, with a reason naming the field, a u64-max or out-of-range slot, a negative or oversize reserve, a price that is not a number, forged mints', async () => {
    const { http } = await app.start();
    const pool = sim.chain.pools().find((p) => p.dex === 'dexa_amm')!;
    const other = sim.chain.pools().find((p) => p.pool.tokenA !== pool.pool.tokenA || p.pool.tokenB !== pool.pool.tokenB)!;
    const genuine = (): MarketEvent => ({ version: 1, id: uniqueName('ev'), type: 'pool_update', protocol: pool.dex, poolAddress: pool.address, tokenA: pool.pool.tokenA, tokenB: pool.pool.tokenB, timestamp: Date.now(), slot: sim.chain.slot().toString(), data: {} });
    const json = (e: MarketEvent): string => JSON.stringify(e);
    // [the field the reason names, the raw bytes as a hostile publisher writes them]
    const hostile: [string, string][] = [
      ['/slot', json({ ...genuine(), slot: '18446744073709551615' })],
      ['/slot', json({ ...genuine(), slot: '99999999999999999999' })],
      ['/slot', json({ ...genuine(), slot: '18446744073709551616' })],
      ['/data/reserveA', json({ ...genuine(), data: { reserveA: '-1' } })],
      ['/data/reserveB', json({ ...genuine(), data: { reserveB: '18446744073709551616' } })],
      ['/data/liquidity', json({ ...genuine(), data: { liquidity: '340282366920938463463374607431768211456' } })],
      ['/data/price', json({ ...genuine(), data: { price: 'NaN' } })],
      ['/data/price', json({ ...genuine(), data: { price: -1 } })],
      // JSON has no NaN or Infinity, but 1e400 parses to Infinity
      ['/data/price', json({ ...genuine(), data: { price: 1 } }).replace('"price":1', '"price":1e400')],
      ['/data/fee', json({ ...genuine(), data: { fee: 2 } })],
      ['/timestamp', json({ ...genuine(), timestamp: Date.now() + 3_600_000 })],
      ['/tokenA', json({ ...genuine(), tokenA: other.pool.tokenA, tokenB: other.pool.tokenB })],
      ['/data/state', json({ ...genuine(), data: { state: { format: 1, full: true, arraysEachSide: 0, mints: false, accounts: [{ address: pool.address, owner: pool.address, lamports: '-5', executable: false, slot: '1', data: '@@' }] } } })],
    ];
    const js = nc.jetstream();
    const enc = new TextEncoder();
    for (const [, bytes] of hostile) await js.publish(marketEventSubject(pool.dex, 'pool_update', prefix), enc.encode(bytes));

    const jsm = await nc.jetstreamManager();
    await eventually(async () => ((await jsm.streams.info(`${prefix}DEAD_LETTERS`)).state.messages === hostile.length ? true : undefined), 30_000, 'every hostile event dead-lettered');
    for (let i = 0; i < hostile.length; i++) {
      const m = await jsm.streams.getMessage(`${prefix}DEAD_LETTERS`, { seq: i + 1 });
      const reason = m.header.get('Tp-Dlq-Reason');
      expect(new TextDecoder().decode(m.data), reason).toBe(hostile[i]![1]);
      expect(reason).toMatch(/TP_ERR_MESSAGE_INVALID/);
      expect(reason).toContain(hostile[i]![0]);
      // at once: a message that breaks its format would fail the same way every time
      expect(m.header.get('Tp-Dlq-Deliveries')).toBe('1');
    }
    const metrics = await (await fetch(`${http}/metrics`)).text();
    expect(metrics).toContain(`bus_dead_letters_total{stream="${prefix}MARKET_EVENTS"} ${hostile.length}`);
    expect((await jsm.streams.info(`${prefix}TRADE_OPPORTUNITIES`)).state.messages).toBe(0);

    // the same pool's genuine event is still planned on (acknowledged, not dead-lettered)
    await js.publish(marketEventSubject(pool.dex, 'pool_update', prefix), enc.encode(json(genuine())));
    await eventually(async () => {
      const c = await jsm.consumers.info(`${prefix}MARKET_EVENTS`, 'planner_hostile-planner');
      return c.delivered.stream_seq === hostile.length + 1 && c.num_ack_pending === 0 && c.num_pending === 0 ? c : undefined;
    }, 15_000, 'the genuine event acknowledged');
    expect((await jsm.streams.info(`${prefix}DEAD_LETTERS`)).state.messages).toBe(hostile.length);
  }, 90_000);
});
