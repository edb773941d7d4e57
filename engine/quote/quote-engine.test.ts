import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PoolCache } from '../cache/index.js';
import { SwapMode } from '../dex/index.js';
import { ErrorCode } from '../errors.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { quoteFromCache } from './cache-quoter.js';
import { QuoteSource, quoteOfAnswer } from './quote-answer.js';
import { QuoteEngine, type QuoteEngineOptions, type QuoteResult } from './quote-engine.js';
import type { QuoteRequest } from './quote-request.js';
import { CountingLoader, FakeClock, manualSimulator, storePool } from './testing.js';

/**
 * The quote engine without a transport: a cache filled from a manual simulator under a fake clock,
 * and for the fallback the same simulator's real JSON-RPC.
 */

const sim = manualSimulator(5);
const chain = sim.chain;
let rpcUrl = '';
beforeAll(async () => {
  rpcUrl = (await sim.start()).rpc;
});
afterAll(async () => {
  await sim.close();
});

const UNKNOWN_MINT = 'So11111111111111111111111111111111111111113';

function request(inputMint: string, outputMint: string, amount: bigint, over: Partial<QuoteRequest> = {}): QuoteRequest {
  return { inputMint, outputMint, mode: SwapMode.ExactIn, amount, amountText: amount.toString(), maxStateAgeMs: undefined, slippageBps: 50, ...over };
}

function engineOn(options: Partial<QuoteEngineOptions> & { fill?: boolean } = {}): { engine: QuoteEngine; cache: PoolCache; clock: FakeClock } {
  const clock = new FakeClock();
  const cache = new PoolCache({ now: clock.now, stalenessThresholdMs: 30_000 });
  if (options.fill !== false) {
    let slot = 100n;
    for (const view of chain.pools()) storePool(cache, view, slot++);
  }
  return { engine: new QuoteEngine({ hybridMode: false, ...options, cache }), cache, clock };
}

function sync(result: QuoteResult | Promise<QuoteResult>): QuoteResult {
  if (result instanceof Promise) throw new Error('expected an answer at once');
  return result;
}

describe('QuoteEngine', () => {
  it('answers from the cache at once, as quoteFromCache does, and memoizes it', () => {
    const { engine, cache, clock } = engineOn();
    const amount = 1_000_000_000n;
    const first = sync(engine.quote(request(WSOL_MINT, USDC_MINT, amount)));
    if (!first.ok) throw new Error(first.message);
    const firstRoute = first.quote;
    const firstAge = first.stateAgeMs;
    clock.advance(40);
    const second = sync(engine.quote(request(WSOL_MINT, USDC_MINT, amount)));
    if (!second.ok) throw new Error(second.message);
    expect(second.quote).toEqual(firstRoute); // built again from the memo's entry
    expect(second.stateAgeMs).toBe(firstAge + 40);
    expect(second).toBe(first); // the engine's one cache answer, rewritten by each quote
    expect(second.source).toBe(QuoteSource.Cache);
    expect(second.body).toBeDefined();
    expect(quoteOfAnswer(second)).toEqual(quoteFromCache(cache, WSOL_MINT, USDC_MINT, amount));
    expect(engine.memo).toMatchObject({ hits: 1, misses: 1 });
  });

  it('returns failures as values, not exceptions, without counting a request-caused one against the breaker', () => {
    const { engine } = engineOn();
    const unknown = sync(engine.quote(request(UNKNOWN_MINT, USDC_MINT, 5n)));
    expect(unknown).toEqual({ ok: false, code: ErrorCode.UnknownMint, message: `unknown token ${UNKNOWN_MINT}`, fallback: false, context: { mint: UNKNOWN_MINT } });
    expect(unknown).not.toBeInstanceOf(Error);
    const mints = [...new Set(chain.pools().flatMap((p) => [p.pool.tokenA, p.pool.tokenB]))];
    const traded = new Set(chain.pools().map((p) => [p.pool.tokenA, p.pool.tokenB].sort().join(':')));
    const [a, b] = mints.flatMap((x) => mints.filter((y) => y !== x && !traded.has([x, y].sort().join(':'))).map((y) => [x, y]))[0]!;
    // A pair without a pool of its own (two-hop routes off: through SOL or USDC it may trade).
    const none = sync(engine.quote(request(a!, b!, 1_000n, { routeFilter: { dexes: undefined, excludeDexes: undefined, onlyDirectRoutes: true } })));
    expect(none).toMatchObject({ ok: false, code: ErrorCode.NoPoolsInCache, message: 'no pools found in cache', fallback: false });
    expect(engine.breaker.state).toBe('closed');
  });

  it('runs the RPC fallback when the cache fails and one exists; with allowFallback false it only flags the failure', async () => {
    const { engine, clock } = engineOn({ hybridMode: true, loader: new CountingLoader(rpcUrl) });
    clock.advance(31_000); // every pool stale
    const req = request(WSOL_MINT, USDC_MINT, 1_000_000n);
    const flagged = sync(engine.quote(req, false));
    expect(flagged).toMatchObject({ ok: false, code: ErrorCode.NoValidQuotes, fallback: true });
    const pending = engine.quote(req);
    expect(pending).toBeInstanceOf(Promise);
    expect(engine.inflightFallbacks).toBe(1);
    const answer = await pending;
    expect(answer).toMatchObject({ ok: true, source: QuoteSource.Rpc, stateAgeMs: 0, body: undefined });
    expect(engine.inflightFallbacks).toBe(0);
  });

  it('answers exact out from the cache and from RPC alike, each answer with the bound of its own slippage', async () => {
    const { engine, clock } = engineOn({ hybridMode: true, loader: new CountingLoader(rpcUrl) });
    const amount = 250_000_000n; // USDC bought
    const answered = sync(engine.quote(request(WSOL_MINT, USDC_MINT, amount, { mode: SwapMode.ExactOut, slippageBps: 200 })));
    if (!answered.ok) throw new Error(answered.message);
    const fromCache = { ...answered }; // the engine rewrites its cache answer on the next quote
    expect(fromCache.quote).toMatchObject({ mode: SwapMode.ExactOut, outputAmount: amount });
    const paid = fromCache.quote.inputAmount;
    expect(fromCache.slippage).toMatchObject({ bps: 200, minOutputAmount: amount, maxInputAmount: (paid * 10_200n + 9_999n) / 10_000n });
    // The same memo entry with another tolerance: another bound, the same route.
    const again = sync(engine.quote(request(WSOL_MINT, USDC_MINT, amount, { mode: SwapMode.ExactOut, slippageBps: 0 })));
    expect(again.ok && again.quote).toEqual(fromCache.quote);
    expect(again.ok && again.slippage.maxInputAmount).toBe(paid);
    // An exact-in request of the same amount is another quote.
    const exactIn = sync(engine.quote(request(WSOL_MINT, USDC_MINT, amount)));
    expect(exactIn.ok && exactIn.quote.inputAmount).toBe(amount);
    expect(engine.memo).toMatchObject({ hits: 1, misses: 2 });

    clock.advance(31_000); // stale: the RPC fallback reads the same states
    const fromRpc = await engine.quote(request(WSOL_MINT, USDC_MINT, amount, { mode: SwapMode.ExactOut, slippageBps: 200 }));
    if (!fromRpc.ok) throw new Error(fromRpc.message);
    expect(fromRpc.source).toBe(QuoteSource.Rpc);
    expect(fromRpc.quote).toMatchObject({ mode: SwapMode.ExactOut, inputAmount: paid, outputAmount: amount, hops: [expect.objectContaining({ pool: fromCache.quote.hops[0]!.pool })] });
    expect(fromRpc.slippage).toEqual(fromCache.slippage);
  });

  it('moves stateVersion only when a pool of the pair changes, negative for an unknown mint', () => {
    const { engine, cache } = engineOn();
    const req = request(WSOL_MINT, USDC_MINT, 1n);
    const before = engine.stateVersion(req);
    expect(before).toBeGreaterThan(0);
    expect(engine.stateVersion(req)).toBe(before);
    const view = chain.poolsForPair(WSOL_MINT, USDC_MINT)[0]!;
    storePool(cache, view, 10_000n);
    expect(engine.stateVersion(req)).toBeGreaterThan(before);
    expect(engine.stateVersion(request(UNKNOWN_MINT, USDC_MINT, 1n))).toBeLessThan(0);
  });

  it('answers TP_ERR_UNAVAILABLE once closed', async () => {
    const { engine } = engineOn();
    await engine.close();
    expect(sync(engine.quote(request(WSOL_MINT, USDC_MINT, 1_000n)))).toMatchObject({ ok: false, code: ErrorCode.Unavailable, message: 'the quote service is shutting down' });
    expect(engine.health().status).toBe('draining');
  });
});
