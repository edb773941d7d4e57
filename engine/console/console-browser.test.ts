/**
 * The console in a real browser: headless Chromium from Debian's packages (scripts/services.sh
 * installs it) driven by playwright-core, against the one-process engine under a manual simulator,
 * a real external quote service and a real PostgreSQL with trades and wallets in it. Every port is
 * bound to 0. Screenshots of the page and of each panel go to test-artifacts/console/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';

import { connect, type NatsConnection } from 'nats';
import { SignJWT } from 'jose';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { eventually, PARSE_WORKER, startEngineUnderSim, type EngineUnderSim } from '../app/testing.js';
import { DEFAULT_AUTH_SETTINGS } from '../auth/index.js';
import { defaultExternalConfig } from '../external/external-config.js';
import { createExternalQuoteService, type ExternalQuoteService } from '../external/external-quote-service.js';
import { createLogger } from '../obs/logger.js';
import { migrateUp } from '../state/index.js';
import { createServerDatabase, type TestDatabase } from '../state/db/testing.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { swapTransaction, trader } from '../sim/testing/chain-fixtures.js';
import { quoteLatencySource, startConsole, streamLatencySource, type ConsoleApp } from './console-app.js';
import { cachePoolRows } from './pool-rows.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const ARTIFACTS = resolve(import.meta.dirname, '../../test-artifacts/console');
const ready = existsSync(PARSE_WORKER) && existsSync(CHROMIUM);

describe.skipIf(!ready)('the web console in a real browser', () => {
  let e: EngineUnderSim;
  let external: ExternalQuoteService;
  let database: TestDatabase;
  let app: ConsoleApp;
  let browser: Browser;
  let page: Page;
  let nc: NatsConnection;
  const stream = `CONSOLE_BROWSER_${process.pid}_${Date.now()}`;
  const subjectRoot = `test.${stream}.trade.opportunities`;
  const logger = createLogger({ name: 'console-test', level: 'silent' });

  const shot = async (name: string, selector?: string): Promise<void> => {
    const path = resolve(ARTIFACTS, `${name}.png`);
    if (selector === undefined) await page.screenshot({ path, fullPage: true });
    else await page.locator(selector).screenshot({ path });
    expect(existsSync(path)).toBe(true);
  };

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    e = await startEngineUnderSim();
    await eventually(() => (e.engine.scanner.connected ? true : undefined), 10_000, 'stream connected');
    external = createExternalQuoteService(defaultExternalConfig({ grpcPort: 0, 'metrics.port': 0, quoteUrl: `${e.simEndpoints.http}/quote` }), { logger });
    const externalEndpoints = await external.start();

    // The platform's tables with a few rows: a worker below half its expected balance, trades, paper trades.
    database = await createServerDatabase();
    const db = database.db;
    await migrateUp(db);
    const [treasure] = await db.query<{ id: string }>(`INSERT INTO wallets (tier, address, encrypted_private_key, expected_balance, actual_balance) VALUES ('treasure', 'Treasure1111111111111111111111111111111111', 'sealed', '{}', '{"SOL":"90000000000"}') RETURNING id`);
    const [worker] = await db.query<{ id: string }>(`INSERT INTO wallets (tier, address, encrypted_private_key, expected_balance, actual_balance) VALUES ('worker', 'Worker11111111111111111111111111111111111', 'sealed', '{"SOL":"2000000000"}', '{"SOL":"400000000"}') RETURNING id`);
    await db.query(`INSERT INTO wallet_transfers (signature, from_wallet_id, to_wallet_id, token, amount, reason, transaction, last_valid_block_height, status) VALUES ('sigTopUp1', $1, $2, 'SOL', 1600000000, 'top_up', 'AQID', 100, 'signed')`, [treasure!.id, worker!.id]);
    await db.query(`INSERT INTO trades (strategy, wallet_id, signature, expected_profit, actual_profit, status, created_at) VALUES ('arbitrage', $1, 'sigConfirmed1', 12000, 11500, 'confirmed', now() - interval '2 minutes'), ('arbitrage', $1, 'sigFailed1', 9000, NULL, 'failed', now() - interval '1 minute')`, [treasure!.id]);
    await db.query(`INSERT INTO trades (strategy, expected_profit, actual_profit, status, created_at) VALUES ('grid', 5000, 5000, 'paper', now() - interval '3 minutes'), ('grid', 7000, -2000, 'paper', now() - interval '2 minutes'), ('dca', 3000, 4000, 'paper', now() - interval '1 minute')`);

    // A stream of its own in the shared NATS stands in for TRADE_OPPORTUNITIES.
    nc = await connect({ servers: 'nats://127.0.0.1:4222' });
    await (await nc.jetstreamManager()).streams.add({ name: stream, subjects: [`${subjectRoot}.>`] });

    app = await startConsole({
      host: '127.0.0.1',
      port: 0,
      auth: DEFAULT_AUTH_SETTINGS,
      services: [
        { name: 'quote-service', health: `${e.endpoints.quote}/health` },
        { name: 'scanner', health: `${e.endpoints.scanner}/health` },
        { name: 'external-quotes', health: `${externalEndpoints.metrics}/health` },
      ],
      quoteUrl: e.endpoints.quote,
      pools: cachePoolRows(e.engine.cache, () => e.engine.scanner.pools),
      latency: { quote: quoteLatencySource(e.endpoints.quoteMetrics), stream: streamLatencySource(e.endpoints.scannerMetrics) },
      db: () => db,
      busServers: ['nats://127.0.0.1:4222'],
      opportunityStream: stream,
      logger,
      intervals: { servicesMs: 200, poolsMs: 100, metricsMs: 500, platformMs: 500 },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${app.url}/`);
    await page.waitForSelector('#connection[data-state="live"]');
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await external?.close();
    await e?.close();
    await database?.drop();
    await (await nc?.jetstreamManager())?.streams.delete(stream).catch(() => undefined);
    await nc?.close();
  });

  it("loads and shows every pool of the simulator, with its DEX, mints, slot and freshness", async () => {
    const pools = e.sim.chain.pools();
    expect(pools.length).toBeGreaterThan(0);
    for (const p of pools) {
      const row = page.locator(`tr[data-pool="${p.address}"]`);
      await row.waitFor();
      const info = e.sim.chain.poolInfo(p.address)!;
      const entry = e.engine.cache.get(p.address)!;
      await expect.poll(() => row.locator('td').nth(1).textContent()).toBe(entry.dex);
      expect(await row.getAttribute('class')).toBe('fresh');
      expect(await row.locator('td').nth(2).getAttribute('title')).toBe(`${info.tokenA.mint} / ${info.tokenB.mint}`);
      expect(await row.locator('.slot').textContent()).toBe(entry.slot.toString());
    }
    await shot('page');
    await shot('services', '#services');
    await shot('pools', '#pools');
  });

  it('filters the pools by DEX', async () => {
    const dex = e.engine.cache.get(e.sim.chain.pools()[0]!.address)!.dex;
    await page.fill('#pool-filter', dex);
    const expected = e.sim.chain.pools().filter((p) => e.engine.cache.get(p.address)!.dex === dex).length;
    await expect.poll(() => page.locator('#pools tbody tr').count()).toBe(expected);
    for (const cell of await page.locator('#pools tbody tr td:nth-child(2)').allTextContents()) expect(cell).toBe(dex);
    await shot('pools-filtered', '#pools');
    await page.fill('#pool-filter', '');
    await expect.poll(() => page.locator('#pools tbody tr').count()).toBe(e.sim.chain.pools().length);
  });

  for (const [swapMode, amount] of [['ExactIn', '1000000000'], ['ExactOut', '150000000']] as const) {
    it(`answers a quote typed into the quote box (${swapMode}) with GET /quote's output`, async () => {
      await page.fill('#quote-input', WSOL_MINT);
      await page.fill('#quote-output-mint', USDC_MINT);
      await page.fill('#quote-amount', amount);
      await page.selectOption('#quote-mode', swapMode);
      await page.click('#quote-submit');
      await page.waitForSelector('#quote-result[data-state="done"] #quote-out-amount');
      const direct = (await (await fetch(`${e.endpoints.quote}/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=${amount}&swapMode=${swapMode}`)).json()) as { outputAmount: string; inputAmount: string; pool: string };
      expect(await page.getAttribute('#quote-out-amount', 'data-value')).toBe(direct.outputAmount);
      expect(await page.getAttribute('#quote-in-amount', 'data-value')).toBe(direct.inputAmount);
      expect(await page.locator('#quote-result table tbody tr td:nth-child(3)').getAttribute('title')).toBe(direct.pool);
      await shot(`quote-${swapMode}`, '#quote');
    });
  }

  it("shows the quote service's error for a pair no pool trades", async () => {
    await page.fill('#quote-input', WSOL_MINT);
    await page.fill('#quote-output-mint', 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb');
    await page.fill('#quote-amount', '1000');
    await page.selectOption('#quote-mode', 'ExactIn');
    await page.click('#quote-submit');
    await page.waitForSelector('#quote-result[data-state="done"] #quote-error');
    expect(await page.textContent('#quote-error')).toMatch(/^404 TP_ERR_UNKNOWN_MINT/);
  });

  it("changes a pool's row within a second of a swap on the simulator", async () => {
    const chain = e.sim.chain;
    const pool = chain.pools().find((p) => {
      const i = chain.poolInfo(p.address)!;
      return (i.tokenA.mint === WSOL_MINT && i.tokenB.mint === USDC_MINT) || (i.tokenA.mint === USDC_MINT && i.tokenB.mint === WSOL_MINT);
    })!;
    const row = `tr[data-pool="${pool.address}"]`;
    const before = await page.textContent(`${row} .slot`);
    const info = chain.poolInfo(pool.address)!;
    const tx = swapTransaction(chain, trader(chain), info, { aToB: info.tokenA.mint === USDC_MINT, exactIn: true, amount: 5_000_000n, threshold: 0n });
    const started = Date.now();
    chain.sendTransaction(tx);
    chain.advanceSlot(1);
    // Evaluated in the page (a string: the test's own types have no DOM).
    await page.waitForFunction(`document.querySelector(${JSON.stringify(`${row} .slot`)})?.textContent !== ${JSON.stringify(before)}`, undefined, { timeout: 1_000 });
    const elapsed = Date.now() - started;
    expect(elapsed).toBeLessThan(1_000);
    const entry = e.engine.cache.get(pool.address)!;
    expect(BigInt((await page.textContent(`${row} .slot`))!)).toBeGreaterThan(BigInt(before!));
    await expect.poll(async () => (await page.textContent(`${row} .reserve-a`))!.replace(/\u2009/g, '')).toBe(e.engine.cache.get(pool.address)!.reserveA.toString());
    expect(entry.slot).toBeGreaterThan(BigInt(before!));
    await shot('pools-after-swap', '#pools');
  });

  it('draws the latency charts from the services\' histograms', async () => {
    for (let i = 0; i < 20; i++) await fetch(`${e.endpoints.quote}/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=${1_000_000 + i}`);
    await eventually(() => (app.hub.snapshot().latency.some((p) => p.quoteP50 !== null && p.quoteP99 !== null) ? true : undefined), 10_000, 'a quote latency point');
    await page.waitForFunction("document.querySelectorAll('#chart-quote canvas').length === 1");
    await shot('latency', '#latency');
  });

  it('shows trades with their status and profit, wallets by tier, and the paper trades with their PnL', async () => {
    await page.waitForSelector('#trades tr.trade.confirmed');
    expect(await page.locator('#trades > table > tbody > tr').count()).toBe(2);
    expect(await page.textContent('#trades tr.trade.failed td.status')).toBe('failed');
    expect((await page.textContent('#trades tr.trade.confirmed td:nth-child(5)'))!.replace(/\u2009/g, '')).toBe('11500');
    expect(await page.locator('#wallets .tier[data-tier="treasure"]').count()).toBe(1);
    expect(await page.locator('#wallets .tier[data-tier="worker"] tr.low').count()).toBe(1);
    expect(await page.locator('#transfers > tbody > tr').count()).toBe(1);
    expect(await page.textContent('#transfers > tbody > tr td:nth-child(2)')).toBe('top_up');
    expect((await page.textContent('#transfers > tbody > tr td:nth-child(6)'))!.replace(/\u2009/g, '')).toBe('1600000000');
    expect(await page.locator('#paper > table > tbody > tr').count()).toBe(3);
    expect(await page.textContent('#paper > table > tbody > tr:first-child td:nth-child(2)')).toBe('dca');
    await page.waitForFunction("document.querySelectorAll('#chart-pnl canvas').length === 1");
    expect(app.hub.snapshot().platform.paper.pnl.map((p) => p.cumulative)).toEqual([5000, 3000, 7000]);
    expect(await page.isVisible('#opportunities .empty')).toBe(true);
    expect(await page.textContent('#opportunities .empty')).toContain('No opportunities published yet');
    await shot('trades', '#trades');
    await shot('wallets', '#wallets');
    await shot('paper', '#paper');
  });

  it('shows an opportunity as soon as it is published', async () => {
    await nc.jetstream().publish(`${subjectRoot}.arbitrage`, JSON.stringify({ strategy: 'arbitrage', expectedProfit: '250000', route: [WSOL_MINT, USDC_MINT, WSOL_MINT] }));
    await page.waitForSelector('#opportunities tr[data-seq="1"]');
    expect(await page.textContent('#opportunities tr[data-seq="1"] td:nth-child(3)')).toBe('arbitrage');
    expect((await page.textContent('#opportunities tr[data-seq="1"] td:nth-child(4)'))!.replace(/\u2009/g, '')).toBe('250000');
    expect(await page.isVisible('#opportunities .empty')).toBe(false);
    await shot('opportunities', '#opportunities');
  });

  it('asks for a token when auth is on, then goes live with it', async () => {
    const secret = 'a-browser-test-secret-of-32-bytes-or-more';
    const guarded = await startConsole({
      host: '127.0.0.1',
      port: 0,
      auth: { ...DEFAULT_AUTH_SETTINGS, 'auth.mode': 'on', 'auth.jwtSecret': secret },
      services: [{ name: 'quote-service', health: `${e.endpoints.quote}/health` }],
      quoteUrl: e.endpoints.quote,
      pools: cachePoolRows(e.engine.cache, () => e.engine.scanner.pools),
      latency: {},
      logger,
    });
    const other = await browser.newPage({ viewport: { width: 1280, height: 400 } });
    try {
      await other.goto(`${guarded.url}/`);
      await other.waitForSelector('#auth:not([hidden])');
      expect(await other.textContent('#auth-error')).toBe('a bearer token is required');
      expect(await other.getAttribute('#connection', 'data-state')).toBe('down');
      await other.screenshot({ path: resolve(ARTIFACTS, 'sign-in.png') });
      const jwt = await new SignJWT({ sub: 'operator' }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('5m').sign(new TextEncoder().encode(secret));
      await other.fill('#auth-token', jwt);
      await other.click('#auth button[type="submit"]');
      await other.waitForSelector('#connection[data-state="live"]');
      await other.waitForSelector(`tr[data-pool="${e.engine.scanner.pools[0]}"]`);
    } finally {
      await other.close();
      await guarded.close();
    }
  });

  it('turns a stopped service red', async () => {
    const cell = 'tr[data-service="external-quotes"] td.health';
    expect(await page.getAttribute(cell, 'data-state')).toBe('up');
    await external.close();
    await page.waitForSelector(`${cell}[data-state="down"]`);
    expect(await page.getAttribute('tr[data-service="quote-service"] td.health', 'data-state')).toBe('up');
    await shot('services-one-down', '#services');
    await shot('page-final');
  });
});
