import { SignJWT } from 'jose';
import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { uniqueName } from '../bus/testing/local-nats.js';
import { loadConfig } from '../config/loader.js';
import { createLogger } from '../obs/logger.js';
import { StrategyStore } from '../planner/index.js';
import { decodeTradeOpportunity, encodeTradeSignal, tradeOpportunitySubject, tradeSignalSubject, type TradeSignal } from '../messages/index.js';
import type { SimPoolView } from '../sim/index.js';
import type { Simulator } from '../sim/simulator.js';
import { createPlannerApp, plannerSchema, type PlannerApp } from './planner-app.js';
import { PlatformFixture } from './testing/platform-fixture.js';
import { eventually } from './testing.js';

/**
 * `tidepool planner --strategy signal`: signals reach the signal strategy from the bus (any source
 * publishing on signals.>) and over POST /signals with a JWT, and become opportunities on
 * trade.opportunities.signal under the strategy's limits.
 */
const logger = createLogger({ name: 'planner-signals-test', level: process.env.TEST_LOG ?? 'silent' });
const SECRET = 'a-test-secret-of-at-least-thirty-two-bytes!';
const fx = new PlatformFixture();
let sim: Simulator;
let nc: NatsConnection;
let prefix: string;
let app: PlannerApp;
let http: string;
let pool: SimPoolView;

beforeAll(async () => {
  ({ sim } = await fx.manualSimulator({ seed: 43 }));
  pool = sim.chain.pools().find((p) => p.dex === 'dexc_whirlpool' && p.transferFees === undefined)!;
  ({ nc, prefix } = await fx.bus('PS'));
  const database = await fx.database({ migrate: true });
  await new StrategyStore(database.db).insert('signal', {
    token: pool.pool.tokenA,
    quoteCurrency: pool.pool.tokenB,
    pool: pool.address,
    amountPerSignal: '40000000',
    maxPosition: '1000000000000',
    minConfidence: 0.6,
    cooldownMs: 0,
  });
  const loaded = loadConfig(plannerSchema, { env: { TIDEPOOL_AUTH: 'on', TIDEPOOL_JWT_SECRET: SECRET }, flags: { ...fx.serviceFlags(), strategy: 'signal', 'planner-id': 'signals-planner' } });
  app = fx.closing(await createPlannerApp(loaded, { logger, pools: [pool.address], retryDelayMs: 20 }), 'the planner');
  ({ http } = await app.start());
}, 60_000);

afterAll(() => fx.close());

let n = 0;
function signal(over: Partial<TradeSignal> = {}): TradeSignal {
  n++;
  return { version: 1, id: uniqueName(`sig${n}`), source: 'test-model', token: pool.pool.tokenA, direction: 'buy', confidence: 0.9, horizonMs: 300_000, createdAt: Date.now(), ...over };
}

/** Opportunities the planner publishes for the signal strategy, as they arrive. */
function opportunities(): { ids: string[]; close: () => void } {
  const ids: string[] = [];
  const sub = nc.subscribe(tradeOpportunitySubject('signal', prefix));
  void (async () => {
    for await (const m of sub) ids.push(decodeTradeOpportunity(m.data).id);
  })();
  return { ids, close: () => sub.unsubscribe() };
}

async function token(): Promise<string> {
  return new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('trader').setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode(SECRET));
}

describe('tidepool planner --strategy signal', () => {
  it('turns a signal published on signals.<source> into an opportunity', async () => {
    const seen = opportunities();
    try {
      await nc.jetstream().publish(tradeSignalSubject('test-model', prefix), encodeTradeSignal(signal()));
      await eventually(() => (seen.ids.length === 1 ? true : undefined), 20_000, 'an opportunity from the bus signal');
    } finally {
      seen.close();
    }
  });

  it('takes a signal over POST /signals with a JWT, and refuses one without, or one that is not a signal', async () => {
    const seen = opportunities();
    try {
      const body = JSON.stringify(signal());
      const anonymous = await fetch(`${http}/signals`, { method: 'POST', body });
      expect(anonymous.status).toBe(401);
      expect(((await anonymous.json()) as { error: { code: string } }).error.code).toBe('TP_ERR_UNAUTHENTICATED');

      const bad = await fetch(`${http}/signals`, { method: 'POST', body: JSON.stringify({ version: 1, token: 'x' }), headers: { authorization: `Bearer ${await token()}` } });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('TP_ERR_MESSAGE_INVALID');

      const wrongMethod = await fetch(`${http}/signals`, { headers: { authorization: `Bearer ${await token()}` } });
      expect(wrongMethod.status).toBe(405);

      const accepted = await fetch(`${http}/signals`, { method: 'POST', body, headers: { authorization: `Bearer ${await token()}` } });
      expect(accepted.status).toBe(202);
      expect(await accepted.json()).toMatchObject({ subject: tradeSignalSubject('test-model', prefix), duplicate: false, taken: true });
      // The same signal again is stored once (its id is the message id) and traded once.
      const again = await fetch(`${http}/signals`, { method: 'POST', body, headers: { authorization: `Bearer ${await token()}` } });
      expect(await again.json()).toMatchObject({ duplicate: true });
      await eventually(() => (seen.ids.length === 1 ? true : undefined), 20_000, 'an opportunity from the posted signal');
      const metrics = await app.registry.getSingleMetric('planner_signal_decisions_total')!.get();
      expect(metrics.values.filter((v) => v.labels.action === 'buy').reduce((s, v) => s + v.value, 0)).toBe(2);
    } finally {
      seen.close();
    }
  });
});
