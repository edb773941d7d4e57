/**
 * The quote service's error codes: the subset of the engine's `ErrorCode` that its HTTP server
 * maps to statuses. They travel in `TpError.code` and in the error body `{"error":{"code","message"}}`.
 */
import { ErrorCode, TpError, isTpError, type TpErrorOptions } from '../errors.js';

export const QuoteErrorCode = {
  BadParameter: ErrorCode.BadParameter,
  NoPoolsInCache: ErrorCode.NoPoolsInCache,
  NoValidQuotes: ErrorCode.NoValidQuotes,
  CircuitOpen: ErrorCode.CircuitOpen,
  RateLimited: ErrorCode.RateLimited,
  UnknownMint: ErrorCode.UnknownMint,
  NoPoolForPair: ErrorCode.NoPoolForPair,
  RpcFallbackFailed: ErrorCode.RpcFallbackFailed,
  Deadline: ErrorCode.Deadline,
  Unavailable: ErrorCode.Unavailable,
  NotFound: ErrorCode.NotFound,
  Internal: ErrorCode.Internal,
} as const;
export type QuoteErrorCode = (typeof QuoteErrorCode)[keyof typeof QuoteErrorCode];

export function quoteError<C extends QuoteErrorCode>(code: C, message: string, options: TpErrorOptions<C> = {}): TpError<C> {
  return new TpError(code, message, options);
}

/** True when `err` is a TpError with the quote code `code`. */
export function isQuoteError(err: unknown, code: QuoteErrorCode): err is TpError {
  return isTpError(err, code);
}
