import { describe, expect, it } from 'vitest';

import { SwapMode } from '../dex/index.js';
import { QuoteSource, type QuoteAnswer, type RouteQuote } from './quote-answer.js';
import type { QuoteRequest } from './quote-request.js';
import { decodeSharedQuote, encodeSharedQuote, isSharedQuoteRequest } from './shared-quote-cache.js';
import { slippageOf } from './slippage.js';

const A = 'So11111111111111111111111111111111111111112';
const B = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const C = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB';
const U64_MAX = (1n << 64n) - 1n;

/** A two-hop route with u64 amounts past 2^53 (exactness is the point). */
const route: RouteQuote = {
  mode: SwapMode.ExactIn,
  inputMint: A,
  outputMint: C,
  inputAmount: U64_MAX - 1n,
  outputAmount: 18_000_000_000_000_000_001n,
  priceImpact: 0.0125,
  slot: 300_000_001n,
  hops: [
    { pool: 'P1', dex: 'dexa_amm', inputMint: A, outputMint: B, inAmount: U64_MAX - 1n, outAmount: 9_007_199_254_740_993n, fee: 3n, feeMint: A, slot: 300_000_001n },
    { pool: 'P2', dex: 'dexc_whirlpool', inputMint: B, outputMint: C, inAmount: 9_007_199_254_740_993n, outAmount: 18_000_000_000_000_000_001n, fee: 5n, feeMint: C, slot: 300_000_007n },
  ],
};
const answer: QuoteAnswer = {
  ok: true,
  quote: route,
  source: QuoteSource.Cache,
  stateAgeMs: 200,
  contextSlot: 300_000_010n,
  slippage: slippageOf(SwapMode.ExactIn, route.inputAmount, route.outputAmount, 50),
  body: undefined,
};

function request(over: Partial<QuoteRequest> = {}): QuoteRequest {
  return { inputMint: A, outputMint: C, mode: SwapMode.ExactIn, amount: U64_MAX - 1n, amountText: (U64_MAX - 1n).toString(), maxStateAgeMs: undefined, slippageBps: 100, ...over };
}

describe('shared quote encoding', () => {
  it('round-trips a route exactly: amounts, hops, slots; age counts the time since; the slippage is the reader’s', () => {
    const text = encodeSharedQuote(answer, 1_000_000);
    expect(JSON.parse(text)).toMatchObject({ inputAmount: (U64_MAX - 1n).toString(), source: 'cache', cachedAt: 1_000_000, stateAgeMs: 200 });
    const back = decodeSharedQuote(text, request(), 1_000_300, 30_000);
    expect(back).not.toBeNull();
    expect(back!.quote).toEqual(route);
    expect(back).toMatchObject({ source: 'shared', stateAgeMs: 500, contextSlot: 300_000_010n });
    expect(back!.slippage).toEqual(slippageOf(SwapMode.ExactIn, route.inputAmount, route.outputAmount, 100));
  });

  it('refuses a stored quote older than the request accepts', () => {
    const text = encodeSharedQuote(answer, 1_000_000);
    expect(decodeSharedQuote(text, request(), 1_000_800, 1_000)).not.toBeNull();
    expect(decodeSharedQuote(text, request(), 1_000_801, 1_000)).toBeNull();
  });

  it('refuses values that are not this request’s quote, or not a quote at all', () => {
    const text = encodeSharedQuote(answer, 1_000_000);
    expect(decodeSharedQuote(text, request({ amount: 5n, amountText: '5' }), 1_000_000, 30_000)).toBeNull();
    expect(decodeSharedQuote(text, request({ outputMint: B }), 1_000_000, 30_000)).toBeNull();
    const v = JSON.parse(text) as Record<string, unknown>;
    const bad = [
      'not json',
      'null',
      JSON.stringify({ ...v, swapMode: 'ExactOut' }),
      JSON.stringify({ ...v, outputAmount: '18446744073709551616' }),
      JSON.stringify({ ...v, outputAmount: 12 }),
      JSON.stringify({ ...v, cachedAt: 'x' }),
      JSON.stringify({ ...v, route: [] }),
      JSON.stringify({ ...v, route: [{ pool: 'P1' }] }),
    ];
    for (const b of bad) expect(decodeSharedQuote(b, request(), 1_000_000, 30_000)).toBeNull();
  });

  it('shares exact-in quotes without a route filter only', () => {
    expect(isSharedQuoteRequest(request())).toBe(true);
    expect(isSharedQuoteRequest(request({ mode: SwapMode.ExactOut }))).toBe(false);
    expect(isSharedQuoteRequest(request({ routeFilter: { dexes: new Set(['dexa_amm']), excludeDexes: undefined, onlyDirectRoutes: false } }))).toBe(false);
    expect(isSharedQuoteRequest(request({ routeFilter: { dexes: undefined, excludeDexes: undefined, onlyDirectRoutes: false } }))).toBe(true);
  });
});
