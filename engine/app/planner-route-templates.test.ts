import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../config/loader.js';
import { createLogger } from '../obs/logger.js';
import { StrategyStore, priceOf } from '../planner/index.js';
import type { LoadedPool } from '../pools/index.js';
import { decodeTradeOpportunity, encodeMarketEvent, marketEventSubject, type MarketEvent, type TradeOpportunity } from '../messages/index.js';
import type { SimPoolView } from '../sim/index.js';
import type { Simulator } from '../sim/simulator.js';
import { openMigratedDatabase, routeTemplateHash, type KeySpace } from '../state/index.js';
import { createExecutorApp, executorSchema } from './executor-app.js';
import { createPlannerApp, plannerSchema, type PlannerApp } from './planner-app.js';
import { PlatformFixture } from './testing/platform-fixture.js';
import { eventually } from './testing.js';

/**
 * The planner writes a route's template (`route_template:{hash}`) when it publishes an opportunity
 * on it, so an executor that never read the route, and that no other executor traded, reads it in
 * one round: the simulator, the local NATS JetStream, Redis and PostgreSQL, a planner (DCA on a
 * concentrated-liquidity pool: its template names tick arrays) and, once the opportunity is
 * stored, a fresh paper executor.
 */

const logger = createLogger({ name: 'planner-templates-test', level: process.env.TEST_LOG ?? 'silent' });
const fx = new PlatformFixture();
let sim: Simulator;
let nc: NatsConnection;
let prefix: string;
let keys: KeySpace;
let plannerHttp: string;
let pool: SimPoolView;
const opportunities: TradeOpportunity[] = [];

beforeAll(async () => {
  ({ sim } = await fx.runningSimulator(40));
  ({ nc, prefix } = await fx.bus('RT'));
  fx.collect(`${prefix}trade.opportunities.>`, decodeTradeOpportunity, (op) => opportunities.push(op));
  const database = await fx.database();
  keys = (await fx.keySpace()).keys;
  const db = fx.closing((await openMigratedDatabase({ url: database.url! })).db, "the test's database client");
  pool = sim.chain.pools().find((p) => p.transferFees === undefined && p.dex === 'dexc_whirlpool')!;
  const price = priceOf({ pool: sim.chain.pool(pool.address)!.pool } as LoadedPool, pool.pool.tokenA)!;
  // One buy of about 10,000,000 tokens at the first event, none for the next 10 hours.
  await new StrategyStore(db).insert('dca', { pool: pool.address, token: pool.pool.tokenA, quoteCurrency: pool.pool.tokenB, intervalMinutes: 600, amountPerOrder: BigInt(Math.ceil(10_000_000 * price)).toString(), maxPosition: '1000000000000000' });
  const planner: PlannerApp = fx.closing(
    await createPlannerApp(loadConfig(plannerSchema, { env: {}, flags: { ...fx.serviceFlags(), strategy: 'dca', 'planner-id': 'templates-planner' } }), { logger, pools: [pool.address], retryDelayMs: 20 }),
    'the planner',
  );
  plannerHttp = (await planner.start()).http;
}, 60_000);

afterAll(() => fx.close());

async function announce(): Promise<void> {
  const event: MarketEvent = { version: 1, id: `${pool.address}:1:templates`, type: 'pool_update', protocol: pool.dex, poolAddress: pool.address, tokenA: pool.pool.tokenA, tokenB: pool.pool.tokenB, timestamp: Date.now(), slot: sim.chain.slot('confirmed').toString(), data: {} };
  await nc.jetstream().publish(marketEventSubject(pool.dex, 'pool_update', prefix), encodeMarketEvent(event), { msgID: event.id });
}

/** The value of `executor_route_templates_total{result}` in a /metrics text (0 when absent). */
function templateCount(metrics: string, result: string): number {
  const m = new RegExp(`^executor_route_templates_total\\{[^}]*result="${result}"[^}]*\\} (\\d+)`, 'm').exec(metrics);
  return m === null ? 0 : Number(m[1]);
}

describe('route templates written by the planner', () => {
  it("after the planner publishes an opportunity, a fresh executor's first read of its route is a template hit", async () => {
    await announce();
    const op = await eventually(() => opportunities[0], 15_000, 'the DCA opportunity');
    expect(op.route.map((h) => h.pool)).toEqual([pool.address]);
    // written with the publish (the event is acknowledged after it), from the planner's own read
    const template = await keys.getRouteTemplate(routeTemplateHash(op.route));
    expect(template?.pools.map((p) => [p.address, p.dex])).toEqual([[pool.address, pool.dex]]);
    expect(template!.pools[0]!.accounts.length).toBeGreaterThan(2);
    const plannerMetrics = await (await fetch(`${plannerHttp}/metrics`)).text();
    expect(plannerMetrics).toMatch(/^planner_route_templates_total\{[^}]*result="written"[^}]*\} 1$/m);

    // An executor that never read the pool takes the stored opportunity: one round, a hit.
    const executor = fx.closing(
      await createExecutorApp(loadConfig(executorSchema, { env: { PAPER_TRADING: 'true' }, flags: { ...fx.serviceFlags(), 'executor-id': 'templates-executor' } }), { logger }),
      'the executor',
    );
    const { http } = await executor.start();
    const metrics = await eventually(async () => {
      const text = await (await fetch(`${http}/metrics`)).text();
      return templateCount(text, 'hit') + templateCount(text, 'miss') + templateCount(text, 'stale') > 0 ? text : undefined;
    }, 15_000, "the executor's first read of the route");
    expect({ hit: templateCount(metrics, 'hit'), miss: templateCount(metrics, 'miss'), stale: templateCount(metrics, 'stale') }).toEqual({ hit: 1, miss: 0, stale: 0 });
  });
});
