/**
 * Error codes of the quote service (engine/quote), beside the engine-wide `ErrorCode`. They travel
 * in `TpError.code` and in the HTTP error body `{"error":{"code","message"}}`.
 */
import { ErrorCode, TpError, type TpErrorOptions } from '../errors.js';

export const QuoteErrorCode = {
  /** A query parameter is missing or malformed (HTTP 400); `context.parameter` names it. */
  BadParameter: 'TP_ERR_BAD_PARAMETER',
  /** Spec 02: no pools known for the pair (HTTP 404 without fallback). */
  NoPoolsInCache: 'TP_ERR_NO_POOLS_IN_CACHE',
  /** Spec 02: every candidate pool missing, stale, older than maxStateAgeMs or refused by the swap math (HTTP 503 without fallback). */
  NoValidQuotes: 'TP_ERR_NO_VALID_QUOTES',
  /** The circuit breaker is open: the cache path fails at once (HTTP 503 without fallback). */
  CircuitOpen: 'TP_ERR_CIRCUIT_OPEN',
  /** Too many requests from one client (HTTP 429). */
  RateLimited: 'TP_ERR_RATE_LIMITED',
  /** Unknown route (HTTP 404). */
  NotFound: 'TP_ERR_NOT_FOUND',
  /** Unexpected failure (HTTP 500). */
  Internal: 'TP_ERR_INTERNAL',
} as const;
export type QuoteErrorCode = (typeof QuoteErrorCode)[keyof typeof QuoteErrorCode];

/** A TpError carrying one of the quote service's codes (TpError's code type is the engine's union). */
export function quoteError(code: QuoteErrorCode, message: string, options: TpErrorOptions = {}): TpError {
  return new TpError(code as unknown as ErrorCode, message, options);
}

/** True when `err` is a TpError with the quote code `code`. */
export function isQuoteError(err: unknown, code: QuoteErrorCode): err is TpError {
  return err instanceof TpError && (err.code as string) === code;
}
