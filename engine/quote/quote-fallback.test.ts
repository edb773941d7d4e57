import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PoolCache } from '../cache/index.js';
import { Dex } from '../dex/index.js';
import { CircuitBreakerStateValue } from '../obs/quote-metrics.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { CircuitBreaker, CircuitState } from '../common/index.js';
import { QuoteErrorCode } from './errors.js';
import { PoolDirectory } from './pool-directory.js';
import type { QuoteEngineOptions } from './quote-engine.js';
import type { QuoteHttpServer, QuoteHttpServerOptions } from '../quote-http/quote-http-server.js';
import { FakeClock, CountingLoader, manualSimulator, quoteHttpServer, storePool, syntheticAddress } from './testing.js';

/**
 * The RPC fallback over real HTTP (port 0): the quote server on a cache filled from a manual
 * simulator, falling back to the same simulator's real JSON-RPC, with its injected RPC errors and
 * latency. Every row of spec 02's error table that concerns the quote service.
 */

const sim = manualSimulator(11);
const chain = sim.chain;
const UNKNOWN_MINT = 'So11111111111111111111111111111111111111113';
const Q = `/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=1000000`;
let rpcUrl = '';
const servers: QuoteHttpServer[] = [];

beforeAll(async () => {
  rpcUrl = (await sim.start()).rpc;
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await sim.close();
});

/** The JSON bodies these tests read: a quote, an error or /health. */
interface Body {
  source?: string;
  slot?: string;
  stateAgeMs?: number;
  pool?: string;
  outputAmount?: string;
  route?: unknown[];
  error?: { code: string; message: string };
  [field: string]: unknown;
}

interface Harness {
  server: QuoteHttpServer;
  cache: PoolCache;
  clock: FakeClock;
  loader: CountingLoader;
  get(path: string): Promise<{ status: number; body: Body; headers: Headers }>;
  metric(name: string, labels?: Record<string, string>): Promise<number>;
}

/** A server on a cache holding every simulator pool at the chain's slot (fresh unless told). */
async function harness(options: Partial<QuoteEngineOptions & Omit<QuoteHttpServerOptions, 'engine'>> & { fill?: boolean } = {}): Promise<Harness> {
  const clock = new FakeClock();
  const cache = options.cache ?? new PoolCache({ now: clock.now, stalenessThresholdMs: 30_000 });
  if (options.fill !== false) for (const view of chain.pools()) storePool(cache, view, chain.slot());
  const loader = (options.loader as CountingLoader | undefined) ?? new CountingLoader(rpcUrl);
  const server = quoteHttpServer({ rateLimiter: false, ...options, cache, loader });
  servers.push(server);
  const base = `http://127.0.0.1:${await server.start(0)}`;
  return {
    server,
    cache,
    clock,
    loader,
    async get(path) {
      const res = await fetch(base + path);
      return { status: res.status, body: JSON.parse(await res.text()) as Body, headers: res.headers };
    },
    async metric(name, labels = {}) {
      const m = await server.metrics.registry.getSingleMetric(name)!.get();
      return m.values
        .filter((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want))
        .reduce((s, v) => s + v.value, 0);
    },
  };
}

async function latencyCount(h: Harness, source: string): Promise<number> {
  const exposition = await h.server.metrics.registry.metrics();
  const count = new RegExp(`^quote_service_quote_latency_seconds_count\\{source="${source}"\\} (\\d+)$`, 'm').exec(exposition);
  return count === null ? 0 : Number(count[1]);
}

describe('RPC fallback (hybrid mode)', () => {
  it('answers from RPC when every cached pool of the pair is stale, and writes the state back so the next quote hits', async () => {
    const h = await harness();
    h.clock.advance(31_000); // scanner gone: every pool stale
    chain.advanceSlot(); // the chain moved on: RPC reads a newer slot
    const rpcSlot = chain.slot();
    const { status, body } = await h.get(Q);
    expect(status).toBe(200);
    expect(body).toMatchObject({ source: 'rpc', slot: rpcSlot.toString(), stateAgeMs: 0, contextSlot: rpcSlot.toString() });
    expect(body.route).toHaveLength(1);
    expect(await h.metric('quote_service_quote_cache_misses_total')).toBe(1);
    expect(await latencyCount(h, 'rpc')).toBe(1);
    expect(await h.metric('quote_service_quotes_total')).toBe(1);

    const again = await h.get(Q);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ source: 'cache', slot: rpcSlot.toString(), stateAgeMs: 0, pool: body.pool, outputAmount: body.outputAmount });
    expect(await h.metric('quote_service_quote_cache_hits_total')).toBe(1);
    expect(await latencyCount(h, 'cache')).toBe(1);
    expect(h.loader.calls).toBe(1);
  });

  it('serves cached data until it goes stale (scanner or bus down), then falls back to RPC', async () => {
    const h = await harness();
    h.clock.advance(30_000); // an age equal to the threshold is still fresh
    expect((await h.get(Q)).body.source).toBe('cache');
    h.clock.advance(1);
    expect((await h.get(Q)).body.source).toBe('rpc');
  });

  it('re-reads pools the cache evicted (no pools in cache) from the pool directory', async () => {
    const h = await harness();
    h.server.engine.directory.syncFrom(h.cache); // the eviction tick remembers them first
    h.clock.advance(31_000);
    expect(h.cache.evictStale()).toBe(chain.pools().length);
    const { status, body } = await h.get(Q);
    expect(status).toBe(200);
    expect(body.source).toBe('rpc');
    expect(h.cache.size).toBeGreaterThan(0);
  });

  it('answers 404 when no pool is known for the pair or the token, without counting an RPC error', async () => {
    const h = await harness({ fill: false });
    // Nothing loaded at all (RPC unreachable at start, say): 503 as /health says, not 404.
    const early = await h.get(`/quote?input=${UNKNOWN_MINT}&output=${USDC_MINT}&amount=1`);
    expect(early.status).toBe(503);
    expect(early.body.error?.code).toBe(QuoteErrorCode.Unavailable);
    h.server.engine.directory.add({ address: chain.pools()[0]!.address, dex: chain.pools()[0]!.dex, tokenA: chain.pools()[0]!.pool.tokenA, tokenB: chain.pools()[0]!.pool.tokenB });
    const unknown = await h.get(`/quote?input=${UNKNOWN_MINT}&output=${USDC_MINT}&amount=1`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: { code: QuoteErrorCode.UnknownMint, message: `unknown token ${UNKNOWN_MINT}` } });

    // Known mints, no pool between them and no two-hop route through SOL or USDC: a pair of the
    // tests' own, isolated (the directory only needs its identity).
    for (const view of chain.pools()) {
      h.server.engine.directory.add({ address: view.address, dex: view.dex, tokenA: view.pool.tokenA, tokenB: view.pool.tokenB });
    }
    const isolated = { address: syntheticAddress('isolated pool'), dex: Dex.Amm, tokenA: syntheticAddress('mint X'), tokenB: syntheticAddress('mint Y') };
    h.server.engine.directory.add(isolated);
    const untraded: [string, string] = [isolated.tokenA, USDC_MINT];
    const none = await h.get(`/quote?input=${untraded![0]}&output=${untraded![1]}&amount=1000`);
    expect(none.status).toBe(404);
    expect(none.body).toEqual({ error: { code: QuoteErrorCode.NoPoolForPair, message: 'no pool for the pair' } });
    expect(await h.metric('quote_service_rpc_fallback_errors_total')).toBe(0);
    expect(h.loader.calls).toBe(0);
  });

  it('returns the RPC error to the caller as 503 and counts it', async () => {
    const h = await harness();
    h.clock.advance(31_000);
    sim.faults.setRpcFault('getMultipleAccounts', { errorRate: 1 });
    try {
      const { status, body } = await h.get(Q);
      expect(status).toBe(503);
      expect(body.error?.code).toBe(QuoteErrorCode.RpcFallbackFailed);
      expect(body.error?.message).toMatch(/^RPC fallback failed: rpc: .*Internal error \(injected\)/);
      expect(await h.metric('quote_service_rpc_fallback_errors_total')).toBe(1);
      expect(await latencyCount(h, 'rpc')).toBe(0);
    } finally {
      sim.faults.clear();
    }
  });

  it('answers 504 when the RPC does not answer within the deadline', async () => {
    const h = await harness({ fallbackDeadlineMs: 100 });
    h.clock.advance(31_000);
    sim.faults.setRpcFault('getMultipleAccounts', { latencyMs: 1_000 });
    try {
      const { status, body } = await h.get(Q);
      expect(status).toBe(504);
      expect(body).toEqual({ error: { code: QuoteErrorCode.Deadline, message: 'no RPC answer within the 100 ms deadline' } });
      expect(await h.metric('quote_service_rpc_fallback_errors_total')).toBe(1);
      // The deadline aborted the load it raced: the loader was told, with the deadline as reason.
      expect(h.loader.lastSignal?.aborted).toBe(true);
      expect((h.loader.lastSignal?.reason as { code?: string } | undefined)?.code).toBe('TP_ERR_DEADLINE');
    } finally {
      sim.faults.clear();
    }
  });

  it('answers 503 no valid quotes when every pool read from RPC refuses the swap', async () => {
    const h = await harness();
    h.clock.advance(31_000);
    const { status, body } = await h.get(`/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=18446744073709551615`);
    // Either some pool can take the whole u64 or none can; never anything but these two.
    expect([200, 503]).toContain(status);
    if (status === 503) expect(body).toEqual({ error: { code: QuoteErrorCode.NoValidQuotes, message: 'no valid quotes from RPC' } });
  });

  it('gives the same quote from the cache and from RPC on the same state, exact in and exact out, but for source and stateAgeMs', async () => {
    const slot = chain.advanceSlot();
    const cached = await harness();
    cached.clock.advance(5);
    const directory = new PoolDirectory();
    directory.syncFrom(cached.cache);
    const rpcOnly = await harness({ cacheEnabled: false, directory, fill: false });
    const pairs = [
      [WSOL_MINT, USDC_MINT],
      [USDC_MINT, WSOL_MINT],
      ...chain.pools().map((p) => [p.pool.tokenA, p.pool.tokenB]),
    ];
    let exactOutAnswers = 0;
    for (const [input, output] of pairs) {
      for (const [amount, mode] of [1_000n, 250_000_000n, 40_000_000_000n].flatMap((a) => [[a, 'ExactIn'], [a, 'ExactOut']] as const)) {
        const path = `/quote?input=${input}&output=${output}&amount=${amount}&swapMode=${mode}&slippageBps=30`;
        const a = await cached.get(path);
        const b = await rpcOnly.get(path);
        expect(b.status).toBe(a.status);
        if (a.status !== 200) continue;
        expect(a.body.source).toBe('cache');
        expect(a.body.stateAgeMs).toBe(5);
        expect(b.body.source).toBe('rpc');
        expect(b.body.stateAgeMs).toBe(0);
        expect(b.body.slot).toBe(slot.toString());
        expect({ ...b.body, source: 'cache', stateAgeMs: 5 }).toEqual(a.body);
        expect(a.body.swapMode).toBe(mode);
        if (mode === 'ExactOut') exactOutAnswers++;
      }
    }
    expect(exactOutAnswers).toBeGreaterThan(0);
    expect(rpcOnly.cache.size).toBe(0); // cache disabled: nothing written back
  });
});

describe('circuit breaker with the fallback taking over', () => {
  it('opens after 5 failing cache attempts while RPC answers, half-opens after 30 s and closes after 3 cache hits', async () => {
    const breakerClock = new FakeClock();
    const breaker = new CircuitBreaker({ now: breakerClock.now });
    const h = await harness({ breaker, clock: () => 0 }); // no attempt counts as slow, however loaded the machine
    // Stale cache, chain not moving: RPC reads the stored slot, so write-backs are ignored
    // (slot rule) and the cache keeps failing.
    h.clock.advance(31_000);
    for (let i = 0; i < 5; i++) {
      const r = await h.get(Q);
      expect(r.status).toBe(200);
      expect(r.body.source).toBe('rpc');
    }
    expect(breaker.state).toBe(CircuitState.Open);
    expect(await h.metric('quote_service_circuit_breaker_state')).toBe(CircuitBreakerStateValue.open);
    const missesBefore = await h.metric('quote_service_quote_cache_misses_total');
    const open = await h.get(Q);
    expect(open.body.source).toBe('rpc');
    expect(await h.metric('quote_service_quote_cache_misses_total')).toBe(missesBefore + 1);

    // Half-open: the trial cache attempt fails again (still stale) and re-opens it; the fallback
    // answers and, the chain having moved, refreshes the cache.
    breakerClock.advance(30_000);
    expect(breaker.state).toBe(CircuitState.HalfOpen);
    chain.advanceSlot();
    const trial = await h.get(Q);
    expect(trial.body.source).toBe('rpc');
    expect(breaker.state).toBe(CircuitState.Open);

    breakerClock.advance(30_000);
    for (let i = 0; i < 3; i++) {
      const r = await h.get(Q);
      expect(r.status).toBe(200);
      expect(r.body.source).toBe('cache');
    }
    expect(breaker.state).toBe(CircuitState.Closed);
    expect(await h.metric('quote_service_circuit_breaker_state')).toBe(CircuitBreakerStateValue.closed);
  });

  it('counts a cache attempt slower than CACHE_FIRST_TIMEOUT as a breaker failure (injectable clock)', async () => {
    let t = 0;
    const slow = await harness({ cacheFirstTimeoutMs: 10, clock: () => (t += 15) });
    for (let i = 0; i < 5; i++) {
      const r = await slow.get(Q);
      expect(r.status).toBe(200);
      expect(r.body.source).toBe('cache'); // a slow answer is still an answer
    }
    expect(slow.server.engine.breaker.state).toBe(CircuitState.Open);
    const next = await slow.get(Q);
    expect(next.body.source).toBe('rpc');

    let u = 0;
    const quick = await harness({ cacheFirstTimeoutMs: 10, clock: () => (u += 5) });
    for (let i = 0; i < 6; i++) expect((await quick.get(Q)).body.source).toBe('cache');
    expect(quick.server.engine.breaker.state).toBe(CircuitState.Closed);
  });
});

describe('modes', () => {
  it('hybrid mode off: a failing cache path answers 503 and RPC is never asked', async () => {
    const h = await harness({ hybridMode: false });
    h.clock.advance(31_000);
    const { status, body } = await h.get(Q);
    expect(status).toBe(503);
    expect(body).toEqual({ error: { code: QuoteErrorCode.NoValidQuotes, message: 'no valid quotes from cache' } });
    expect(h.loader.calls).toBe(0);
    expect(h.server.engine.fallbackAvailable).toBe(false);
  });

  it('cache disabled: RPC only, the cache untouched; without a loader 503', async () => {
    const directory = new PoolDirectory();
    for (const view of chain.pools()) directory.add({ address: view.address, dex: view.dex, tokenA: view.pool.tokenA, tokenB: view.pool.tokenB });
    const h = await harness({ cacheEnabled: false, hybridMode: false, directory, fill: false });
    const { status, body } = await h.get(Q);
    expect(status).toBe(200);
    expect(body.source).toBe('rpc');
    expect(h.cache.size).toBe(0);
    expect(await h.metric('quote_service_quote_cache_misses_total')).toBe(0);

    const none = quoteHttpServer({ cache: new PoolCache(), cacheEnabled: false, rateLimiter: false });
    servers.push(none);
    const port = await none.start(0);
    const res = await fetch(`http://127.0.0.1:${port}${Q}`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({
      error: { code: QuoteErrorCode.Unavailable, message: 'the cache is disabled and no RPC fallback is configured' },
    });
  });
});

describe('GET /health', () => {
  it('is 200 ok on a fresh cache, 200 degraded when only RPC can answer, 503 when neither can', async () => {
    const h = await harness();
    const ok = await h.get('/health');
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      status: 'ok',
      cache: { enabled: true, total_pools: chain.pools().length, fresh_pools: chain.pools().length, stale_pools: 0 },
      bus: { status: 'disabled' },
      rpc: { hybrid_mode: true, fallback: 'available', known_pools: chain.pools().length, inflight: 0 },
      circuit_breaker: 'closed',
    });
    h.clock.advance(31_000);
    const degraded = await h.get('/health');
    expect(degraded.status).toBe(200);
    expect(degraded.body).toMatchObject({ status: 'degraded', cache: { fresh_pools: 0, stale_pools: chain.pools().length } });

    const cacheOnly = quoteHttpServer({ cache: h.cache, rateLimiter: false });
    servers.push(cacheOnly);
    const port = await cacheOnly.start(0);
    const res = await fetch(`http://127.0.0.1:${port}/health`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ status: 'unavailable', rpc: { fallback: 'unavailable' } });
  });
});

describe('close', () => {
  it('lets an RPC fallback in flight answer before closing', async () => {
    const h = await harness();
    h.clock.advance(31_000);
    sim.faults.setRpcFault('getMultipleAccounts', { latencyMs: 300 });
    try {
      const pending = h.get(Q);
      while (h.server.engine.inflightFallbacks === 0) await new Promise((r) => setTimeout(r, 5));
      let closed = false;
      const closing = h.server.close().then(() => {
        closed = true;
      });
      const { status, body } = await pending;
      expect(status).toBe(200);
      expect(body.source).toBe('rpc');
      await closing;
      expect(closed).toBe(true);
      expect(h.server.engine.inflightFallbacks).toBe(0);
    } finally {
      sim.faults.clear();
    }
  });
});
