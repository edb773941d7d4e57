/**
 * The external quote service against a scripted provider (a real node:http server) and real gRPC
 * streams: rate limit, 429 pauses, the circuit breaker, malformed answers, timeouts, uptime, shared
 * pairs, cancellation.
 */
import { afterEach, describe, expect, it } from 'vitest';

import { createLogger } from '../obs/logger.js';
import { runPromtool, hasPromtool } from '../obs/promtool.js';
import { defaultExternalConfig, type ExternalQuotesConfig } from './external-config.js';
import type { ExternalHealth } from './external-http-server.js';
import { createExternalQuoteService, type ExternalEndpoints, type ExternalQuoteService, type ExternalQuoteServiceDeps } from './external-quote-service.js';
import { BONK, FakeProvider, StreamProbe, USDC, WSOL, eventually, okAnswer, sleep, type StreamPairInput } from './testing/fake-provider.js';

const logger = createLogger({ level: 'silent' });
let fake: FakeProvider;
let service: ExternalQuoteService;
let endpoints: ExternalEndpoints;
const probes: StreamProbe[] = [];

async function start(config: Partial<ExternalQuotesConfig> = {}, deps: ExternalQuoteServiceDeps = {}): Promise<void> {
  fake = new FakeProvider();
  await fake.start();
  service = createExternalQuoteService(
    defaultExternalConfig({ grpcPort: 0, 'metrics.port': 0, quoteUrl: fake.url, pollInterval: 50, rateLimitRps: 1000, requestTimeout: 1000, 'log.level': 'silent', ...config }),
    { logger, ...deps },
  );
  endpoints = await service.start();
}

function open(pairs: StreamPairInput[], more: { slippageBps?: number; updateIntervalMs?: number } = {}): StreamProbe {
  const probe = new StreamProbe(endpoints.grpc, { pairs, ...more });
  probes.push(probe);
  return probe;
}

async function health(): Promise<ExternalHealth> {
  const res = await fetch(`${endpoints.metrics}/health`);
  return (await res.json()) as ExternalHealth;
}

async function metricsText(): Promise<string> {
  return (await fetch(`${endpoints.metrics}/metrics`)).text();
}

const SOL_USDC: StreamPairInput = { inputMint: WSOL, outputMint: USDC, amount: '1000000000' };

function pairsOf(n: number): StreamPairInput[] {
  return Array.from({ length: n }, (_, i) => ({ inputMint: WSOL, outputMint: USDC, amount: String(1_000_000 + i) }));
}

afterEach(async () => {
  for (const p of probes.splice(0)) p.close();
  await service?.close();
  await fake?.close();
});

describe('external quote service against a provider', () => {
  it('streams the provider\'s quote for each pair with the request\'s slippage, sending the API key as x-api-key', async () => {
    await start({ apiKey: 'k-123' });
    const probe = open([SOL_USDC, { inputMint: USDC, outputMint: BONK, amount: '9007199254740993' }], { slippageBps: 100 });
    const [q1, q2] = await eventually(() => {
      const a = probe.quotes.find((q) => q.inputMint === WSOL && q.error == null);
      const b = probe.quotes.find((q) => q.inputMint === USDC && q.error == null);
      return a && b ? [a, b] : undefined;
    }, 'a quote for both pairs');
    expect(q1).toMatchObject({
      inputAmount: '1000000000', outputAmount: '2000000000', minOutputAmount: '1980000000', slippageBps: 100,
      source: 'QUOTE_SOURCE_EXTERNAL', origin: 'QUOTE_ORIGIN_EXTERNAL_API', provider: 'simulator', slot: '250000000', contextSlot: '250000000',
      route: [{ pool: expect.any(String), dex: 'Raydium', inputMint: WSOL, outputMint: USDC, inAmount: '1000000000', outAmount: '2000000000', fee: '2500000', slot: '250000000' }],
    });
    expect(q1.pairId).toMatch(/^[0-9a-f]{16}$/);
    expect(q1.priceImpact).toBeCloseTo(0.0012, 10);
    expect(q1.providerUptime).toBe(1);
    expect(Number(q1.quotedAtUnixMs)).toBeGreaterThan(0);
    // Above 2^53, every unit survives: 2 × (2^53 + 1) and floor(0.99 × that).
    expect(q2).toMatchObject({ inputAmount: '9007199254740993', outputAmount: '18014398509481986', minOutputAmount: '17834254524387166' });
    expect(fake.requests[0]!.headers['x-api-key']).toBe('k-123');
    expect(fake.requests[0]!.query.get('slippageBps')).toBe('100');
  });

  it('turns an answer whose amount is not a u64 into an error quote', async () => {
    await start();
    const probe = open([{ inputMint: USDC, outputMint: BONK, amount: '18446744073709551615' }]);
    const q = await eventually(() => probe.quotes.find((m) => m.error != null), 'an error quote');
    expect(q.error).toMatchObject({ code: 'TP_ERR_EXTERNAL_MALFORMED', grpcStatus: 14 });
    expect(q.error!.message).toMatch(/outAmount/);
  });

  it('never polls above the rate limit, whatever the number of pairs', async () => {
    await start({ rateLimitRps: 5, pollInterval: 10 });
    open(pairsOf(20));
    await eventually(() => fake.requests.length >= 12, '12 requests');
    const times = fake.requests.map((r) => r.at);
    for (let i = 0; i < times.length; i++) {
      // Any one-second window holds at most rps requests (one more for the arrival jitter at its edge).
      const inWindow = times.filter((t) => t >= times[i]! && t < times[i]! + 1000).length;
      expect(inWindow).toBeLessThanOrEqual(6);
    }
    const spanS = (times[times.length - 1]! - times[0]!) / 1000;
    expect(times.length).toBeLessThanOrEqual(Math.ceil(spanS * 5) + 1);
  });

  it('polls a pair at most once per poll interval', async () => {
    await start({ pollInterval: 200 });
    open([SOL_USDC]);
    await eventually(() => fake.requests.length >= 4, '4 polls');
    // Sent at least 200 ms apart; arrival jitter only moves the first and last arrivals.
    const times = fake.requests.map((r) => r.at);
    expect(times[times.length - 1]! - times[0]!).toBeGreaterThanOrEqual((times.length - 1) * 200 - 60);
  });

  it('pauses all polling until a 429\'s Retry-After has passed, and tells the stream RESOURCE_EXHAUSTED', async () => {
    await start({ pollInterval: 20, rateLimitRps: 10 });
    fake.answer = (q, n) => (n === 0 ? { status: 429, body: '{"error":"Rate limit exceeded","errorCode":"RATE_LIMITED"}', headers: { 'retry-after': '1' } } : okAnswer(q));
    const probe = open(pairsOf(3));
    const limited = await eventually(() => probe.quotes.find((q) => q.error?.code === 'TP_ERR_RATE_LIMITED'), 'a rate-limited error quote');
    expect(limited.error!.grpcStatus).toBe(8);
    await eventually(() => fake.requests.length >= 4, 'polling to resume');
    // Without the pause the other pairs would have been polled 100 ms later.
    const first = fake.requests[0]!.at;
    for (const r of fake.requests.slice(1)) expect(r.at - first).toBeGreaterThanOrEqual(950);
    await eventually(() => probe.quotes.find((q) => q.error == null), 'a quote after the pause');
    expect((await health()).provider.errors['rate_limited']).toBe(1);
  });

  it('reports a 429 pause on /health (degraded, until when) and in the metrics', async () => {
    await start();
    fake.answer = () => ({ status: 429, body: '', headers: { 'retry-after': '30' } });
    const probe = open([SOL_USDC]);
    await eventually(() => probe.quotes[0], 'the rate-limited error quote');
    const h = await health();
    expect(h.status).toBe('degraded');
    expect(h.provider.rateLimitedUntilUnixMs!).toBeGreaterThan(Date.now() + 20_000);
    expect(h.provider.uptimeRatio).toBe(1);
    expect(await metricsText()).toMatch(/^external_quotes_rate_limit_pauses_total 1$/m);
    expect(fake.requests).toHaveLength(1);
  });

  it('opens the breaker after 5 consecutive 500s: no more requests reach the provider, streams get UNAVAILABLE error quotes', async () => {
    await start({ pollInterval: 20 }, { breaker: { resetTimeoutMs: 60_000 } });
    // Before any poll nothing says the provider is down: ready.
    expect((await fetch(`${endpoints.metrics}/ready`)).status).toBe(200);
    fake.answer = () => ({ status: 500, body: '{"error":"boom"}' });
    const probe = open([SOL_USDC]);
    await eventually(() => probe.quotes.find((q) => q.error?.code === 'TP_ERR_CIRCUIT_OPEN'), 'a circuit-open error quote');
    expect(fake.requests).toHaveLength(5);
    const serverErrors = probe.quotes.filter((q) => q.error?.code === 'TP_ERR_EXTERNAL_SERVER_ERROR');
    expect(serverErrors).toHaveLength(5);
    expect(serverErrors[0]!.error!.grpcStatus).toBe(14);
    const open1 = probe.quotes.find((q) => q.error?.code === 'TP_ERR_CIRCUIT_OPEN')!;
    expect(open1.error!.grpcStatus).toBe(14);
    expect(open1).toMatchObject({ outputAmount: '0', minOutputAmount: '0', route: [] });
    const seen = probe.quotes.length;
    await eventually(() => probe.quotes.length >= seen + 3, 'more circuit-open error quotes');
    expect(fake.requests).toHaveLength(5);
    const h = await fetch(`${endpoints.metrics}/health`);
    expect(h.status).toBe(503);
    expect(((await h.json()) as ExternalHealth).provider.circuitBreaker).toBe('open');
    const ready = await fetch(`${endpoints.metrics}/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'not_ready', reason: expect.stringMatching(/circuit breaker open/) });
    expect(await metricsText()).toMatch(/^external_quotes_circuit_breaker_state 2$/m);
  });

  it('half-opens after the reset timeout and closes after 3 successful trials', async () => {
    await start({ pollInterval: 20 }, { breaker: { resetTimeoutMs: 300 } });
    let failing = true;
    fake.answer = (q) => (failing ? { status: 503, body: '{"error":"down"}' } : okAnswer(q));
    const probe = open(pairsOf(3));
    await eventually(() => probe.quotes.find((q) => q.error?.code === 'TP_ERR_CIRCUIT_OPEN'), 'the breaker to open');
    failing = false;
    await eventually(async () => (await health()).provider.circuitBreaker === 'closed', 'the breaker to close');
    await eventually(() => probe.quotes.filter((q) => q.error == null).length >= 3, 'quotes again');
    expect((await health()).status).toBe('ok');
  });

  it('goes back to open when a half-open trial fails', async () => {
    await start({ pollInterval: 20 }, { breaker: { resetTimeoutMs: 200 } });
    fake.answer = () => ({ status: 500, body: '' });
    const probe = open([SOL_USDC]);
    // 5 failures, open (error quotes without requests), one failed trial, open again.
    await eventually(() => {
      const codes = probe.quotes.map((q) => q.error?.code);
      const trial = codes.indexOf('TP_ERR_EXTERNAL_SERVER_ERROR', codes.indexOf('TP_ERR_CIRCUIT_OPEN'));
      return trial > 0 && codes.indexOf('TP_ERR_CIRCUIT_OPEN', trial) > trial;
    }, 'open, a failed trial, open again');
    expect(fake.requests.length).toBeGreaterThanOrEqual(6);
  });

  it('turns a malformed answer into an error quote and carries on streaming', async () => {
    await start();
    fake.answer = (q, n) => (n === 0 ? { status: 200, body: '{"inputMint": "not json' } : n === 1 ? { status: 200, body: '{"inputMint":"x"}' } : okAnswer(q));
    const probe = open([SOL_USDC]);
    await eventually(() => probe.quotes.some((q) => q.error == null), 'a good quote after the malformed ones');
    const malformed = probe.quotes.filter((q) => q.error?.code === 'TP_ERR_EXTERNAL_MALFORMED');
    expect(malformed.length).toBeGreaterThanOrEqual(2);
    expect(malformed[0]!.error!.message).toMatch(/not JSON/);
    expect(malformed[1]!.error!.message).toMatch(/inputMint/);
    expect((await health()).provider.errors['malformed']).toBe(2);
  });

  it('answers a provider that does not answer within the request timeout with DEADLINE_EXCEEDED, and counts it down', async () => {
    await start({ requestTimeout: 150 });
    fake.answer = (q, n) => (n === 0 ? 'hang' : okAnswer(q));
    const probe = open([SOL_USDC]);
    const timedOut = await eventually(() => probe.quotes.find((q) => q.error?.code === 'TP_ERR_DEADLINE'), 'a timeout error quote');
    expect(timedOut.error!.grpcStatus).toBe(4);
    await eventually(() => probe.quotes.some((q) => q.error == null), 'a quote after the timeout');
    const h = await health();
    expect(h.provider.errors['timeout']).toBe(1);
    expect(h.provider.uptimeRatio!).toBeLessThan(1);
  });

  it('answers NOT_FOUND for a pair without a route, without counting it against the provider', async () => {
    await start();
    fake.answer = () => ({ status: 400, body: '{"error":"Could not find any route","errorCode":"COULD_NOT_FIND_ANY_ROUTE"}' });
    const probe = open([SOL_USDC]);
    await eventually(() => fake.requests.length >= 8, '8 polls');
    const q = probe.quotes.find((m) => m.error != null)!;
    expect(q.error).toMatchObject({ code: 'TP_ERR_EXTERNAL_NO_ROUTE', grpcStatus: 5 });
    expect(service.breaker.state).toBe('closed');
    expect((await health()).provider.uptimeRatio).toBe(1);
  });

  it('reports connection errors as UNAVAILABLE and lowers the uptime', async () => {
    await start();
    await fake.close();
    const probe = open([SOL_USDC]);
    const q = await eventually(() => probe.quotes.find((m) => m.error?.code === 'TP_ERR_EXTERNAL_UNREACHABLE'), 'an unreachable error quote');
    expect(q.error!.grpcStatus).toBe(14);
    expect((await health()).provider.uptimeRatio).toBe(0);
  });

  it('drops the uptime ratio after failures, on /health and /metrics (promtool-clean)', async () => {
    await start();
    fake.answer = (q, n) => (n < 4 ? okAnswer(q) : n < 8 ? { status: 502, body: 'bad gateway' } : okAnswer(q));
    open([SOL_USDC]);
    await eventually(() => fake.requests.length >= 10, '10 polls');
    const h = await health();
    expect(h.provider.uptimeRatio!).toBeLessThan(1);
    expect(h.provider.uptimeRatio!).toBeGreaterThan(0);
    expect(h.provider.errors['server_error']).toBe(4);
    expect(h.provider.latencyMs.last).not.toBeNull();
    expect(h).toMatchObject({ activeStreams: 1, trackedPairs: 1, provider: { name: 'simulator', url: fake.url } });
    const text = await metricsText();
    const uptime = Number(/^external_quotes_provider_uptime_ratio (\S+)$/m.exec(text)![1]);
    expect(uptime).toBeLessThan(1);
    expect(text).toMatch(/^external_quotes_requests_total\{outcome="server_error"\} 4$/m);
    expect(text).toMatch(/^external_quotes_active_streams 1$/m);
    expect(text).toMatch(/^external_quotes_request_duration_seconds_count \d+$/m);
    if (hasPromtool()) {
      const r = runPromtool(['check', 'metrics'], text);
      expect(r.stderr + r.stdout).toBe('');
      expect(r.status).toBe(0);
    }
  });

  it('polls a pair shared by two streams once per interval and sends its results to both', async () => {
    await start({ pollInterval: 300 });
    const a = open([SOL_USDC], { slippageBps: 0 });
    const b = open([SOL_USDC, { inputMint: WSOL, outputMint: BONK, amount: '5' }], { slippageBps: 5000 });
    await eventually(() => fake.requests.filter((r) => r.query.get('outputMint') === USDC).length >= 4, '4 polls of the shared pair');
    const times = fake.requests.filter((r) => r.query.get('outputMint') === USDC).map((r) => r.at);
    expect(times[times.length - 1]! - times[0]!).toBeGreaterThanOrEqual((times.length - 1) * 300 - 60);
    const qa = a.quotes.find((q) => q.error == null)!;
    const qb = await eventually(() => b.quotes.find((q) => q.outputMint === USDC && q.error == null), 'b\'s quote');
    expect([qa.minOutputAmount, qb.minOutputAmount]).toEqual(['2000000000', '1000000000']);
    expect((await health()).trackedPairs).toBe(2);
  });

  it('unregisters a cancelled stream\'s pairs: polling stops', async () => {
    await start({ pollInterval: 20 });
    const probe = open(pairsOf(2));
    await eventually(() => fake.requests.length >= 4, 'polls');
    probe.cancel();
    await eventually(async () => {
      const h = await health();
      // Polls sent before the release may still arrive: wait for their answers first.
      return h.activeStreams === 0 && h.trackedPairs === 0 && h.provider.requestsInFlight === 0;
    }, 'the stream to be released');
    const n = fake.requests.length;
    await sleep(200);
    expect(fake.requests.length).toBe(n);
  });
});
