/**
 * A quote engine answer as a quote.proto `Quote` of the local quote service: what the quote stream
 * pushes (quote-subscription.ts) and the unary GetQuote / GetQuotes answer (quote-unary-calls.ts).
 */
import { QuoteSource, type QuoteAnswer, type QuoteEngine, type UpstreamQuote } from '../quote/index.js';
import { LOCAL_PROVIDER, wireSwapModeOf } from './quote-stream-request.js';


/** The origin of a quote answered from the pool cache (quote.proto `QuoteOrigin`). */
export const CACHE_ORIGIN = 'QUOTE_ORIGIN_CACHE';

function clampU32(ms: number): number {
  return Math.min(0xffff_ffff, Math.max(0, Math.floor(ms)));
}

/**
 * The Quote of answer `a` for the pair `pairId`, quoted at `nowMs` (Unix ms). Each hop carries its
 * pool's age where the cache knows it (an RPC answer's pool was written back into the cache).
 */
export function answerQuoteMessage(pairId: string, a: QuoteAnswer, engine: QuoteEngine, nowMs: number): UpstreamQuote {
  const q = a.quote;
  return {
    pairId,
    inputMint: q.inputMint,
    outputMint: q.outputMint,
    swapMode: wireSwapModeOf(q.mode),
    inputAmount: q.inputAmount.toString(),
    outputAmount: q.outputAmount.toString(),
    minOutputAmount: a.slippage.minOutputText,
    maxInputAmount: a.slippage.maxInputText,
    slippageBps: a.slippage.bps,
    priceImpact: q.priceImpact,
    route: q.hops.map((h) => {
      const age = engine.poolAgeSeconds(h.pool);
      return {
        pool: h.pool,
        dex: h.dex,
        inputMint: h.inputMint,
        outputMint: h.outputMint,
        inAmount: h.inAmount.toString(),
        outAmount: h.outAmount.toString(),
        fee: h.fee.toString(),
        slot: h.slot.toString(),
        ...(age === undefined ? {} : { poolAgeSeconds: age }),
      };
    }),
    slot: q.slot.toString(),
    contextSlot: a.contextSlot.toString(),
    stateAgeMs: clampU32(a.stateAgeMs),
    source: 'QUOTE_SOURCE_LOCAL',
    origin: a.source === QuoteSource.Cache ? CACHE_ORIGIN : a.source === QuoteSource.Rpc ? 'QUOTE_ORIGIN_RPC' : 'QUOTE_ORIGIN_EXTERNAL_API',
    provider: LOCAL_PROVIDER,
    quotedAtUnixMs: String(nowMs),
  };
}

/**
 * `last` (an answer pushed earlier) said again at `nowMs` with the state `stateAgeMs` old: the same
 * quote of the same pool states, with its times moved on. What a stream pushes at an interval for a
 * pair whose state version has not moved since (quote-subscription.ts), without quoting it again.
 */
export function reissuedQuoteMessage(last: UpstreamQuote, engine: QuoteEngine, nowMs: number, stateAgeMs: number): UpstreamQuote {
  return {
    ...last,
    route: last.route.map((h) => {
      const age = engine.poolAgeSeconds(h.pool);
      return age === undefined || age === h.poolAgeSeconds ? h : { ...h, poolAgeSeconds: age };
    }),
    stateAgeMs: clampU32(stateAgeMs),
    quotedAtUnixMs: String(nowMs),
  };
}
