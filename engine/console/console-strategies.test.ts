/**
 * The console's strategies view in a real browser (headless Chromium, playwright-core) against a
 * running `tidepool planner` (real NATS, PostgreSQL and key space, manual simulator): the page lists
 * the planner's strategies with their status, open grid orders, position, unrealized and realized
 * P&L; its pause button
 * pauses a grid through the planner's API (open orders cancelled); markup in a row stays text.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';

import type { NatsConnection } from 'nats';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createPlannerApp, plannerSchema, type PlannerApp } from '../app/planner-app.js';
import { eventually } from '../app/testing.js';
import { DEFAULT_AUTH_SETTINGS } from '../auth/index.js';
import { TEST_STREAM_MAX_BYTES_SCALE, connectLocal, deleteStreams, uniqueName } from '../bus/testing/local-nats.js';
import { loadConfig } from '../config/loader.js';
import { createLogger } from '../obs/logger.js';
import { TradeStore, tradeIdOf } from '../executor/trade-store.js';
import { StrategyStore } from '../planner/index.js';
import { createServerDatabase, type TestDatabase } from '../state/db/testing.js';
import { simSchema } from '../sim/sim-config.js';
import { createSimulator, type Simulator } from '../sim/simulator.js';
import type { SimPoolView } from '../sim/index.js';
import { startConsole, type ConsoleApp } from './console-app.js';

// As console-browser.test.ts (importing it would run its suite here too).
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const ARTIFACTS = resolve(import.meta.dirname, '../../test-artifacts/console');
const MARKUP = '<img src=x onerror="window.__injected=1"><b>bold</b>';

describe.skipIf(!existsSync(CHROMIUM))('the console strategies view', () => {
  const logger = createLogger({ name: 'console-strategies-test', level: process.env.TEST_LOG ?? 'silent' });
  const prefix = `${uniqueName('CST')}_`;
  const STREAMS = ['MARKET_EVENTS', 'TRADE_OPPORTUNITIES', 'EXECUTION_ORDERS', 'SYSTEM_METRICS', 'SIGNALS', 'DEAD_LETTERS'].map((n) => `${prefix}${n}`);
  let sim: Simulator;
  let nc: NatsConnection;
  let database: TestDatabase;
  let planner: PlannerApp;
  let plannerUrl: string;
  let app: ConsoleApp;
  let browser: Browser;
  let page: Page;
  let pool: SimPoolView;
  let gridId: string;
  let markupId: string;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const config = loadConfig(simSchema, { env: {}, flags: { seed: '53', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', 'tx-rate': '0', tokens: '2', 'pools-per-kind': '2' } }).values;
    sim = createSimulator(config, { manual: true, logger });
    const endpoints = await sim.start();
    sim.chain.advanceSlot(1);
    pool = sim.chain.pools().find((p) => p.transferFees === undefined)!;
    nc = await connectLocal();
    database = await createServerDatabase();
    const loaded = loadConfig(plannerSchema, {
      env: {},
      flags: { 'rpc-endpoints': endpoints.rpc, 'database-url': database.url!, port: '0', 'subject-prefix': prefix, 'stream-max-bytes-scale': String(TEST_STREAM_MAX_BYTES_SCALE), 'planner-id': 'console-planner', 'strategy-reload-interval': '200' },
    });
    planner = await createPlannerApp(loaded, { logger, pools: [pool.address], retryDelayMs: 20 });
    ({ http: plannerUrl } = await planner.start());

    // A grid added over the planner's API, with orders and a held level in its state.
    const added = await fetch(`${plannerUrl}/strategies`, {
      method: 'POST',
      body: JSON.stringify({ type: 'grid', params: { pool: pool.address, token: pool.pool.tokenA, lowerPrice: 0.5, upperPrice: 1.5, levels: 3, amountPerLevel: '2000000' } }),
    });
    expect(added.status).toBe(201);
    gridId = ((await added.json()) as { id: string }).id;
    await database.db.query("INSERT INTO grid_orders (strategy_id, price_level, amount, filled, status) VALUES ($1, 0.5, 2000000, 0, 'pending'), ($1, 1.0, 2000000, 500000, 'partial'), ($1, 1.0, 2000000, 2000000, 'filled')", [gridId]);
    await planner.state.keys.setStrategyState(gridId, { version: 1, levels: [{ buyFilled: true, sellFilled: false, round: 0 }, { buyFilled: false, sellFilled: false, round: 0 }], open: {} });
    // Two paper fills of the grid: 4,000,000 tokens bought for 2,000,000 quote atoms, 1,000,000 sold
    // for 700,000: 700,000 − 500,000 = 200,000 realized.
    const trades = new TradeStore(database.db);
    for (const [n, buy] of [[1, true], [2, false]] as const) {
      const opportunityId = `55555555-0000-4000-8000-00000000000${n}`;
      const [inputMint, inputAmount, outputMint, outputAmount] = buy ? [pool.pool.tokenB, 2_000_000n, pool.pool.tokenA, 4_000_000n] : [pool.pool.tokenA, 1_000_000n, pool.pool.tokenB, 700_000n];
      const route = [{ step: 0, pool: pool.address, dex: pool.dex, inputMint, outputMint, inputAmount, outputAmount, fee: 0n, feeMint: inputMint, priceImpact: 0, slot: 1n }];
      await trades.insertPaper({ id: tradeIdOf(opportunityId), opportunityId, executorId: 'console-test', strategy: 'grid', strategyId: gridId, walletId: null, path: 'direct', profitMint: pool.pool.tokenB, expectedProfit: 0n, tip: 0n, route, actualProfit: 0n, fees: 5_000n, slot: 1n });
    }
    // A paused row edited by SQL with markup in it: the page must show it as text.
    markupId = (await new StrategyStore(database.db).insert('dca', { token: MARKUP }, false)).id;

    app = await startConsole({
      host: '127.0.0.1',
      port: 0,
      auth: DEFAULT_AUTH_SETTINGS,
      services: [{ name: 'planner', health: `${plannerUrl}/health`, ready: `${plannerUrl}/ready` }],
      quoteUrl: '',
      plannerUrl,
      pools: { rows: async () => [], close: async () => undefined },
      latency: {},
      logger,
      intervals: { servicesMs: 200 },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`${app.url}/`);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await planner?.close();
    await deleteStreams(nc, STREAMS);
    await nc?.close();
    await database?.drop();
    await sim?.close();
  });

  it("lists the planner's strategies with status, open grid orders, position and P&L", async () => {
    const rows = page.locator('#strategies tbody tr');
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(3);
    const arbitrage = planner.service.strategies[0]!.id;
    expect(await page.locator(`tr[data-strategy="${arbitrage}"] td`).nth(1).textContent()).toBe('arbitrage');
    expect(await page.locator(`tr[data-strategy="${arbitrage}"]`).getAttribute('data-status')).toBe('enabled');

    const grid = page.locator(`tr[data-strategy="${gridId}"]`);
    expect(await grid.getAttribute('data-status')).toBe('enabled');
    // this planner runs arbitrage only: the grid is enabled for a grid planner
    expect(await grid.locator('td').nth(2).textContent()).toBe('enabled (other planner)');
    expect(await grid.locator('td.orders').getAttribute('data-open')).toBe('2');
    expect(await grid.locator('td.orders .order').evaluateAll((els) => els.map((e) => e.getAttribute('data-status')))).toEqual(['pending', 'partial']);
    expect(await grid.locator('td.orders .order[data-status="partial"]').textContent()).toBe('@1 partial 500\u2009000/2\u2009000\u2009000');
    // level 0 held: 2,000,000 token atoms bought at 0.5 → cost 1,000,000 quote atoms, valued at the pool's price
    expect(await grid.locator('td.position').textContent()).toMatch(/^2\u2009000\u2009000 /);
    expect(await grid.locator('td.cost').textContent()).toBe('1\u2009000\u2009000');
    const detail = (await (await fetch(`${plannerUrl}/strategies/${gridId}`)).json()) as { position: { unrealizedPnl: string } };
    expect((await grid.locator('td.pnl').textContent())!.replace(/\u2009/g, '')).toBe(detail.position.unrealizedPnl);
    expect(await grid.locator('td.realized').getAttribute('data-fills')).toBe('2');
    expect(await grid.locator('td.realized').textContent()).toMatch(/^200\u2009000 /);
    expect(await grid.locator('td.realized').getAttribute('title')).toContain('position 3000000, cost 1500000');
    expect(await page.locator(`tr[data-strategy="${arbitrage}"] td.realized`).textContent()).toBe('–');
    expect(await grid.locator('button.toggle').textContent()).toBe('pause');

    // markup from the row is text: no element made of it, nothing run
    const markup = page.locator(`tr[data-strategy="${markupId}"]`);
    expect(await markup.getAttribute('data-status')).toBe('paused');
    expect(await markup.locator('td.params').textContent()).toBe(JSON.stringify({ token: MARKUP }));
    expect(await page.locator('#strategies img, #strategies b').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as unknown as { __injected?: number }).__injected)).toBeUndefined();
    await page.locator('#strategies').screenshot({ path: resolve(ARTIFACTS, 'strategies.png') });
  });

  it('pauses a grid from its button: the planner stops it and its open orders are cancelled; resume runs it again', async () => {
    const grid = page.locator(`tr[data-strategy="${gridId}"]`);
    await grid.locator('button.toggle').click();
    await expect.poll(() => grid.getAttribute('data-status'), { timeout: 10_000 }).toBe('paused');
    expect(await grid.locator('td.orders').getAttribute('data-open')).toBe('0');
    const statuses = await database.db.query<{ status: string }>('SELECT status FROM grid_orders WHERE strategy_id = $1 ORDER BY price_level, status', [gridId]);
    expect(statuses.map((r) => r.status).sort()).toEqual(['cancelled', 'cancelled', 'filled']);
    expect(await grid.locator('button.toggle').textContent()).toBe('resume');
    await grid.locator('button.toggle').click();
    await expect.poll(() => grid.getAttribute('data-status'), { timeout: 10_000 }).toBe('enabled');
    const row = await eventually(async () => {
      const r = await database.db.query<{ enabled: boolean }>('SELECT enabled FROM strategy_configs WHERE id = $1', [gridId]);
      return r[0]?.enabled === true ? r[0] : undefined;
    }, 10_000, 'the grid enabled again');
    expect(row.enabled).toBe(true);
  });
});
