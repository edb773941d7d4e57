import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PoolCache } from '../cache/index.js';
import { ErrorCode } from '../errors.js';
import { Dex, SwapMode, directionFor, quoteSwap } from '../dex/index.js';
import { CircuitBreakerStateValue } from '../obs/quote-metrics.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { CircuitBreaker } from '../common/index.js';
import { quoteFromCache } from '../quote/cache-quoter.js';
import { QuoteErrorCode } from '../quote/errors.js';
import type { QuoteHttpServer } from './quote-http-server.js';
import { quoteToJson } from '../quote/answer-json.js';
import { RateLimiter } from '../common/index.js';
import { FakeClock, manualSimulator, quoteHttpServer, storePool, syntheticAddress, syntheticAmmPool } from '../quote/testing.js';

/**
 * The quote service over real HTTP (port 0) on a cache filled with a manual simulator's pools.
 */

const sim = manualSimulator();
const chain = sim.chain;
const UNKNOWN_MINT = 'So11111111111111111111111111111111111111113';

const clock = new FakeClock();
const cache = new PoolCache({ now: clock.now, stalenessThresholdMs: 30_000 });
const breakerClock = new FakeClock();
const breaker = new CircuitBreaker({ now: breakerClock.now });
let server: QuoteHttpServer;
let base: string;

beforeAll(async () => {
  let slot = 500n;
  for (const view of chain.pools()) storePool(cache, view, slot++);
  // The cache attempt's clock stands still: under a loaded machine a real one could call an
  // attempt slower than CACHE_FIRST_TIMEOUT and feed the breaker, which these tests count.
  server = quoteHttpServer({ cache, rateLimiter: new RateLimiter({ rps: 100_000 }), breaker, clock: () => 0, busStatus: () => 'disconnected' });
  const port = await server.start(0);
  expect(port).toBeGreaterThan(0);
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await server.close();
  await sim.close();
});

/** The JSON bodies these tests read: a quote, an error or /health. */
interface Body {
  stateAgeMs?: number;
  error?: { code: string; message: string };
  cache?: { hit_rate: number };
  [field: string]: unknown;
}

async function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: Body; headers: Headers }> {
  const res = await fetch(base + path, { headers });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as Body, headers: res.headers };
}

async function metric(name: string): Promise<number> {
  const m = await server.metrics.registry.getSingleMetric(name)!.get();
  return m.values.reduce((s, v) => s + v.value, 0);
}

function bestOnChain(input: string, output: string, amount: bigint) {
  let best = { pool: '', out: -1n, fee: 0n, feeMint: '', priceImpact: 0 };
  for (const view of chain.poolsForPair(input, output)) {
    const r = quoteSwap(view.pool, { aToB: directionFor(view.pool, input, output), mode: SwapMode.ExactIn, amount }, view.ctx);
    if (r.ok && r.amountOut > best.out) {
      best = { pool: view.address, out: r.amountOut, fee: r.fee, feeMint: r.feeInOutput === true ? output : input, priceImpact: r.priceImpact };
    }
  }
  return best;
}

describe('GET /quote', () => {
  it('answers the best pool quote as camelCase JSON with u64 values as decimal strings', async () => {
    clock.advance(250);
    const amount = 2_000_000_000n;
    const best = bestOnChain(WSOL_MINT, USDC_MINT, amount);
    const hitsBefore = await metric('quote_service_quote_cache_hits_total');
    const { status, body, headers } = await get(`/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=${amount}`);
    expect(status).toBe(200);
    expect(headers.get('content-type')).toBe('application/json');
    expect(body).toEqual({
      inputMint: WSOL_MINT,
      outputMint: USDC_MINT,
      swapMode: 'ExactIn',
      inputAmount: amount.toString(),
      outputAmount: best.out.toString(),
      pool: best.pool,
      dex: chain.pool(best.pool)!.dex,
      priceImpact: best.priceImpact,
      fee: best.fee.toString(),
      slot: cache.slotOf(best.pool)!.toString(),
      stateAgeMs: 250,
      contextSlot: cache.newestSlot.toString(),
      // SLIPPAGE_BPS 50 by default: floor(out × 9,950 / 10,000); exact in, the input is the bound
      slippageBps: 50,
      minOutputAmount: ((best.out * 9_950n) / 10_000n).toString(),
      maxInputAmount: amount.toString(),
      source: 'cache',
      route: [
        {
          pool: best.pool,
          dex: chain.pool(best.pool)!.dex,
          inputMint: WSOL_MINT,
          outputMint: USDC_MINT,
          inAmount: amount.toString(),
          outAmount: best.out.toString(),
          fee: best.fee.toString(),
          feeMint: best.feeMint,
        },
      ],
    });
    expect(await metric('quote_service_quote_cache_hits_total')).toBe(hitsBefore + 1);
    expect(await metric('quote_service_quotes_total')).toBeGreaterThanOrEqual(1);
    const exposition = await server.metrics.registry.metrics();
    const count = /^quote_service_quote_latency_seconds_count\{source="cache"\} (\d+)$/m.exec(exposition);
    expect(Number(count![1])).toBeGreaterThanOrEqual(1);
  });

  it('refuses state older than maxStateAgeMs with 503 and serves it when young enough', async () => {
    clock.advance(1_000);
    const q = `/quote?input=${USDC_MINT}&output=${WSOL_MINT}&amount=1000000`;
    const ok = await get(`${q}&maxStateAgeMs=60000`);
    expect(ok.status).toBe(200);
    expect(ok.body.stateAgeMs).toBeGreaterThanOrEqual(1_000);
    const refused = await get(`${q}&maxStateAgeMs=10`);
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({ error: { code: QuoteErrorCode.NoValidQuotes, message: 'no valid quotes from cache' } });
    breaker.recordSuccess(); // keep the breaker's failure count for its own test
  });

  it.each([
    ['', 'input', 'missing parameter: input'],
    [`input=abc&output=${USDC_MINT}&amount=1`, 'input', 'parameter input is not a base58 public key'],
    [`input=${WSOL_MINT}&amount=1`, 'output', 'missing parameter: output'],
    [`input=${WSOL_MINT}&output=0OIl&amount=1`, 'output', 'parameter output is not a base58 public key'],
    [`input=${WSOL_MINT}&output=${USDC_MINT}`, 'amount', 'missing parameter: amount'],
    [`input=${WSOL_MINT}&output=${USDC_MINT}&amount=-5`, 'amount', 'parameter amount is not an unsigned 64-bit integer'],
    [`input=${WSOL_MINT}&output=${USDC_MINT}&amount=1.5`, 'amount', 'parameter amount is not an unsigned 64-bit integer'],
    [`input=${WSOL_MINT}&output=${USDC_MINT}&amount=18446744073709551616`, 'amount', 'parameter amount is not an unsigned 64-bit integer'],
    [`input=${WSOL_MINT}&output=${USDC_MINT}&amount=0`, 'amount', 'parameter amount must be greater than zero'],
    [`input=${WSOL_MINT}&output=${USDC_MINT}&amount=1&maxStateAgeMs=soon`, 'maxStateAgeMs', 'parameter maxStateAgeMs is not a non-negative integer of milliseconds'],
  ])('answers 400 naming the parameter for %s', async (query, parameter, message) => {
    const { status, body } = await get(`/quote?${query}`);
    expect(status).toBe(400);
    expect(body).toEqual({ error: { code: QuoteErrorCode.BadParameter, message } });
    expect(message).toContain(parameter);
  });

  it('accepts the largest u64 amount', async () => {
    const { status, body } = await get(`/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=18446744073709551615`);
    // Either a quote or a refusal of every pool (insufficient liquidity), never a 400.
    expect([200, 503]).toContain(status);
    if (status === 503) expect(body.error?.code).toBe(QuoteErrorCode.NoValidQuotes);
    breaker.recordSuccess();
  });

  it('answers 404 for an unknown token and for a pair no pool trades', async () => {
    const unknown = await get(`/quote?input=${UNKNOWN_MINT}&output=${USDC_MINT}&amount=1`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: { code: ErrorCode.UnknownMint, message: `unknown token ${UNKNOWN_MINT}` } });

    // A pair of the tests' own, isolated from SOL and USDC: no direct pool and no two-hop route
    // links its mints to USDC (a pair with no direct pool may route through SOL or USDC).
    const base = chain.pools().find((p) => p.dex === Dex.Amm)!;
    const isolated = syntheticAmmPool(base, { label: 'isolated', tokenA: syntheticAddress('mint X'), tokenB: syntheticAddress('mint Y'), reserveA: 10n ** 12n, reserveB: 10n ** 12n });
    storePool(cache, isolated, 400n);
    const untraded: [string, string] = [isolated.pool.tokenA, USDC_MINT];
    const none = await get(`/quote?input=${untraded![0]}&output=${untraded![1]}&amount=1000`);
    expect(none.status).toBe(404);
    expect(none.body).toEqual({ error: { code: QuoteErrorCode.NoPoolsInCache, message: 'no pools found in cache' } });
  });

  it('answers repeated quotes from the memo, byte for byte as quoteFromCache, and follows every pool update', async () => {
    const memoClock = new FakeClock();
    const memoCache = new PoolCache({ now: memoClock.now, stalenessThresholdMs: 30_000 });
    const twin = new PoolCache({ now: memoClock.now, stalenessThresholdMs: 30_000 });
    let slot = 100n;
    for (const view of chain.pools()) {
      storePool(memoCache, view, slot);
      storePool(twin, view, slot++);
    }
    const memoServer = quoteHttpServer({ cache: memoCache, rateLimiter: false });
    const port = await memoServer.start(0);
    try {
      const amount = 3_000_000_000n;
      const url = `http://127.0.0.1:${port}/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=${amount}`;
      const answer = async (): Promise<string> => {
        const res = await fetch(url);
        expect(res.status).toBe(200);
        return res.text();
      };
      const expected = (): string => JSON.stringify(quoteToJson(quoteFromCache(twin, WSOL_MINT, USDC_MINT, amount)));
      expect(await answer()).toBe(expected());
      memoClock.advance(1_500);
      expect(await answer()).toBe(expected());
      expect(memoServer.engine.memo).toMatchObject({ hits: 1, misses: 1 });
      // The winner gets a newer, shallower state: the memo gives way to the next best pool.
      const winner = quoteFromCache(twin, WSOL_MINT, USDC_MINT, amount).pool;
      const view = chain.pool(winner)!;
      const shallow = { ...view, pool: { ...view.pool, liquidity: 1n, reserveA: 1n, reserveB: 1n }, ctx: {} };
      storePool(memoCache, shallow, slot);
      storePool(twin, shallow, slot++);
      const after = await answer();
      expect(after).toBe(expected());
      expect(JSON.parse(after)).not.toMatchObject({ pool: winner });
      expect(memoServer.engine.memo).toMatchObject({ hits: 1, misses: 2 });
      expect(memoCache.stats()).toMatchObject({ hits: 3, misses: 0 });
    } finally {
      await memoServer.close();
    }
  });

  it('answers 404 JSON on an unknown route', async () => {
    const { status, body } = await get('/nope');
    expect(status).toBe(404);
    expect(body.error?.code).toBe(QuoteErrorCode.NotFound);
  });
});

/** The smallest input of quoteSwap exact out among the chain's pools of the pair, and its pool. */
function bestExactOutOnChain(input: string, output: string, amount: bigint) {
  let best = { pool: '', in: -1n };
  for (const view of chain.poolsForPair(input, output)) {
    const r = quoteSwap(view.pool, { aToB: directionFor(view.pool, input, output), mode: SwapMode.ExactOut, amount }, view.ctx);
    if (r.ok && (best.in < 0n || r.amountIn < best.in || (r.amountIn === best.in && view.address < best.pool))) best = { pool: view.address, in: r.amountIn };
  }
  return best;
}

describe('GET /quote: swapMode and slippageBps', () => {
  it('quotes exact out: the output as asked, the least input over every pool, and the most input after slippage', async () => {
    const amount = 150_000_000n; // 150 USDC
    const best = bestExactOutOnChain(WSOL_MINT, USDC_MINT, amount);
    expect(best.in).toBeGreaterThan(0n);
    const { status, body } = await get(`/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=${amount}&swapMode=ExactOut&slippageBps=125`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      swapMode: 'ExactOut',
      inputAmount: best.in.toString(),
      outputAmount: amount.toString(),
      pool: best.pool,
      slippageBps: 125,
      minOutputAmount: amount.toString(),
      maxInputAmount: ((best.in * 10_125n + 9_999n) / 10_000n).toString(),
      source: 'cache',
    });
    expect(body.route).toEqual([expect.objectContaining({ pool: best.pool, inAmount: best.in.toString(), outAmount: amount.toString() })]);
  });

  it('applies slippageBps to the minimum output of an exact-in quote, SLIPPAGE_BPS when absent', async () => {
    const q = `/quote?input=${USDC_MINT}&output=${WSOL_MINT}&amount=25000000`;
    const byDefault = await get(q);
    const tight = await get(`${q}&slippageBps=0`);
    const loose = await get(`${q}&slippageBps=10000&swapMode=ExactIn`);
    const out = BigInt(byDefault.body.outputAmount as string);
    expect(byDefault.body).toMatchObject({ swapMode: 'ExactIn', slippageBps: 50, minOutputAmount: ((out * 9_950n) / 10_000n).toString(), maxInputAmount: '25000000' });
    expect(tight.body).toMatchObject({ slippageBps: 0, minOutputAmount: out.toString(), outputAmount: out.toString() });
    expect(loose.body).toMatchObject({ slippageBps: 10_000, minOutputAmount: '0', outputAmount: out.toString() });
  });

  it('memoizes exact out apart from exact in, byte for byte as quoteFromCache, whatever the slippage asked', async () => {
    const memoClock = new FakeClock();
    const memoCache = new PoolCache({ now: memoClock.now, stalenessThresholdMs: 30_000 });
    const twin = new PoolCache({ now: memoClock.now, stalenessThresholdMs: 30_000 });
    let slot = 100n;
    for (const view of chain.pools()) {
      storePool(memoCache, view, slot);
      storePool(twin, view, slot++);
    }
    const memoServer = quoteHttpServer({ cache: memoCache, rateLimiter: false, slippageBps: 75 });
    const port = await memoServer.start(0);
    try {
      const amount = 2_000_000_000n;
      const answer = async (mode: string, bps?: number): Promise<string> => {
        const extra = bps === undefined ? '' : `&slippageBps=${bps}`;
        const res = await fetch(`http://127.0.0.1:${port}/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=${amount}&swapMode=${mode}${extra}`);
        expect(res.status).toBe(200);
        return res.text();
      };
      const expected = (mode: SwapMode, bps: number): string =>
        JSON.stringify(quoteToJson(quoteFromCache(twin, WSOL_MINT, USDC_MINT, amount, undefined, { mode, slippageBps: bps })));
      expect(await answer('ExactIn')).toBe(expected(SwapMode.ExactIn, 75));
      expect(await answer('ExactOut')).toBe(expected(SwapMode.ExactOut, 75));
      expect(memoServer.engine.memo).toMatchObject({ hits: 0, misses: 2 });
      memoClock.advance(900);
      expect(await answer('ExactOut', 20)).toBe(expected(SwapMode.ExactOut, 20));
      expect(await answer('ExactOut')).toBe(expected(SwapMode.ExactOut, 75));
      expect(await answer('ExactIn', 9_000)).toBe(expected(SwapMode.ExactIn, 9_000));
      expect(memoServer.engine.memo).toMatchObject({ hits: 3, misses: 2 });
    } finally {
      await memoServer.close();
    }
  });

  it.each([
    ['swapMode=exactout', 'swapMode', 'parameter swapMode must be ExactIn or ExactOut'],
    ['swapMode=ExactOutput', 'swapMode', 'parameter swapMode must be ExactIn or ExactOut'],
    ['slippageBps=10001', 'slippageBps', 'parameter slippageBps is not an integer from 0 to 10000'],
    ['slippageBps=-1', 'slippageBps', 'parameter slippageBps is not an integer from 0 to 10000'],
    ['slippageBps=0.5', 'slippageBps', 'parameter slippageBps is not an integer from 0 to 10000'],
    ['slippageBps=50bps', 'slippageBps', 'parameter slippageBps is not an integer from 0 to 10000'],
    ['slippageBps=999999', 'slippageBps', 'parameter slippageBps is not an integer from 0 to 10000'],
  ])('answers 400 naming the parameter for %s', async (extra, parameter, message) => {
    const { status, body } = await get(`/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=1000&${extra}`);
    expect(status).toBe(400);
    expect(body).toEqual({ error: { code: QuoteErrorCode.BadParameter, message } });
    expect(message).toContain(parameter);
  });

  it('answers 503 when no pool can pay the exact output asked', async () => {
    const { status, body } = await get(`/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=18446744073709551615&swapMode=ExactOut`);
    expect(status).toBe(503);
    expect(body).toEqual({ error: { code: QuoteErrorCode.NoValidQuotes, message: 'no valid quotes from cache' } });
    breaker.recordSuccess(); // keep the breaker's failure count for its own test
  });
});

describe('GET /health', () => {
  it('reports the cache statistics, hit rate and bus status, and sets the pool gauges', async () => {
    const { status, body } = await get('/health');
    expect(status).toBe(200);
    const stats = cache.stats();
    expect(body).toMatchObject({
      status: 'ok',
      cache: { total_pools: cache.size, fresh_pools: cache.size, stale_pools: 0, hit_rate: stats.hitRate },
      bus: { status: 'disconnected' },
    });
    expect(body.cache?.hit_rate).toBeGreaterThan(0);
    expect(await metric('quote_service_pool_cache_total_pools')).toBe(cache.size);
  });

  it('serves the quote registry on /metrics', async () => {
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('quote_service_quotes_total');
    expect(text).toContain('quote_service_quote_latency_seconds_bucket{le="0.005",source="cache"}');
  });
});

describe('circuit breaker on the cache path', () => {
  it('opens after 5 failing quotes (stale cache), then fails at once with 503 until it half-opens', async () => {
    clock.advance(60_000); // every pool stale
    const q = `/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=1000`;
    for (let i = 0; i < 5; i++) {
      const r = await get(q);
      expect(r.status).toBe(503);
      expect(r.body.error?.code).toBe(QuoteErrorCode.NoValidQuotes);
    }
    expect(await metric('quote_service_circuit_breaker_state')).toBe(CircuitBreakerStateValue.open);
    const missesBefore = await metric('quote_service_quote_cache_misses_total');
    const open = await get(q);
    expect(open.status).toBe(503);
    expect(open.body.error?.code).toBe(QuoteErrorCode.CircuitOpen);
    expect(await metric('quote_service_quote_cache_misses_total')).toBe(missesBefore + 1);

    // Fresh state again, and the reset timeout passes: 3 successes close it.
    let slot = 10_000n;
    for (const view of chain.pools()) storePool(cache, view, slot++);
    breakerClock.advance(30_000);
    for (let i = 0; i < 3; i++) expect((await get(q)).status).toBe(200);
    expect(breaker.state).toBe('closed');
    expect(await metric('quote_service_circuit_breaker_state')).toBe(CircuitBreakerStateValue.closed);
  });
});

describe('rate limiting', () => {
  it('answers 429 with Retry-After past the burst, per client address, whatever x-api-key says', async () => {
    const limiterClock = new FakeClock(); // no refill between the requests, however slow the machine
    const limited = quoteHttpServer({ cache, rateLimiter: new RateLimiter({ rps: 1, now: limiterClock.now }) });
    const port = await limited.start(0);
    try {
      const url = `http://127.0.0.1:${port}/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=1000`;
      const statuses: number[] = [];
      let last: Response | undefined;
      for (let i = 0; i < 3; i++) {
        last = await fetch(url, { headers: { 'x-api-key': 'k1' } });
        statuses.push(last.status);
        if (i < 2) await last.text();
      }
      expect(statuses).toEqual([200, 200, 429]);
      expect(last!.headers.get('retry-after')).toBe('1');
      expect(await last!.json()).toEqual({
        error: { code: QuoteErrorCode.RateLimited, message: 'rate limit of 1 requests per second exceeded' },
      });
      // Another key from the same address is the same client (issue 11: keys are forgeable).
      const other = await fetch(url, { headers: { 'x-api-key': 'k2' } });
      expect(other.status).toBe(429);
      await other.text();
      limiterClock.advance(2_000);
      // Without a key, the remote address is the client.
      const anon: number[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await fetch(url);
        anon.push(r.status);
        await r.text();
      }
      expect(anon).toEqual([200, 200, 429]);
      limiterClock.advance(1_000);
      const again = await fetch(url);
      expect(again.status).toBe(200);
      await again.text();
    } finally {
      await limited.close();
    }
  });
});
