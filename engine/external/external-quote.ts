/**
 * The provider's answer as a `tidepool.v1.Quote` (quote.proto) on the wire (camelCase, u64 as
 * decimal strings, enums by name), and the error quotes of the external service.
 *
 * A poll result is per pair, shared by every stream watching the pair; what depends on the stream
 * (slippage_bps, min_output_amount) and on the moment of sending (provider_uptime) is added by
 * `toStreamQuote`.
 */
import { grpcStatusOf } from '../error-status.js';

import { ErrorCode } from '../errors.js';
import type { StreamPair } from '../quote-grpc/index.js';
import { WireSwapMode, minOutputAmount, type UpstreamQuote, type WireQuoteError } from '../quote/index.js';
import { hopFeeInInputUnits, type ProviderQuote } from './provider-response.js';

/** One poll's result for a pair: the stream-independent part of the Quote. */
export interface PolledQuote {
  /** Everything but slippageBps, minOutputAmount and providerUptime. */
  readonly base: Omit<UpstreamQuote, 'slippageBps' | 'minOutputAmount' | 'providerUptime'>;
  /** output_amount as bigint (0n for an error quote). */
  readonly outputAmount: bigint;
}

/**
 * A successful poll as a Quote. `slot` and every hop's `slot` are the provider's `contextSlot` (its
 * whole answer is computed at that slot; 0 when it does not say); `stateAgeMs` is 0 (the provider
 * reports no state age: freshness is `quotedAtUnixMs`, when the answer arrived).
 */
export function polledQuote(pair: StreamPair, quote: ProviderQuote, provider: string, receivedAtUnixMs: number): PolledQuote {
  const slot = quote.contextSlot.toString();
  return {
    outputAmount: quote.outAmount,
    base: {
      pairId: pair.pairId,
      inputMint: pair.inputMint,
      outputMint: pair.outputMint,
      inputAmount: pair.amountText,
      outputAmount: quote.outAmount.toString(),
      swapMode: WireSwapMode.ExactIn,
      maxInputAmount: pair.amountText,
      priceImpact: quote.priceImpact,
      route: quote.hops.map((h) => ({
        pool: h.ammKey,
        dex: h.label,
        inputMint: h.inputMint,
        outputMint: h.outputMint,
        inAmount: h.inAmount.toString(),
        outAmount: h.outAmount.toString(),
        fee: hopFeeInInputUnits(h).toString(),
        slot,
      })),
      slot,
      contextSlot: slot,
      stateAgeMs: 0,
      source: 'QUOTE_SOURCE_EXTERNAL',
      origin: 'QUOTE_ORIGIN_EXTERNAL_API',
      provider,
      quotedAtUnixMs: String(receivedAtUnixMs),
    },
  };
}

/** A poll that gave no quote, as an error Quote (amounts zero, route empty). */
export function errorPolledQuote(pair: StreamPair, error: WireQuoteError, provider: string, atUnixMs: number): PolledQuote {
  return {
    outputAmount: 0n,
    base: {
      pairId: pair.pairId,
      inputMint: pair.inputMint,
      outputMint: pair.outputMint,
      inputAmount: pair.amountText,
      outputAmount: '0',
      swapMode: WireSwapMode.ExactIn,
      maxInputAmount: '0',
      priceImpact: 0,
      route: [],
      slot: '0',
      contextSlot: '0',
      stateAgeMs: 0,
      source: 'QUOTE_SOURCE_EXTERNAL',
      origin: 'QUOTE_ORIGIN_EXTERNAL_API',
      provider,
      quotedAtUnixMs: String(atUnixMs),
      error,
    },
  };
}

/** The Quote a stream sends: the poll result with the stream's slippage and the current uptime. */
export function toStreamQuote(polled: PolledQuote, slippageBps: number, uptime: number | undefined): UpstreamQuote {
  const m: UpstreamQuote = {
    ...polled.base,
    slippageBps,
    minOutputAmount: polled.base.error === undefined ? minOutputAmount(polled.outputAmount, slippageBps).toString() : '0',
  };
  if (uptime !== undefined) m.providerUptime = uptime;
  return m;
}

/** A QuoteError of `code`, its gRPC status from the engine's code table (engine/error-status.ts). */
function wireError(code: ErrorCode, message: string): WireQuoteError {
  return { code, grpcStatus: grpcStatusOf(code), message };
}

/** The error of each way a poll can fail (codes in engine/errors.ts, statuses from their table). */
export const ExternalError = {
  noRoute: (message: string): WireQuoteError => wireError(ErrorCode.ExternalNoRoute, message),
  rejected: (message: string): WireQuoteError => wireError(ErrorCode.ExternalRejected, message),
  rateLimited: (message: string): WireQuoteError => wireError(ErrorCode.RateLimited, message),
  serverError: (message: string): WireQuoteError => wireError(ErrorCode.ExternalServerError, message),
  timeout: (message: string): WireQuoteError => wireError(ErrorCode.Deadline, message),
  unreachable: (message: string): WireQuoteError => wireError(ErrorCode.ExternalUnreachable, message),
  malformed: (message: string): WireQuoteError => wireError(ErrorCode.ExternalMalformed, message),
  circuitOpen: (): WireQuoteError => wireError(ErrorCode.CircuitOpen, 'the provider circuit breaker is open'),
} as const;
