import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createLogger } from '../obs/logger.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { ErrorCode } from '../errors.js';
import { CircuitState } from '../common/index.js';
import { LimitedPoolLoader } from './fallback-limiter.js';
import { defaultQuoteConfig } from '../quote-service/quote-config.js';
import { createQuoteCache, createQuoteService, type QuoteService } from '../quote-service/quote-service.js';
import { CountingLoader, FakeClock, manualSimulator, storePool } from './testing.js';

/**
 * Issue 11 item 8: the RPC fallback is bounded for the whole process. A quote service as
 * `tidepool quote-service` builds it, over the simulator's real JSON-RPC with its injected faults,
 * the loader counting what reaches RPC.
 */
const sim = manualSimulator(13);
const logger = createLogger({ name: 'fallback-limiter-test', level: 'silent' });
const RPS = 4;
let rpcUrl = '';
let service: QuoteService;
let loader: CountingLoader;
let clock: FakeClock;
let base = '';

beforeAll(async () => {
  rpcUrl = (await sim.start()).rpc;
  const config = defaultQuoteConfig({
    port: 0,
    'metrics.port': 0,
    'grpc.port': 0,
    rateLimitRps: 1_000_000,
    'debug.heapProfile': false,
    'rpc.fallbackConcurrency': 2,
    'rpc.fallbackRps': RPS,
    'rpc.fallbackBackoffMax': 400,
  });
  clock = new FakeClock();
  const cache = createQuoteCache(config, clock.now);
  for (const view of sim.chain.pools()) storePool(cache, view, sim.chain.slot());
  loader = new CountingLoader(rpcUrl);
  service = createQuoteService(config, { cache, loader, logger });
  base = `http://127.0.0.1:${(await service.start()).port}`;
  clock.advance(60_000); // every pool stale: each quote asks for the fallback
});

afterAll(async () => {
  await service.close();
  await sim.close();
});

/** `n` concurrent quotes of SOL/USDC at distinct amounts: the statuses and error messages. */
async function burst(n: number): Promise<{ status: number; message: string }[]> {
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const res = await fetch(`${base}/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=${1_000_000 + i}`);
      const body = (await res.json()) as { error?: { code: string; message: string } };
      if (res.status !== 200) expect(body.error?.code).toBe(ErrorCode.RpcFallbackFailed);
      return { status: res.status, message: body.error?.message ?? '' };
    }),
  );
}

describe('LimitedPoolLoader backoff (the simulator RPC failing, a fake clock)', () => {
  it('pauses after a failed read, doubling per failure; one probe per pause; a success ends it', async () => {
    const t = new FakeClock(0);
    const counting = new CountingLoader(rpcUrl);
    const limited = new LimitedPoolLoader(counting, { backoffBaseMs: 100, backoffMaxMs: 1_000, maxPerSecond: 1_000, now: t.now });
    const pools = sim.chain.pools().map((v) => v.address);
    sim.faults.setRpcFault('getMultipleAccounts', { errorRate: 1 });
    try {
      expect((await limited.load(pools)).every((r) => !r.ok)).toBe(true);
      expect(counting.calls).toBe(1);
      const refused = await limited.load(pools);
      expect(refused[0]).toMatchObject({ ok: false, error: { reason: 'rpc', message: 'RPC fallback backing off after 1 failed reads (next try in 100 ms)' } });
      expect(counting.calls).toBe(1);
      t.advance(100); // the probe goes out, fails: the next pause is 200 ms
      await limited.load(pools);
      expect(counting.calls).toBe(2);
      t.advance(150);
      expect((await limited.load(pools))[0]).toMatchObject({ error: { message: 'RPC fallback backing off after 2 failed reads (next try in 50 ms)' } });
      expect(counting.calls).toBe(2);
    } finally {
      sim.faults.clear();
    }
    t.advance(50);
    expect((await limited.load(pools)).every((r) => r.ok)).toBe(true); // the probe succeeds
    expect((await limited.load(pools)).every((r) => r.ok)).toBe(true); // and the backoff is over
    expect(counting.calls).toBe(4);
    expect(limited.stats).toMatchObject({ started: 4, refusedBackoff: 2, consecutiveFailures: 0 });
  });

  it('refuses past the rate cap and shares identical reads in flight', async () => {
    const t = new FakeClock(0);
    const counting = new CountingLoader(rpcUrl);
    const limited = new LimitedPoolLoader(counting, { maxPerSecond: 2, maxConcurrent: 10, now: t.now });
    const pools = sim.chain.pools().map((v) => v.address);
    const same = await Promise.all([limited.load(pools), limited.load(pools), limited.load(pools)]);
    expect(same[0]).toBe(same[1]);
    expect(counting.calls).toBe(1);
    await limited.load(pools.slice(1));
    const over = await limited.load(pools.slice(2));
    expect(over[0]).toMatchObject({ ok: false, error: { message: 'RPC fallback rate limit of 2 reads per second reached (rpc.fallbackRps)' } });
    expect(counting.calls).toBe(2);
    t.advance(500);
    expect((await limited.load(pools.slice(2))).every((r) => r.ok)).toBe(true);
    expect(counting.calls).toBe(3);
  });
});

describe('RPC fallback bound', () => {
  it('while RPC fails: one read, then backoff; at most the cap reaches RPC', async () => {
    sim.faults.setRpcFault('getMultipleAccounts', { errorRate: 1 });
    try {
      const started = performance.now();
      // Identical reads in flight share one: the 200 quotes of the pair wait on one failing read.
      const first = await burst(200);
      expect(loader.calls).toBe(1);
      expect(new Set(first.map((a) => a.message))).toEqual(new Set(['RPC fallback failed: rpc: pool account read failed: getMultipleAccounts: Internal error (injected) (-32603)']));
      // Right after it failed: the fallback backs off, or one probe goes out (and is shared).
      const second = await burst(200);
      const elapsedS = (performance.now() - started) / 1000;
      expect(second.every((a) => a.status === 503)).toBe(true);
      // Without the bound: 400 reads. With it: the first, then one probe per backoff window at most.
      expect(loader.calls).toBeLessThanOrEqual(1 + Math.ceil(elapsedS * RPS));
      expect(loader.calls).toBeLessThan(20);
      expect(service.breaker.state).toBe(CircuitState.Open); // the whole cache is stale: its own failure
    } finally {
      sim.faults.clear();
    }
  });

  it('after recovery, with the breaker still open, the rate cap holds: no retry storm', async () => {
    const limiter = service.fallbackLimiter as LimitedPoolLoader;
    // Past the longest backoff: the next read is the probe, which succeeds and ends the backoff.
    await new Promise((r) => setTimeout(r, 450));
    const before = loader.calls;
    const started = performance.now();
    const answers = [...(await burst(100)), ...(await burst(100)), ...(await burst(100))];
    const elapsedS = (performance.now() - started) / 1000;
    const reads = loader.calls - before;
    expect(answers.filter((a) => a.status === 200).length).toBeGreaterThan(0);
    expect(reads).toBeLessThanOrEqual(RPS + Math.ceil(elapsedS * RPS));
    expect(limiter.stats.coalesced + limiter.stats.refusedRate + limiter.stats.refusedConcurrency).toBeGreaterThan(0);
    expect(answers.filter((a) => a.status === 503).every((a) => /rate limit of 4 reads per second|reads in flight/.test(a.message))).toBe(true);
  });
});
