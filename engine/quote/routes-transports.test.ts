import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { PoolCache } from '../cache/index.js';
import { Dex, SwapMode, type ConcentratedPool } from '../dex/index.js';
import { ProviderFallbackQuoter } from '../external/index.js';
import { createQuoteMetrics } from '../obs/quote-metrics.js';
import { loadTidepoolProto } from '../proto.js';
import type { SimPoolView } from '../sim/market-view.js';
import { quoteFromCache } from './cache-quoter.js';
import type { QuoteEngineOptions } from './quote-engine.js';
import type { QuoteHttpServer } from '../quote-http/quote-http-server.js';
import { quoteToJson } from './answer-json.js';
import { QuoteStreamServer } from '../quote-grpc/quote-stream-server.js';
import { pairId, type UpstreamQuote } from './quote-wire.js';
import { CountingLoader, FakeClock, manualSimulator, quoteHttpServer, storePool, syntheticAmmPool } from './testing.js';

/**
 * Two-hop routes and the fallback order over the real transports: GET /quote (uWS, port 0) and
 * StreamBatchQuotes (grpc-js, port 0) over one engine, on a cache filled from a manual simulator
 * whose market has no ANCHOR/CORAL pool (routes go through SOL or USDC); the simulator's JSON-RPC
 * for the RPC fallback and its /quote API as the external aggregator.
 */

const sim = manualSimulator(7);
const chain = sim.chain;
let rpcUrl = '';
let quoteApiUrl = '';
beforeAll(async () => {
  const urls = await sim.start();
  rpcUrl = urls.rpc;
  quoteApiUrl = `${urls.http}/quote`;
});
afterAll(async () => {
  await sim.close();
});

function mintOf(symbol: string): string {
  return chain.tokens().find((t) => t.symbol === symbol)!.mint;
}
const ANCHOR = mintOf('ANCHOR');
const CORAL = mintOf('CORAL');

const { QuoteService } = loadTidepoolProto();
type StreamClient = grpc.Client & { StreamBatchQuotes: (req: unknown) => grpc.ClientReadableStream<UpstreamQuote> };

interface Harness {
  clock: FakeClock;
  cache: PoolCache;
  http: QuoteHttpServer;
  base: string;
  stream: QuoteStreamServer;
  client: StreamClient;
}
const harnesses: Harness[] = [];
afterEach(async () => {
  sim.faults.rpc.clear();
  for (const h of harnesses.splice(0)) {
    h.client.close();
    await h.stream.close();
    await h.http.close();
  }
});

async function harness(options: Partial<QuoteEngineOptions> & { extra?: SimPoolView[]; fill?: boolean } = {}): Promise<Harness> {
  const clock = new FakeClock();
  const cache = new PoolCache({ now: clock.now, stalenessThresholdMs: 30_000, startupWindowMs: 0 });
  let slot = 100n;
  if (options.fill !== false) for (const view of [...chain.pools(), ...(options.extra ?? [])]) storePool(cache, view, slot++);
  const { extra: _extra, fill: _fill, ...engineOptions } = options;
  const http = quoteHttpServer({ cache, metrics: createQuoteMetrics(), rateLimiter: false, hybridMode: false, clock: () => 0, ...engineOptions });
  const base = `http://127.0.0.1:${await http.start(0)}`;
  const stream = new QuoteStreamServer({ engine: http.engine, shutdownTimeoutMs: 1000 });
  const port = await stream.start(0);
  const client = new QuoteService(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as StreamClient;
  const h = { clock, cache, http, base, stream, client };
  harnesses.push(h);
  return h;
}

async function get(h: Harness, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(h.base + path);
  return { status: res.status, body: JSON.parse(await res.text()) as Record<string, unknown> };
}

async function eventually<T>(probe: () => T | undefined, what: string, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function openStream(h: Harness, pairs: unknown[], updateIntervalMs = 60_000): { quotes: UpstreamQuote[]; call: grpc.ClientReadableStream<UpstreamQuote> } {
  const call = h.client.StreamBatchQuotes({ pairs, slippageBps: 50, updateIntervalMs });
  const quotes: UpstreamQuote[] = [];
  call.on('data', (q: UpstreamQuote) => quotes.push(q));
  call.on('error', () => undefined);
  return { quotes, call };
}

describe('two-hop routes over GET /quote', () => {
  it('answers a pair without a pool of its own through SOL or USDC, exact in and exact out, with every hop', async () => {
    const h = await harness();
    for (const [mode, amount] of [
      ['ExactIn', 25_000_000_000n],
      ['ExactOut', 3_000_000n],
    ] as const) {
      const res = await get(h, `/quote?input=${ANCHOR}&output=${CORAL}&amount=${amount}&swapMode=${mode}`);
      expect(res.status).toBe(200);
      const expected = quoteToJson(quoteFromCache(h.cache, ANCHOR, CORAL, amount, undefined, { mode: mode as SwapMode }));
      expect(res.body).toEqual(expected);
      const route = res.body['route'] as { pool: string; inputMint: string; outputMint: string; inAmount: string; outAmount: string; feeMint: string }[];
      expect(route).toHaveLength(2);
      expect(route[0]!.inputMint).toBe(ANCHOR);
      expect(route[0]!.outputMint).toBe(route[1]!.inputMint);
      expect(route[1]!.outputMint).toBe(CORAL);
      expect(res.body['pool']).toBe(route[0]!.pool);
      if (mode === 'ExactIn') expect(res.body['inputAmount']).toBe(amount.toString());
      else expect(res.body['outputAmount']).toBe(amount.toString());
    }
  });

  it('prefers the deep two-hop route to a shallow direct pool', async () => {
    const amount = 25_000_000_000n;
    const probe = await harness();
    const twoHop = quoteFromCache(probe.cache, ANCHOR, CORAL, amount);
    const shallow = syntheticAmmPool(chain.pools().find((p) => p.dex === Dex.Amm)!, {
      label: 'shallow ANCHOR/CORAL over HTTP',
      tokenA: ANCHOR,
      tokenB: CORAL,
      reserveA: amount,
      reserveB: twoHop.outputAmount,
    });
    const h = await harness({ extra: [shallow] });
    const res = await get(h, `/quote?input=${ANCHOR}&output=${CORAL}&amount=${amount}`);
    expect(res.status).toBe(200);
    expect((res.body['route'] as unknown[]).length).toBe(2);
    expect(res.body['outputAmount']).toBe(twoHop.outputAmount.toString());
    expect(res.body['pool']).not.toBe(shallow.address);
  });
});

describe('two-hop routes over StreamBatchQuotes', () => {
  it('streams both hops, exact in and exact out, and re-pushes when the second hop pool changes', async () => {
    const h = await harness();
    const exactIn = { inputMint: ANCHOR, outputMint: CORAL, amount: '25000000000' };
    const exactOut = { inputMint: ANCHOR, outputMint: CORAL, amount: '3000000', swapMode: 'SWAP_MODE_EXACT_OUT' };
    const inId = pairId(ANCHOR, CORAL, 25_000_000_000n);
    const outId = pairId(ANCHOR, CORAL, 3_000_000n, true);
    const s = openStream(h, [exactIn, exactOut]);
    const first = await eventually(() => s.quotes.find((q) => q.pairId === inId), 'the exact-in quote');
    const firstOut = await eventually(() => s.quotes.find((q) => q.pairId === outId), 'the exact-out quote');
    for (const [q, mode] of [
      [first, SwapMode.ExactIn],
      [firstOut, SwapMode.ExactOut],
    ] as const) {
      const expected = quoteFromCache(h.cache, ANCHOR, CORAL, BigInt(q.pairId === inId ? exactIn.amount : exactOut.amount), undefined, { mode });
      expect(q.error).toBeFalsy();
      expect(q.route.map((hop) => hop.pool)).toEqual(expected.route.map((hop) => hop.pool));
      expect(q.route.map((hop) => hop.slot)).toEqual(expected.route.map((hop) => hop.slot.toString()));
      expect(q.inputAmount).toBe(expected.inputAmount.toString());
      expect(q.outputAmount).toBe(expected.outputAmount.toString());
      expect(q.route[0]!.outAmount).toBe(q.route[1]!.inAmount);
    }
    expect(firstOut.swapMode).toBe('SWAP_MODE_EXACT_OUT');

    // The second hop's pool (SOL/CORAL or USDC/CORAL) moves: its pair is not the quoted pair, yet
    // the stream must quote again and push the new output.
    const secondPool = chain.pool(first.route[1]!.pool)!;
    expect(secondPool.dex === Dex.Clmm || secondPool.dex === Dex.Whirlpool).toBe(true);
    const cl = secondPool.pool as ConcentratedPool;
    // Another state of the same pool: its price a hair higher (0.001 %, within the same tick).
    const moved: SimPoolView = { ...secondPool, pool: { ...cl, sqrtPrice: cl.sqrtPrice + cl.sqrtPrice / 100_000n } };
    const before = s.quotes.length;
    storePool(h.cache, moved, 5_000n);
    const pushed = await eventually(() => s.quotes.slice(before).find((q) => q.pairId === inId), 'a re-push after the second hop changed');
    expect(pushed.route[1]!.slot).toBe('5000');
    expect(pushed.outputAmount).not.toBe(first.outputAmount);
    expect(pushed.outputAmount).toBe(quoteFromCache(h.cache, ANCHOR, CORAL, 25_000_000_000n).outputAmount.toString());
    s.call.cancel();
  });
});

describe('fallback order: cache, RPC, external aggregator', () => {
  it('answers from the external aggregator (source external) when the cache cannot and the RPC is down', async () => {
    const external = new ProviderFallbackQuoter({ quoteUrl: quoteApiUrl, timeoutMs: 5_000 });
    const loader = new CountingLoader(rpcUrl, 2_000);
    const h = await harness({ fill: false, hybridMode: true, loader, external, fallbackDeadlineMs: 3_000 });
    // The directory knows the pools (RPC could read them), but every RPC call fails.
    for (const view of chain.pools()) h.http.engine.directory.add({ address: view.address, dex: view.dex, tokenA: view.pool.tokenA, tokenB: view.pool.tokenB });
    sim.faults.setRpcFault('*', { errorRate: 1 });
    const amount = 25_000_000_000n;
    const res = await get(h, `/quote?input=${ANCHOR}&output=${CORAL}&amount=${amount}`);
    expect(res.status).toBe(200);
    expect(res.body['source']).toBe('external');
    expect(res.body['inputAmount']).toBe(amount.toString());
    expect(BigInt(res.body['outputAmount'] as string)).toBeGreaterThan(0n);
    expect((res.body['route'] as unknown[]).length).toBeGreaterThan(0);
    expect(loader.calls).toBeGreaterThan(0);
    expect(external.requests).toBe(1);
    const metrics = await h.http.metrics.registry.metrics();
    expect(metrics).toMatch(/quote_service_rpc_fallback_errors_total 1\b/);
    expect(metrics).toMatch(/quote_service_quote_latency_seconds_count\{source="external"\} 1\b/);

    // Exact out through the aggregator too.
    const out = await get(h, `/quote?input=${ANCHOR}&output=${CORAL}&amount=3000000&swapMode=ExactOut`);
    expect(out.status).toBe(200);
    expect(out.body['source']).toBe('external');
    expect(out.body['outputAmount']).toBe('3000000');

    // Over the stream as well: the pair's quote says so (origin is not CACHE).
    const s = openStream(h, [{ inputMint: ANCHOR, outputMint: CORAL, amount: '1000000000' }]);
    const q = await eventually(() => s.quotes.find((m) => m.error === undefined || m.error === null), 'an external quote on the stream');
    expect(BigInt(q.outputAmount)).toBeGreaterThan(0n);
    s.call.cancel();
  });

  it('answers the RPC failure when the external aggregator cannot quote either, and counts it', async () => {
    // Nothing listens on the aggregator's address: unreachable.
    const external = new ProviderFallbackQuoter({ quoteUrl: 'http://127.0.0.1:9/quote', timeoutMs: 2_000 });
    const h = await harness({ fill: false, hybridMode: true, loader: new CountingLoader(rpcUrl, 2_000), external, fallbackDeadlineMs: 3_000 });
    for (const view of chain.pools()) h.http.engine.directory.add({ address: view.address, dex: view.dex, tokenA: view.pool.tokenA, tokenB: view.pool.tokenB });
    sim.faults.setRpcFault('*', { errorRate: 1 });
    const res = await get(h, `/quote?input=${ANCHOR}&output=${CORAL}&amount=1000000`);
    expect(res.status).toBe(503);
    expect((res.body['error'] as { code: string }).code).toBe('TP_ERR_RPC_FALLBACK_FAILED');
    expect(await h.http.metrics.registry.metrics()).toMatch(/quote_service_external_fallback_errors_total 1\b/);
  });
});
