import { EventEmitter } from 'node:events';

import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

import { pairId } from '../aggregator/swap-route-event.js';
import { PoolCache } from '../cache/index.js';
import { Dex, SwapMode, type AmmPool } from '../dex/index.js';
import { createQuoteMetrics, type QuoteMetrics } from '../obs/quote-metrics.js';
import { loadTidepoolProto } from '../proto.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import type { SimPoolView } from '../sim/market-view.js';
import { quoteFromCache } from '../quote/cache-quoter.js';
import type { QuoteHttpServer } from '../quote-http/quote-http-server.js';
import { QuoteStreamServer } from './quote-stream-server.js';
import { StreamRequestError, parseStreamRequest } from './quote-stream-request.js';
import { QuoteSubscription } from './quote-subscription.js';
import { maxInputAmount, minOutputAmount, type UpstreamQuote } from '../quote/quote-wire.js';
import { CountingLoader, FakeClock, manualSimulator, quoteHttpServer, storePool } from '../quote/testing.js';

/**
 * The local upstream's StreamBatchQuotes over a real grpc-js server and client (port 0), quoting
 * from a pool cache filled with the manual simulator's pools under a fake clock.
 */

const sim = manualSimulator();
const chain = sim.chain;
let rpcUrl = '';
beforeAll(async () => {
  rpcUrl = (await sim.start()).rpc;
});
afterAll(async () => {
  await sim.close();
});

const { QuoteService } = loadTidepoolProto();
const UNKNOWN_MINT = '11111111111111111111111111111112';
const TWO_POW_60 = 1n << 60n;

/** The simulator's one AMM pool that does not trade WSOL/USDC (a pair with a single, large pool). */
function otherAmm(): SimPoolView {
  const view = chain.pools().find((p) => p.dex === Dex.Amm && !(p.pool.tokenA === WSOL_MINT && p.pool.tokenB === USDC_MINT));
  if (view === undefined) throw new Error('no second AMM pool in the simulator');
  return view;
}

/** `view` with its B reserve scaled by num / den (another state, another price, of the same pool). */
function scaled(view: SimPoolView, num: bigint, den: bigint): SimPoolView {
  const pool = view.pool as AmmPool;
  return { ...view, pool: { ...pool, reserveB: (pool.reserveB * num) / den } };
}

interface Harness {
  clock: FakeClock;
  cache: PoolCache;
  metrics: QuoteMetrics;
  http: QuoteHttpServer;
  server: QuoteStreamServer;
  client: grpc.Client & { StreamBatchQuotes: (req: unknown) => grpc.ClientReadableStream<UpstreamQuote> };
  slot: bigint;
}

const harnesses: Harness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) {
    h.client.close();
    await h.server.close();
    await h.http.close();
  }
});

async function harness(options: { loader?: boolean; fill?: boolean } = {}): Promise<Harness> {
  const clock = new FakeClock();
  const cache = new PoolCache({ now: clock.now, stalenessThresholdMs: 30_000, startupWindowMs: 0 });
  let slot = 100n;
  if (options.fill !== false) for (const view of chain.pools()) storePool(cache, view, slot++);
  const metrics = createQuoteMetrics();
  const http = quoteHttpServer({
    cache,
    metrics,
    rateLimiter: false,
    hybridMode: options.loader === true,
    ...(options.loader === true ? { loader: new CountingLoader(rpcUrl) } : {}),
  });
  // The interval tests ask for 10-20 ms pushes: below the default minimum, allowed here.
  const server = new QuoteStreamServer({ engine: http.engine, shutdownTimeoutMs: 1000, limits: { minIntervalMs: 10 } });
  const port = await server.start(0);
  const client = new QuoteService(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
    'grpc.keepalive_time_ms': 10_000,
  }) as unknown as Harness['client'];
  const h = { clock, cache, metrics, http, server, client, slot };
  harnesses.push(h);
  return h;
}

/** Everything one stream delivered. */
class Stream {
  readonly quotes: UpstreamQuote[] = [];
  error: grpc.ServiceError | undefined;
  constructor(readonly call: grpc.ClientReadableStream<UpstreamQuote>) {
    call.on('data', (q: UpstreamQuote) => this.quotes.push(q));
    call.on('error', (e: grpc.ServiceError) => (this.error = e));
  }
  of(id: string): UpstreamQuote[] {
    return this.quotes.filter((q) => q.pairId === id);
  }
}

function open(h: Harness, request: unknown): Stream {
  return new Stream(h.client.StreamBatchQuotes(request));
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

async function gaugeValue(m: QuoteMetrics, name: string): Promise<number> {
  const line = (await m.registry.metrics()).split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.slice(name.length + 1));
}

/** What quoteFromCache answers, as the stream must write it. */
function expectedFromCache(
  h: Harness,
  input: string,
  output: string,
  amount: bigint,
  slippageBps: number,
  mode: SwapMode = SwapMode.ExactIn,
): Record<string, unknown> {
  const q = quoteFromCache(h.cache, input, output, amount, undefined, { mode, slippageBps });
  const exactOut = mode === SwapMode.ExactOut;
  return {
    pairId: pairId(input, output, amount, exactOut),
    inputMint: input,
    outputMint: output,
    swapMode: exactOut ? 'SWAP_MODE_EXACT_OUT' : 'SWAP_MODE_EXACT_IN',
    inputAmount: q.inputAmount.toString(),
    outputAmount: q.outputAmount.toString(),
    minOutputAmount: exactOut ? amount.toString() : minOutputAmount(q.outputAmount, slippageBps).toString(),
    maxInputAmount: exactOut ? maxInputAmount(q.inputAmount, slippageBps).toString() : amount.toString(),
    slippageBps,
    priceImpact: q.priceImpact,
    slot: q.slot.toString(),
    contextSlot: q.contextSlot.toString(),
    stateAgeMs: q.stateAgeMs,
    source: 'QUOTE_SOURCE_LOCAL',
    origin: 'QUOTE_ORIGIN_CACHE',
    provider: 'tidepool',
    routeHash: '',
    receivedAtUnixMs: '0',
    route: q.route.map((hop) => ({
      pool: hop.pool,
      dex: hop.dex,
      inputMint: hop.inputMint,
      outputMint: hop.outputMint,
      inAmount: hop.inAmount.toString(),
      outAmount: hop.outAmount.toString(),
      fee: hop.fee.toString(),
      slot: hop.slot.toString(),
      poolAgeSeconds: expect.any(Number) as unknown as number,
      _poolAgeSeconds: 'poolAgeSeconds',
    })) as UpstreamQuote['route'],
  };
}

describe('StreamBatchQuotes (local upstream)', () => {
  it("first quotes every pair with quoteFromCache's exact answers, amounts above 2^53 intact", async () => {
    const h = await harness();
    const amm = otherAmm();
    const pairs = [
      { inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1000000000' },
      { inputMint: USDC_MINT, outputMint: WSOL_MINT, amount: '25000000' },
      { inputMint: amm.pool.tokenB, outputMint: amm.pool.tokenA, amount: TWO_POW_60.toString() },
      { inputMint: amm.pool.tokenA, outputMint: amm.pool.tokenB, amount: ((1n << 53n) + 1n).toString() },
    ];
    const s = open(h, { pairs, slippageBps: 75, updateIntervalMs: 60_000 });
    await eventually(() => (s.quotes.length >= pairs.length ? true : undefined), 'first quotes');
    for (const p of pairs) {
      const [q] = s.of(pairId(p.inputMint, p.outputMint, BigInt(p.amount)));
      expect(q, p.amount).toMatchObject(expectedFromCache(h, p.inputMint, p.outputMint, BigInt(p.amount), 75));
      expect(q!.error).toBeFalsy();
      expect(Number(q!.quotedAtUnixMs)).toBeGreaterThan(0);
      expect((q as unknown as Record<string, unknown>).providerUptime).toBeUndefined();
    }
    const big = s.of(pairId(amm.pool.tokenB, amm.pool.tokenA, TWO_POW_60))[0]!;
    expect(big.inputAmount).toBe('1152921504606846976');
    expect(BigInt(big.outputAmount)).toBeGreaterThan(1n << 53n);
  });

  it('quotes exact-out pairs apart from exact-in pairs of the same amount, each with its slippage bound', async () => {
    const h = await harness();
    const amm = otherAmm();
    const pairs = [
      { inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '150000000', swapMode: 'SWAP_MODE_EXACT_OUT' },
      { inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '150000000' },
      { inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '150000000', swapMode: 'SWAP_MODE_EXACT_IN' }, // the same pair as the one before
      { inputMint: amm.pool.tokenA, outputMint: amm.pool.tokenB, amount: '1000000', swapMode: 'SWAP_MODE_EXACT_OUT' },
    ];
    const s = open(h, { pairs, slippageBps: 40, updateIntervalMs: 60_000 });
    await eventually(() => (s.quotes.length >= 3 ? true : undefined), 'first quotes');
    expect(s.quotes).toHaveLength(3);
    const exactOut = s.of(pairId(WSOL_MINT, USDC_MINT, 150_000_000n, true));
    const exactIn = s.of(pairId(WSOL_MINT, USDC_MINT, 150_000_000n));
    expect(exactOut).toHaveLength(1);
    expect(exactIn).toHaveLength(1);
    expect(exactOut[0]).toMatchObject(expectedFromCache(h, WSOL_MINT, USDC_MINT, 150_000_000n, 40, SwapMode.ExactOut));
    expect(exactOut[0]!.outputAmount).toBe('150000000');
    expect(BigInt(exactOut[0]!.maxInputAmount)).toBeGreaterThan(BigInt(exactOut[0]!.inputAmount));
    expect(exactIn[0]).toMatchObject(expectedFromCache(h, WSOL_MINT, USDC_MINT, 150_000_000n, 40));
    const other = s.of(pairId(amm.pool.tokenA, amm.pool.tokenB, 1_000_000n, true))[0];
    expect(other).toMatchObject(expectedFromCache(h, amm.pool.tokenA, amm.pool.tokenB, 1_000_000n, 40, SwapMode.ExactOut));
    expect(other!.error).toBeFalsy();
  });

  it('answers an exact-out pair no pool can pay with an error quote that keeps the asked output', async () => {
    const h = await harness();
    const max = '18446744073709551615';
    const s = open(h, { pairs: [{ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: max, swapMode: 'SWAP_MODE_EXACT_OUT' }], updateIntervalMs: 60_000 });
    const [q] = await eventually(() => (s.quotes.length > 0 ? s.quotes : undefined), 'the error quote');
    expect(q).toMatchObject({ swapMode: 'SWAP_MODE_EXACT_OUT', inputAmount: '0', outputAmount: max, maxInputAmount: '0', route: [] });
    expect(q!.error).toMatchObject({ code: 'TP_ERR_NO_VALID_QUOTES', grpcStatus: grpc.status.UNAVAILABLE });
  });

  it('reports the pool age in seconds since the cache first stored the pool', async () => {
    const h = await harness();
    h.clock.advance(7_500);
    const amm = otherAmm();
    storePool(h.cache, amm, 10_000n); // a newer state: the age counts from the first store all the same
    const s = open(h, { pairs: [{ inputMint: amm.pool.tokenA, outputMint: amm.pool.tokenB, amount: '1000000' }], updateIntervalMs: 60_000 });
    const [q] = await eventually(() => (s.quotes.length > 0 ? s.quotes : undefined), 'a quote');
    expect(q!.route[0]!.poolAgeSeconds).toBe(7);
  });

  it('deduplicates pairs by pairID and applies the slippage floor', async () => {
    const h = await harness();
    const p = { inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '123456789' };
    const s = open(h, { pairs: [p, { ...p, amount: '0123456789' }, p], slippageBps: 10_000, updateIntervalMs: 60_000 });
    await eventually(() => (s.quotes.length > 0 ? true : undefined), 'a quote');
    expect(s.quotes).toHaveLength(1);
    expect(s.quotes[0]!.minOutputAmount).toBe('0');
    expect(h.server.activeStreams).toBe(1);
  });

  it('pushes a new quote for the pair whose pool changed, and for no other pair', async () => {
    const h = await harness();
    const amm = otherAmm();
    const changed = { inputMint: amm.pool.tokenA, outputMint: amm.pool.tokenB, amount: '1000000000' };
    const other = { inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1000000000' };
    const changedId = pairId(changed.inputMint, changed.outputMint, 1_000_000_000n);
    const otherId = pairId(other.inputMint, other.outputMint, 1_000_000_000n);
    const s = open(h, { pairs: [changed, other], updateIntervalMs: 60_000 });
    await eventually(() => (s.quotes.length === 2 ? true : undefined), 'first quotes');
    const before = s.of(changedId)[0]!;

    storePool(h.cache, scaled(amm, 2n, 1n), 5_000n);
    const [, after] = await eventually(() => (s.of(changedId).length === 2 ? s.of(changedId) : undefined), 'the pushed quote');
    expect(after!.slot).toBe('5000');
    expect(after!.outputAmount).not.toBe(before.outputAmount);
    expect(after).toMatchObject(expectedFromCache(h, changed.inputMint, changed.outputMint, 1_000_000_000n, 0));
    // A second change of the same pool: by the time its quote arrives, any push for the other pair
    // from the first change would have arrived before it (one stream, in order).
    storePool(h.cache, scaled(amm, 3n, 1n), 5_001n);
    await eventually(() => (s.of(changedId).length === 3 ? true : undefined), 'the second pushed quote');
    expect(s.of(otherId)).toHaveLength(1);
  });

  it('sends nothing when a store leaves the quote of a pair unchanged', async () => {
    const h = await harness();
    const amm = otherAmm();
    const watched = { inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1000000000' };
    const probe = { inputMint: amm.pool.tokenA, outputMint: amm.pool.tokenB, amount: '1000000000000' };
    const s = open(h, { pairs: [watched, probe], updateIntervalMs: 60_000 });
    await eventually(() => (s.quotes.length === 2 ? true : undefined), 'first quotes');
    // A context update moves the WSOL/USDC pair's version but not its quote.
    const winner = s.of(pairId(WSOL_MINT, USDC_MINT, 1_000_000_000n))[0]!.route[0]!.pool;
    h.cache.updateContext(winner, h.cache.entryAt(h.cache.idOf(winner))!.context);
    storePool(h.cache, scaled(amm, 5n, 1n), 6_000n);
    await eventually(() => (s.quotes.length === 3 ? true : undefined), 'the probe pair quote');
    expect(s.of(pairId(WSOL_MINT, USDC_MINT, 1_000_000_000n))).toHaveLength(1);
  });

  it('pushes every pair again each update interval when nothing changes', async () => {
    const h = await harness();
    const s = open(h, { pairs: [{ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1000000' }], updateIntervalMs: 20 });
    await eventually(() => (s.quotes.length >= 4 ? true : undefined), 'interval pushes');
    expect(new Set(s.quotes.map((q) => q.outputAmount)).size).toBe(1);
  });

  it("says an unchanged pair's last answer again at each interval without quoting it, its ages moved on, until the state is too old", async () => {
    const h = await harness();
    const quote = vi.spyOn(h.http.engine, 'quote');
    const s = open(h, { pairs: [{ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1000000' }], updateIntervalMs: 10 });
    await eventually(() => (s.quotes.length >= 4 ? true : undefined), 'interval pushes');
    expect(quote).toHaveBeenCalledTimes(1);
    const first = s.quotes[0]!;
    expect(new Set(s.quotes.map((q) => `${q.outputAmount}/${q.slot}/${q.route[0]!.pool}`)).size).toBe(1);
    // The cache's clock moves 5 s: the pushes say the state is 5 s older, still without a quote.
    h.clock.advance(5_000);
    const seen = s.quotes.length;
    const later = await eventually(() => s.quotes.slice(seen).find((q) => q.stateAgeMs === first.stateAgeMs + 5_000), 'a push 5 s older');
    expect({ ...later, stateAgeMs: 0, quotedAtUnixMs: '', route: [] }).toEqual({ ...first, stateAgeMs: 0, quotedAtUnixMs: '', route: [] });
    expect(quote).toHaveBeenCalledTimes(1);
    // Past the cache's staleness threshold (30 s) the pair is quoted again, and the cache refuses it.
    h.clock.advance(30_000);
    const stale = await eventually(() => s.quotes.find((q) => q.error), 'the stale answer');
    expect(stale.error).toMatchObject({ code: 'TP_ERR_NO_VALID_QUOTES' });
    expect(quote.mock.calls.length).toBeGreaterThan(1);
  });

  it('answers an unknown pair with an error quote (NOT_FOUND) and carries on with the others', async () => {
    const h = await harness();
    const amm = otherAmm();
    const unknown = { inputMint: UNKNOWN_MINT, outputMint: USDC_MINT, amount: '5' };
    const known = { inputMint: amm.pool.tokenA, outputMint: amm.pool.tokenB, amount: '1000000' };
    const s = open(h, { pairs: [unknown, known], updateIntervalMs: 60_000 });
    await eventually(() => (s.quotes.length === 2 ? true : undefined), 'both quotes');
    const [err] = s.of(pairId(UNKNOWN_MINT, USDC_MINT, 5n));
    expect(err).toMatchObject({ inputAmount: '5', outputAmount: '0', route: [], source: 'QUOTE_SOURCE_LOCAL' });
    expect(err!.error).toMatchObject({ code: 'TP_ERR_UNKNOWN_MINT', grpcStatus: grpc.status.NOT_FOUND });
    expect(err!.error!.message).toContain(UNKNOWN_MINT);
    storePool(h.cache, scaled(amm, 2n, 1n), 7_000n);
    await eventually(() => (s.quotes.length === 3 ? true : undefined), 'a quote after the error');
    expect(s.error).toBeUndefined();
  });

  it('answers UNAVAILABLE when the pools of the pair are stale and there is no fallback, repeating it without asking the cache again', async () => {
    const h = await harness();
    const p = { inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1000000' };
    h.clock.advance(60_000);
    const misses = h.cache.stats().misses;
    const s = open(h, { pairs: [p], updateIntervalMs: 10 });
    await eventually(() => (s.quotes.length >= 4 ? true : undefined), 'interval error quotes');
    for (const q of s.quotes) expect(q.error).toMatchObject({ code: 'TP_ERR_NO_VALID_QUOTES', grpcStatus: grpc.status.UNAVAILABLE });
    // One cache attempt, whatever the number of pushes: the breaker is not fed by the interval.
    expect(h.cache.stats().misses).toBe(misses + 1);
    expect(h.http.engine.breaker.state).toBe('closed');
    // A new state of a pool of the pair is quoted again at once.
    const view = chain.poolsForPair(WSOL_MINT, USDC_MINT).find((v) => v.dex === Dex.Amm)!;
    storePool(h.cache, view, 20_000n);
    await eventually(() => s.quotes.find((q) => !q.error), 'a quote once a pool is fresh again');
  });

  it('answers UNAVAILABLE when the cache is disabled and there is no fallback', async () => {
    const clock = new FakeClock();
    const cache = new PoolCache({ now: clock.now });
    const metrics = createQuoteMetrics();
    const http = quoteHttpServer({ cache, metrics, rateLimiter: false, cacheEnabled: false });
    const sink = new EventEmitter() as EventEmitter & { written: UpstreamQuote[]; write: (m: UpstreamQuote) => boolean };
    sink.written = [];
    sink.write = (m) => (sink.written.push(m), true);
    const sub = new QuoteSubscription({ request: parseStreamRequest({ pairs: [{ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1' }], updateIntervalMs: 60_000 }), sink, engine: http.engine });
    try {
      sub.start();
      expect(sink.written[0]!.error).toMatchObject({ code: 'TP_ERR_UNAVAILABLE', grpcStatus: grpc.status.UNAVAILABLE });
    } finally {
      sub.close();
      await http.close();
    }
  });

  it('quotes a pair the cache does not hold through the RPC fallback, asynchronously (origin RPC)', async () => {
    const h = await harness({ loader: true, fill: false });
    for (const view of chain.pools()) h.http.engine.directory.add({ address: view.address, dex: view.dex, tokenA: view.pool.tokenA, tokenB: view.pool.tokenB });
    const s = open(h, { pairs: [{ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1000000' }], updateIntervalMs: 60_000 });
    const [q] = await eventually(() => (s.quotes.length > 0 ? s.quotes : undefined), 'the RPC quote');
    expect(q).toMatchObject({ origin: 'QUOTE_ORIGIN_RPC', source: 'QUOTE_SOURCE_LOCAL' });
    expect(q!.error).toBeFalsy();
    expect(BigInt(q!.outputAmount)).toBeGreaterThan(0n);
    expect(q!.route[0]!.poolAgeSeconds).toBe(0); // written back into the cache by the fallback
  });

  it.each([
    ['no pairs', 'pairs', { pairs: [] }],
    ['1,001 pairs', 'pairs', { pairs: Array.from({ length: 1001 }, (_, i) => ({ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: String(i + 1) })) }],
    ['an input mint that is not base58', 'pairs[0].input_mint', { pairs: [{ inputMint: 'not-a-mint', outputMint: USDC_MINT, amount: '1' }] }],
    ['an output mint that is not 32 bytes', 'pairs[1].output_mint', { pairs: [{ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1' }, { inputMint: WSOL_MINT, outputMint: '1111', amount: '1' }] }],
    ['a zero amount', 'pairs[0].amount', { pairs: [{ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '0' }] }],
    ['input mint equal to output mint', 'pairs[0].output_mint', { pairs: [{ inputMint: WSOL_MINT, outputMint: WSOL_MINT, amount: '1' }] }],
    ['slippage above 10,000 bps', 'slippage_bps', { pairs: [{ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1' }], slippageBps: 10_001 }],
    ['a swap mode the proto does not define', 'pairs[1].swap_mode', { pairs: [{ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1' }, { inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1', swapMode: 7 }] }],
    ['an exact-out pair with a zero amount', 'pairs[0].amount', { pairs: [{ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '0', swapMode: 'SWAP_MODE_EXACT_OUT' }] }],
  ])('refuses %s with INVALID_ARGUMENT naming %s', async (_what, field, request) => {
    const h = await harness();
    const s = open(h, request);
    const err = await eventually(() => s.error, 'the error');
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toContain(field);
    expect(s.quotes).toHaveLength(0);
    expect(h.server.activeStreams).toBe(0);
  });

  it('frees the subscription when the client cancels (active streams back to 0)', async () => {
    const h = await harness();
    const s = open(h, { pairs: [{ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1000000' }], updateIntervalMs: 60_000 });
    await eventually(() => (s.quotes.length > 0 ? true : undefined), 'a quote');
    expect(h.server.activeStreams).toBe(1);
    expect(await gaugeValue(h.metrics, 'quote_service_stream_active_streams')).toBe(1);
    s.call.cancel();
    await eventually(() => (h.server.activeStreams === 0 ? true : undefined), 'the stream released');
    expect(await gaugeValue(h.metrics, 'quote_service_stream_active_streams')).toBe(0);
    expect(await gaugeValue(h.metrics, 'quote_service_stream_quotes_sent_total')).toBe(1);
  });

  it('ends open streams with UNAVAILABLE on close(), and close() is idempotent', async () => {
    const h = await harness();
    const s = open(h, { pairs: [{ inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1000000' }], updateIntervalMs: 60_000 });
    await eventually(() => (s.quotes.length > 0 ? true : undefined), 'a quote');
    await Promise.all([h.server.close(), h.server.close()]);
    const err = await eventually(() => s.error, 'the stream ended');
    expect(err.code).toBe(grpc.status.UNAVAILABLE);
    expect(h.server.activeStreams).toBe(0);
  });
});

describe('parseStreamRequest', () => {
  const p = { inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1' };
  it('raises the update interval: 0 → 1,000 ms, below 10 → 10 ms', () => {
    expect(parseStreamRequest({ pairs: [p] }).intervalMs).toBe(1000);
    expect(parseStreamRequest({ pairs: [p], updateIntervalMs: 3 }).intervalMs).toBe(10);
    expect(parseStreamRequest({ pairs: [p], updateIntervalMs: 250 }).intervalMs).toBe(250);
  });

  it('refuses an amount above the u64 maximum', () => {
    expect(() => parseStreamRequest({ pairs: [{ ...p, amount: '18446744073709551616' }] })).toThrow(StreamRequestError);
    expect(parseStreamRequest({ pairs: [{ ...p, amount: '18446744073709551615' }] }).pairs[0]!.amount).toBe(2n ** 64n - 1n);
  });
});

/** A sink that reports backpressure from the first write on, until drained. */
class SlowSink extends EventEmitter {
  readonly written: UpstreamQuote[] = [];
  write(m: UpstreamQuote): boolean {
    this.written.push(m);
    return false;
  }
}

describe('QuoteSubscription backpressure', () => {
  it('holds only the latest quote per pair while write() returns false, and sends it on drain', async () => {
    const clock = new FakeClock();
    const cache = new PoolCache({ now: clock.now, stalenessThresholdMs: 30_000 });
    let slot = 100n;
    for (const view of chain.pools()) storePool(cache, view, slot++);
    const metrics = createQuoteMetrics();
    const http = quoteHttpServer({ cache, metrics, rateLimiter: false, hybridMode: false });
    const sink = new SlowSink();
    const amm = otherAmm();
    const request = parseStreamRequest({
      pairs: [
        { inputMint: WSOL_MINT, outputMint: USDC_MINT, amount: '1000000' },
        { inputMint: amm.pool.tokenA, outputMint: amm.pool.tokenB, amount: '1000000' },
      ],
      updateIntervalMs: 60_000,
    });
    const sub = new QuoteSubscription({ request, sink, engine: http.engine });
    try {
      sub.start();
      expect(sink.written).toHaveLength(1); // the first write said "full": the second pair is held
      storePool(cache, scaled(amm, 2n, 1n), 9_000n);
      sub.poolsChanged();
      storePool(cache, scaled(amm, 3n, 1n), 9_001n);
      sub.poolsChanged();
      expect(sink.written).toHaveLength(1);
      sink.emit('drain');
      expect(sink.written).toHaveLength(2);
      expect(sink.written[1]!.slot).toBe('9001');
      expect(await gaugeValue(metrics, 'quote_service_stream_quotes_superseded_total')).toBe(2);
    } finally {
      sub.close();
      await http.close();
    }
  });
});
