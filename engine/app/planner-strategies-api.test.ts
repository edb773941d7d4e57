import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../config/loader.js';
import { createLogger } from '../obs/logger.js';
import { TradeStore, tradeIdOf } from '../executor/trade-store.js';
import { ArbitrageStrategy } from '../planner/index.js';
import type { SimPoolView } from '../sim/index.js';
import type { Simulator } from '../sim/simulator.js';
import type { TestDatabase } from '../state/db/testing.js';
import { createPlannerApp, plannerSchema, type PlannerApp } from './planner-app.js';
import { MAX_STRATEGY_BODY_BYTES } from './planner-strategy-routes.js';
import { PlatformFixture } from './testing/platform-fixture.js';
import { eventually } from './testing.js';

/**
 * The planner's strategy API over a real socket, with the real PostgreSQL and NATS: every route,
 * refusals naming the field, a strategy added or edited over HTTP picked up by the running
 * planner, a pause cancelling the open grid orders, realized P&L from the trades, and JWT auth.
 */
const logger = createLogger({ name: 'planner-strategies-test', level: process.env.TEST_LOG ?? 'silent' });
const SECRET = 'a-test-secret-of-at-least-thirty-two-bytes!';
const fx = new PlatformFixture();
let sim: Simulator;
let database: TestDatabase;
let app: PlannerApp;
let http: string;
let pool: SimPoolView;

beforeAll(async () => {
  ({ sim } = await fx.manualSimulator({ seed: 47 }));
  pool = sim.chain.pools().find((p) => p.transferFees === undefined)!;
  await fx.bus('PSA');
  database = await fx.database();
  const loaded = loadConfig(plannerSchema, {
    env: { TIDEPOOL_AUTH: 'on', TIDEPOOL_JWT_SECRET: SECRET },
    flags: { ...fx.serviceFlags(), 'planner-id': 'strategies-planner', 'strategy-reload-interval': '200' },
  });
  app = fx.closing(await createPlannerApp(loaded, { logger, pools: [pool.address], retryDelayMs: 20 }), 'the planner');
  ({ http } = await app.start());
}, 60_000);

afterAll(() => fx.close());

async function token(): Promise<string> {
  return new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('trader').setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode(SECRET));
}

interface Answer {
  status: number;
  body: Record<string, any>;
  headers: Headers;
}

async function call(method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${http}${path}`, {
    method,
    headers: { authorization: `Bearer ${await token()}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>), headers: res.headers };
}

function gridParams(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { pool: pool.address, token: pool.pool.tokenA, lowerPrice: 0.5, upperPrice: 1.5, levels: 5, amountPerLevel: '1000000', ...over };
}

describe('planner strategy API', () => {
  it('refuses every route without a valid bearer token (auth on)', async () => {
    for (const [method, path] of [['GET', '/strategies'], ['POST', '/strategies'], ['GET', `/strategies/${crypto.randomUUID()}`], ['PATCH', `/strategies/${crypto.randomUUID()}`], ['DELETE', `/strategies/${crypto.randomUUID()}`]] as const) {
      const res = await fetch(`${http}${path}`, { method, ...(method === 'POST' || method === 'PATCH' ? { body: '{}' } : {}) });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('TP_ERR_UNAUTHENTICATED');
    }
    const forged = await fetch(`${http}/strategies`, { headers: { authorization: 'Bearer not.a.token' } });
    expect(forged.status).toBe(401);
  });

  it('lists the running arbitrage strategy; a strategy added over HTTP runs in the planner without a restart', async () => {
    const before = await call('GET', '/strategies');
    expect(before.status).toBe(200);
    expect(before.body.strategies).toHaveLength(1);
    expect(before.body.strategies[0]).toMatchObject({ strategyType: 'arbitrage', enabled: true, status: 'enabled', running: true, openOrders: [], position: null });
    const added = await call('POST', '/strategies', { type: 'arbitrage', params: { minProfitThreshold: '20000', tip: '5500' } });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ strategyType: 'arbitrage', enabled: true, status: 'enabled', parameters: { minProfitThreshold: '20000', tip: '5500' } });
    expect(added.headers.get('location')).toBe(`/strategies/${added.body.id}`);
    const running = await eventually(async () => (app.service.strategies.some((s) => s.id === added.body.id) ? app.service.strategies : undefined), 10_000, 'the added strategy running');
    expect(running).toHaveLength(2);
    expect((await call('GET', `/strategies/${added.body.id}`)).body.running).toBe(true);

    // paused over HTTP: the planner stops it; resumed: runs again
    const paused = await call('PATCH', `/strategies/${added.body.id}`, { enabled: false });
    expect(paused.status).toBe(200);
    expect(paused.body.strategy).toMatchObject({ id: added.body.id, enabled: false, status: 'paused' });
    await eventually(async () => (app.service.strategies.every((s) => s.id !== added.body.id) ? true : undefined), 10_000, 'the paused strategy stopped');
    expect((await call('PATCH', `/strategies/${added.body.id}`, { enabled: true })).body.strategy.status).toBe('enabled');
    await eventually(async () => (app.service.strategies.some((s) => s.id === added.body.id) ? true : undefined), 10_000, 'the resumed strategy running');

    // removed: gone from the API and from the planner
    const removed = await call('DELETE', `/strategies/${added.body.id}`);
    expect(removed.status).toBe(200);
    expect(removed.body.strategy.id).toBe(added.body.id);
    expect((await call('GET', `/strategies/${added.body.id}`)).status).toBe(404);
    await eventually(async () => (app.service.strategies.every((s) => s.id !== added.body.id) ? true : undefined), 10_000, 'the removed strategy stopped');
  });

  it('a parameter edited over HTTP is used by the running planner; a refused edit changes nothing', async () => {
    const added = await call('POST', '/strategies', { type: 'arbitrage', params: { minProfitThreshold: '20000' } });
    const id = added.body.id as string;
    const runningSettings = (): ArbitrageStrategy['planner']['settings'] | undefined => {
      const s = app.service.strategies.find((x) => x.id === id);
      return s instanceof ArbitrageStrategy ? s.planner.settings : undefined;
    };
    expect((await eventually(async () => runningSettings(), 10_000, 'the added strategy running')).minProfitThreshold).toBe(20_000n);
    const before = app.service.strategies.find((x) => x.id === id);

    const refused = await call('PATCH', `/strategies/${id}`, { params: { maxLegs: 4, minProfitThreshold: '1' } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'TP_ERR_BAD_PARAMETER' });
    expect(refused.body.error.message).toContain('params.maxLegs');
    expect((await call('GET', `/strategies/${id}`)).body.parameters).toEqual({ minProfitThreshold: '20000' });

    const changed = await call('PATCH', `/strategies/${id}`, { params: { minProfitThreshold: '35000', maxLegs: 2 } });
    expect(changed.status).toBe(200);
    expect(changed.body.strategy.parameters).toEqual({ minProfitThreshold: '35000', maxLegs: 2 });
    const used = await eventually(async () => (runningSettings()?.minProfitThreshold === 35_000n ? runningSettings() : undefined), 10_000, 'the planner using the edited threshold');
    expect(used.maxLegs).toBe(2);
    // The refused edit never reached the planner: the object it ran until the good edit was the first one.
    expect(before).toBeInstanceOf(ArbitrageStrategy);
    expect((before as ArbitrageStrategy).planner.settings.minProfitThreshold).toBe(20_000n);
    await call('DELETE', `/strategies/${id}`);
  });

  it('gives each strategy its realized P&L from its trades, amounts as decimal strings', async () => {
    const added = await call('POST', '/strategies', { type: 'grid', params: gridParams(), enabled: false });
    const id = added.body.id as string;
    const [token, quote] = [pool.pool.tokenA, pool.pool.tokenB];
    const trades = new TradeStore(database.db);
    const paper = async (n: number, inputMint: string, inputAmount: bigint, outputMint: string, outputAmount: bigint): Promise<void> => {
      const opportunityId = `44444444-0000-4000-8000-${String(n).padStart(12, '0')}`;
      const hop = { step: 0, pool: pool.address, dex: pool.dex, inputMint, outputMint, inputAmount, outputAmount, fee: 0n, feeMint: inputMint, priceImpact: 0, slot: 1n };
      await trades.insertPaper({ id: tradeIdOf(opportunityId), opportunityId, executorId: 'api-test', strategy: 'grid', strategyId: id, walletId: null, path: 'direct', profitMint: quote, expectedProfit: 0n, tip: 0n, route: [hop], actualProfit: 0n, fees: 5_000n, slot: 1n });
    };
    // Buys 3,000,000 tokens for 1,500,000 quote atoms; sells 1,000,000 of them for 600,000:
    // their average cost is 500,000, so 100,000 realized; 2,000,000 held at a cost of 1,000,000.
    await paper(1, quote, 1_500_000n, token, 3_000_000n);
    await paper(2, token, 1_000_000n, quote, 600_000n);
    const expected = { mint: quote, realizedPnl: '100000', position: '2000000', costBasis: '1000000', fills: 2, skipped: 0, fees: '10000', tips: '0' };
    expect((await call('GET', `/strategies/${id}`)).body.pnl).toEqual(expected);
    expect((await call('GET', '/strategies')).body.strategies.find((s: { id: string }) => s.id === id).pnl).toEqual(expected);
    await call('DELETE', `/strategies/${id}`);
  });

  it('refuses bad input with 400 naming the field, and writes nothing', async () => {
    const cases: [string, string, unknown, string][] = [
      ['POST', '/strategies', { type: 'martingale', params: {} }, 'type'],
      ['POST', '/strategies', { params: {} }, 'type'],
      ['POST', '/strategies', { type: 'grid', params: [] }, 'params'],
      ['POST', '/strategies', { type: 'grid', params: gridParams(), colour: 'red' }, 'colour'],
      ['POST', '/strategies', { type: 'grid', params: gridParams(), enabled: 'yes' }, 'enabled'],
      ['POST', '/strategies', { type: 'grid', params: gridParams({ levels: 2.5 }) }, 'params.levels'],
      ['POST', '/strategies', { type: 'grid', params: gridParams({ upperPrice: 0.1 }) }, 'params.upperPrice'],
      ['POST', '/strategies', { type: 'grid', params: gridParams({ amountPerLevel: '-3' }) }, 'params.amountPerLevel'],
      ['POST', '/strategies', { type: 'grid', params: gridParams({ levles: 5 }) }, 'params.levles'],
      ['POST', '/strategies', { type: 'grid', params: gridParams({ pool: 'not-an-address' }) }, 'params.pool'],
      ['POST', '/strategies', 'not json', 'body'],
      ['POST', '/strategies', '[1, 2]', 'body'],
    ];
    for (const [method, path, body, field] of cases) {
      const a = await call(method, path, body);
      expect(a.status, `${JSON.stringify(body)}`).toBe(400);
      expect(a.body.error.code).toBe('TP_ERR_BAD_PARAMETER');
      expect(a.body.error.message, `${JSON.stringify(body)}`).toContain(field);
    }
    expect((await call('GET', '/strategies')).body.strategies).toHaveLength(1);

    // 413 over the body limit, 405 for a method a path does not take, 404 for ids that are no strategy
    const big = await call('POST', '/strategies', { type: 'grid', params: gridParams({ pad: 'x'.repeat(MAX_STRATEGY_BODY_BYTES) }) });
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('TP_ERR_PAYLOAD_TOO_LARGE');
    const put = await call('PUT', '/strategies', {});
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, POST');
    expect((await call('POST', `/strategies/${crypto.randomUUID()}`, {})).status).toBe(405);
    for (const id of [crypto.randomUUID(), 'not-a-uuid', '']) {
      const missing = await call('GET', `/strategies/${id}`);
      expect(missing.status, id).toBe(404);
      expect(missing.body.error.code).toBe('TP_ERR_NOT_FOUND');
    }
    expect((await call('PATCH', `/strategies/${crypto.randomUUID()}`, { enabled: false })).status).toBe(404);
    expect((await call('DELETE', `/strategies/${crypto.randomUUID()}`)).status).toBe(404);
  });

  it('shows a grid with its orders and position; a parameter change is checked; a pause cancels its open orders', async () => {
    const added = await call('POST', '/strategies', { type: 'grid', params: gridParams(), enabled: true });
    expect(added.status).toBe(201);
    const id = added.body.id as string;
    await database.db.query(
      "INSERT INTO grid_orders (strategy_id, price_level, amount, filled, status) VALUES ($1, 0.5, 18446744073709551615, 0, 'pending'), ($1, 0.75, 1000000, 400000, 'partial'), ($1, 1.0, 1000000, 1000000, 'filled')",
      [id],
    );
    // the strategy's own state: level 0 bought and not sold yet
    await app.state.keys.setStrategyState(id, { version: 1, levels: [{ buyFilled: true, sellFilled: false, round: 0 }, { buyFilled: false, sellFilled: false, round: 0 }, { buyFilled: true, sellFilled: true, round: 1 }, { buyFilled: false, sellFilled: false, round: 0 }], open: {} });

    const detail = await call('GET', `/strategies/${id}`);
    expect(detail.status).toBe(200);
    // enabled, but this planner runs arbitrage only: a grid planner runs it
    expect(detail.body).toMatchObject({ id, strategyType: 'grid', status: 'enabled', running: false, parameters: gridParams(), orders: { pending: 1, partial: 1, filled: 1 } });
    expect(detail.body.recentOrders.map((o: { status: string }) => o.status).sort()).toEqual(['filled', 'partial', 'pending']);
    // u64 amounts as decimal strings, exact
    expect(detail.body.recentOrders.find((o: { status: string }) => o.status === 'pending')).toMatchObject({ priceLevel: 0.5, amount: '18446744073709551615', filled: '0' });
    // held: level 0 (bought at 0.5, not sold), its cost at that price, valued at the pool's price now
    const position = detail.body.position;
    expect(position).toMatchObject({ token: pool.pool.tokenA, held: '1000000', cost: '500000', levelsHeld: 1 });
    expect(position.markPrice).toBeGreaterThan(0);
    expect(position.value).toBe(BigInt(Math.floor(1_000_000 * position.markPrice)).toString());
    expect(BigInt(position.unrealizedPnl)).toBe(BigInt(position.value) - 500_000n);
    const listed = (await call('GET', '/strategies')).body.strategies.find((s: { id: string }) => s.id === id);
    expect(listed.openOrders.map((o: { status: string }) => o.status)).toEqual(['pending', 'partial']);
    expect(listed.position.held).toBe('1000000');

    // a parameter change: checked like an add, merged over the row's
    const refused = await call('PATCH', `/strategies/${id}`, { params: { levels: 1 } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('params.levels');
    expect((await call('PATCH', `/strategies/${id}`, { enabled: 'no' })).body.error.message).toContain('enabled');
    expect((await call('PATCH', `/strategies/${id}`, {})).status).toBe(400);
    const changed = await call('PATCH', `/strategies/${id}`, { params: { levels: 7, slippageBps: 30 } });
    expect(changed.status).toBe(200);
    expect(changed.body.strategy.parameters).toEqual(gridParams({ levels: 7, slippageBps: 30 }));
    const dropped = await call('PATCH', `/strategies/${id}`, { params: { slippageBps: null } });
    expect(dropped.body.strategy.parameters).toEqual(gridParams({ levels: 7 }));

    // pause: the open orders (pending, partial) are cancelled, the filled one stays
    const paused = await call('PATCH', `/strategies/${id}`, { enabled: false });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ strategy: { id, status: 'paused' }, cancelled: 2 });
    const statuses = await database.db.query<{ status: string }>('SELECT status FROM grid_orders WHERE strategy_id = $1 ORDER BY price_level', [id]);
    expect(statuses.map((r) => r.status)).toEqual(['cancelled', 'cancelled', 'filled']);
    expect((await call('GET', '/strategies')).body.strategies.find((s: { id: string }) => s.id === id).openOrders).toEqual([]);
    expect((await call('DELETE', `/strategies/${id}`)).status).toBe(200);
    expect((await database.db.query('SELECT 1 FROM grid_orders WHERE strategy_id = $1', [id])).length).toBe(0);
  });

  it('shows a DCA position and its cost from the strategy state, as decimal strings', async () => {
    const added = await call('POST', '/strategies', { type: 'dca', params: { token: pool.pool.tokenA, quoteCurrency: pool.pool.tokenB, pool: pool.address, intervalMinutes: 60, amountPerOrder: '5000000', maxPosition: '90000000000' }, enabled: false });
    expect(added.status).toBe(201);
    expect(added.body.status).toBe('paused');
    const id = added.body.id as string;
    expect((await call('GET', `/strategies/${id}`)).body.position).toBeNull();
    await app.state.keys.setStrategyState(id, { version: 1, startAt: 0, lastInterval: 3, position: '12345678901234567890', cost: '24691357802469135780', exits: 0, decisions: [] });
    const detail = await call('GET', `/strategies/${id}`);
    expect(detail.body.position).toMatchObject({ token: pool.pool.tokenA, held: '12345678901234567890', cost: '24691357802469135780', averageFillPrice: 2 });
    expect(detail.body.position.markPrice).toBeGreaterThan(0);
    expect(BigInt(detail.body.position.unrealizedPnl)).toBe(BigInt(detail.body.position.value) - 24691357802469135780n);
    await call('DELETE', `/strategies/${id}`);
  });
});
