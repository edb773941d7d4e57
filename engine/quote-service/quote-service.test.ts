import { gunzipSync } from 'node:zlib';

import * as grpc from '@grpc/grpc-js';
import { Profile } from 'pprof-format';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { AmmPool } from '../dex/index.js';
import { createLogger } from '../obs/logger.js';
import { hasPromtool, runPromtool } from '../obs/promtool.js';
import { QUOTE_METRIC_NAMES } from '../obs/quote-metrics.js';
import { loadTidepoolProto } from '../proto.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { QuoteErrorCode } from '../quote/errors.js';
import { defaultQuoteConfig } from './quote-config.js';
import { createQuoteCache, createQuoteService, type QuoteService } from './quote-service.js';
import type { UpstreamQuote } from '../quote/quote-wire.js';
import { manualSimulator } from '../quote/testing.js';

/**
 * createQuoteService as `tidepool quote-service` starts it: both ports bound (0), pool updates fed
 * through its update handler as bus messages, metrics scraped from the metrics port and checked by
 * promtool, heap profiles parsed, graceful close.
 */

const sim = manualSimulator(5);
const chain = sim.chain;
const logger = createLogger({ name: 'quote-service-test', level: 'silent' });
const promtoolMissing = !hasPromtool();
let service: QuoteService;
let base = '';
let metricsBase = '';

/** A PoolStateUpdateEvent (spec 02) for an AMM pool of the simulator, with its AmmInfo account in rawData and its effective reserves. */
function ammEvent(pool: AmmPool, slot: bigint): string {
  return JSON.stringify({
    eventId: '7d7a3f0e-8a53-4c1e-9d8e-3b8f4f6f0a11',
    timestamp: Date.now(),
    source: 'blockstream',
    latency: 1,
    pool: { address: pool.address, dex: pool.dex, tokenA: pool.tokenA, tokenB: pool.tokenB },
    state: {
      slot: slot.toString(),
      reserveA: pool.reserveA.toString(),
      reserveB: pool.reserveB.toString(),
      feeNumerator: pool.feeNumerator.toString(),
      feeDenominator: pool.feeDenominator.toString(),
      rawData: Buffer.from(chain.getAccount(pool.address!)!.data).toString('base64'),
    },
    transaction: { signature: '5'.repeat(88), confirmed: false },
  });
}

const ammPools = (): AmmPool[] => chain.pools().flatMap((v) => (v.pool.dex === 'dexa_amm' ? [v.pool] : []));

beforeAll(async () => {
  const { rpc } = await sim.start();
  const config = defaultQuoteConfig({ port: 0, 'metrics.port': 0, 'grpc.port': 0, rateLimitRps: 100_000, 'rpc.endpoints': [rpc] });
  // No loader given: the service builds the RPC fallback's loader from rpc.endpoints.
  service = createQuoteService(config, { cache: createQuoteCache(config), logger });
  const { port, metricsPort } = await service.start();
  expect(port).toBeGreaterThan(0);
  expect(metricsPort).toBeGreaterThan(0);
  expect(metricsPort).not.toBe(port);
  base = `http://127.0.0.1:${port}`;
  metricsBase = `http://127.0.0.1:${metricsPort}`;
});

afterAll(async () => {
  await service.close();
  await sim.close();
});

async function scrape(from = metricsBase): Promise<string> {
  const res = await fetch(`${from}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  return res.text();
}

function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? NaN : Number(line.slice(series.length + 1));
}

describe('createQuoteService', () => {
  it('stores bus messages (counted, parse errors counted and dropped) and quotes them from the cache', async () => {
    const pools = ammPools();
    expect(pools.length).toBeGreaterThan(0);
    const slot = chain.slot() + 1n;
    for (const pool of pools) expect(service.updates.handleMessage(Buffer.from(ammEvent(pool, slot)))).toBe('inserted');
    expect(service.updates.handleMessage(ammEvent(pools[0]!, slot))).toBe('ignored_equal_slot');
    expect(service.updates.handleMessage('{"pool":')).toBe('parse_error');
    expect(service.updates.handleMessage(JSON.stringify({ pool: { dex: 'dexz' }, state: {} }))).toBe('parse_error');
    service.updates.setConsumerLag(7);

    const pair = pools[0]!;
    const res = await fetch(`${base}/quote?input=${pair.tokenA}&output=${pair.tokenB}&amount=1000000`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ source: 'cache', slot: slot.toString() });

    const text = await scrape();
    expect(sample(text, QUOTE_METRIC_NAMES.poolUpdatesReceived)).toBe(pools.length + 1);
    expect(sample(text, QUOTE_METRIC_NAMES.busParseErrors)).toBe(2);
    expect(sample(text, QUOTE_METRIC_NAMES.busConsumerLagMessages)).toBe(7);
    expect(sample(text, QUOTE_METRIC_NAMES.quoteCacheHits)).toBe(1);
    expect(sample(text, `${QUOTE_METRIC_NAMES.quoteLatencySeconds}_count{source="cache"}`)).toBe(1);
    // Gauges refreshed by the scrape itself, no /health needed.
    expect(sample(text, QUOTE_METRIC_NAMES.poolCacheTotalPools)).toBe(pools.length);
    expect(sample(text, QUOTE_METRIC_NAMES.poolCacheFreshPools)).toBe(pools.length);
    expect(sample(text, QUOTE_METRIC_NAMES.poolCacheStalePools)).toBe(0);
    expect(service.directory.size).toBe(pools.length);
  });

  it('falls back to RPC for a pair the bus never delivered once a pool of it is known, and counts RPC errors', async () => {
    const other = chain.pools().find((v) => v.pool.dex !== 'dexa_amm')!;
    service.directory.add({ address: other.address, dex: other.dex, tokenA: other.pool.tokenA, tokenB: other.pool.tokenB });
    const ammPair = ammPools().some((p) => [p.tokenA, p.tokenB].sort().join() === [other.pool.tokenA, other.pool.tokenB].sort().join());
    const res = await fetch(`${base}/quote?input=${other.pool.tokenA}&output=${other.pool.tokenB}&amount=1000`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { source: string }).source).toBe(ammPair ? 'cache' : 'rpc');

    sim.faults.setRpcFault('getMultipleAccounts', { errorRate: 1 });
    try {
      const before = sample(await scrape(), QUOTE_METRIC_NAMES.rpcFallbackErrors);
      const unknown = 'So11111111111111111111111111111111111111113';
      service.directory.add({ address: unknown, dex: 'dexa_amm', tokenA: unknown, tokenB: USDC_MINT });
      const failed = await fetch(`${base}/quote?input=${unknown}&output=${USDC_MINT}&amount=1000`);
      expect(failed.status).toBe(503);
      expect(((await failed.json()) as { error: { code: string } }).error.code).toBe(QuoteErrorCode.RpcFallbackFailed);
      expect(sample(await scrape(), QUOTE_METRIC_NAMES.rpcFallbackErrors)).toBe(before + 1);
    } finally {
      sim.faults.clear();
    }
  });

  it('serves every quote-service metric of spec 02 on the metrics port and on the quote port', async () => {
    const text = await scrape();
    for (const name of Object.values(QUOTE_METRIC_NAMES)) expect(text).toContain(`# TYPE ${name} `);
    expect(text).toContain('quote_service_quote_latency_seconds_bucket{le="0.005",source="rpc"}');
    expect(text).toContain('process_resident_memory_bytes'); // the Node process metrics too
    expect(await scrape(base)).toContain(`# TYPE ${QUOTE_METRIC_NAMES.quotes} counter`);
    const missing = await fetch(`${metricsBase}/nope`);
    expect(missing.status).toBe(404);
    await missing.text();
  });

  it.skipIf(promtoolMissing)('passes promtool check metrics on the scraped text', async () => {
    const r = runPromtool(['check', 'metrics'], await scrape());
    expect(`${r.stdout}${r.stderr}`.trim()).toBe('');
    expect(r.status).toBe(0);
  });

  it('answers 429 with Retry-After through the configured RATE_LIMIT_RPS', async () => {
    const config = defaultQuoteConfig({ port: 0, 'metrics.port': 0, 'grpc.port': 0, rateLimitRps: 1, 'debug.heapProfile': false });
    const limited = createQuoteService(config, { cache: createQuoteCache(config), logger });
    const { port } = await limited.start();
    try {
      const statuses: number[] = [];
      let last: Response | undefined;
      for (let i = 0; i < 3; i++) {
        last = await fetch(`http://127.0.0.1:${port}/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=1`, { headers: { 'x-api-key': 'k' } });
        statuses.push(last.status);
        await last.text();
      }
      // Nothing loaded in that cache and no RPC: 503 (nothing can answer yet), then the limit.
      expect(statuses).toEqual([503, 503, 429]);
      expect(Number(last!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    } finally {
      await limited.close();
    }
  });
});

describe('quote API v1 wiring', () => {
  it('auth on: the REST quote paths want a bearer token, probes stay open; /ready follows the cache', async () => {
    const secret = 'a-test-secret-that-is-32-bytes-long!!';
    const config = defaultQuoteConfig({ port: 0, 'metrics.port': 0, 'grpc.port': 0, 'debug.heapProfile': false, 'bus.enabled': false, 'auth.mode': 'on', 'auth.jwtSecret': secret });
    const cache = createQuoteCache(config);
    const svc = createQuoteService(config, { cache, logger });
    const { port } = await svc.start();
    const base = `http://127.0.0.1:${port}`;
    try {
      for (const path of [`/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=1`, '/v1/pools', `/swap/v1/quote?inputMint=${WSOL_MINT}&outputMint=${USDC_MINT}&amount=1`]) {
        const r = await fetch(base + path);
        expect(r.status, path).toBe(401);
        expect(r.headers.get('www-authenticate'), path).toMatch(/^Bearer/);
      }
      expect((await fetch(`${base}/health`)).status).toBe(503); // empty cache, no RPC: unavailable
      const notReady = await fetch(`${base}/ready`);
      expect(notReady.status).toBe(503);
      expect(((await notReady.json()) as { reason: string }).reason).toMatch(/pool cache not loaded/);
      const views = sim.chain.pools();
      for (const view of views) {
        const pool = view.pool as AmmPool;
        cache.upsert({ address: view.address, dex: view.dex, tokenA: pool.tokenA, tokenB: pool.tokenB, reserveA: 0n, reserveB: 0n, slot: 1n, pool: view.pool, context: view.ctx });
      }
      const ready = await fetch(`${base}/ready`);
      expect(ready.status).toBe(200);
      const token = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('5m').sign(new TextEncoder().encode(secret));
      const pools = await fetch(`${base}/v1/pools?limit=1`, { headers: { authorization: `Bearer ${token}` } });
      expect(pools.status).toBe(200);
      expect(((await pools.json()) as { total: number }).total).toBe(views.length);
    } finally {
      await svc.close();
    }
  });
});

describe('GET /debug/pprof/heap', () => {
  it('serves a gzipped pprof profile that decodes, on both ports', async () => {
    const keep: object[] = [];
    for (let i = 0; i < 50_000; i++) keep.push({ i, s: `live-${i}` }); // allocations to sample
    for (const from of [metricsBase, base]) {
      const res = await fetch(`${from}/debug/pprof/heap`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/octet-stream');
      expect(res.headers.get('content-disposition')).toBe('attachment; filename="heap.pb.gz"');
      const profile = Profile.decode(gunzipSync(Buffer.from(await res.arrayBuffer())));
      const strings = profile.stringTable.strings;
      expect(profile.sampleType.map((t) => `${strings[Number(t.type)]}/${strings[Number(t.unit)]}`)).toEqual(['objects/count', 'space/bytes']);
      expect(profile.sample.length).toBeGreaterThan(0);
      expect(profile.location.length).toBeGreaterThan(0);
      const functionIds = new Set(profile.function.map((f) => Number(f.id)));
      for (const loc of profile.location) for (const line of loc.line) expect(functionIds.has(Number(line.functionId))).toBe(true);
      const bytes = profile.sample.reduce((s, x) => s + Number(x.value[1]), 0);
      expect(bytes).toBeGreaterThan(0);
    }
    expect(keep.length).toBe(50_000);
  });

  it('serves the Chrome DevTools .heapprofile JSON with format=devtools, and 400 for another format', async () => {
    const res = await fetch(`${metricsBase}/debug/pprof/heap?format=devtools`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="heap.heapprofile"');
    const profile = (await res.json()) as { head: { callFrame: { functionName: string }; children: unknown[] }; samples: unknown[] };
    expect(profile.head.callFrame.functionName).toBe('(root)');
    expect(Array.isArray(profile.head.children)).toBe(true);
    expect(Array.isArray(profile.samples)).toBe(true);
    const bad = await fetch(`${base}/debug/pprof/heap?format=svg`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe(QuoteErrorCode.BadParameter);
  });
});

async function until<T>(probe: () => T | undefined, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('the gRPC quote stream of the service', () => {
  it('binds grpc.port and pushes a quote when a bus message stores a new state of the pair', async () => {
    const config = defaultQuoteConfig({ port: 0, 'metrics.port': 0, 'grpc.port': 0, 'debug.heapProfile': false, 'bus.enabled': false });
    const s = createQuoteService(config, { cache: createQuoteCache(config), logger });
    const { port, metricsPort, grpcPort } = await s.start();
    expect(grpcPort).toBeGreaterThan(0);
    expect(new Set([port, metricsPort, grpcPort]).size).toBe(3);
    const { QuoteService } = loadTidepoolProto();
    const client = new QuoteService(`127.0.0.1:${grpcPort}`, grpc.credentials.createInsecure());
    try {
      const pool = ammPools()[0]!;
      const slot = chain.slot() + 10n;
      s.updates.handleMessage(ammEvent(pool, slot));
      const quotes: UpstreamQuote[] = [];
      const call = (client as unknown as { StreamBatchQuotes: (r: unknown) => grpc.ClientReadableStream<UpstreamQuote> }).StreamBatchQuotes({
        pairs: [{ inputMint: pool.tokenA, outputMint: pool.tokenB, amount: '1000000' }],
        updateIntervalMs: 60_000,
      });
      call.on('data', (q: UpstreamQuote) => quotes.push(q));
      call.on('error', () => undefined);
      await until(() => (quotes.length === 1 ? true : undefined), 'the first quote');
      expect(quotes[0]).toMatchObject({ origin: 'QUOTE_ORIGIN_CACHE', slot: slot.toString() });
      s.updates.handleMessage(ammEvent({ ...pool, reserveB: pool.reserveB * 2n }, slot + 1n));
      await until(() => (quotes.length === 2 ? true : undefined), 'the pushed quote');
      expect(quotes[1]!.slot).toBe((slot + 1n).toString());
      expect(BigInt(quotes[1]!.outputAmount)).toBeGreaterThan(BigInt(quotes[0]!.outputAmount));
    } finally {
      client.close();
      await s.close();
    }
  });
});

describe('close', () => {
  it('closes every port', async () => {
    const config = defaultQuoteConfig({ port: 0, 'metrics.port': 0, 'grpc.port': 0, 'debug.heapProfile': false });
    const s = createQuoteService(config, { cache: createQuoteCache(config), logger });
    const { port, metricsPort, grpcPort } = await s.start();
    expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).status).toBe(200);
    await s.close();
    await s.close();
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
    await expect(fetch(`http://127.0.0.1:${metricsPort}/metrics`)).rejects.toThrow();
    const { QuoteService } = loadTidepoolProto();
    const client = new QuoteService(`127.0.0.1:${grpcPort}`, grpc.credentials.createInsecure());
    const ready = await new Promise<Error | undefined>((resolve) => client.waitForReady(Date.now() + 500, resolve));
    client.close();
    expect(ready).toBeInstanceOf(Error);
  });
});
