/**
 * Why a quote could not be given, as a value. A failure the client caused (a bad parameter, an
 * unknown token, no pool for the pair) is an ordinary answer, not an exception: building an Error
 * captures a stack trace (microseconds), which a hostile client could make us pay on every request.
 * Failures with a fixed message are preallocated; the others are one small object.
 *
 * Transports map `code` to their status with engine/error-status.ts.
 */
import { ErrorCode, TpError, type ErrorContextOf } from '../errors.js';

export interface QuoteFailure<C extends ErrorCode = ErrorCode> {
  readonly ok: false;
  readonly code: C;
  /** For people; the transports send it as it is. Never secret. */
  readonly message: string;
  /**
   * True when the engine's RPC fallback may take this failure over (a cache-path failure while a
   * fallback exists): only a caller that asked the engine not to start a fallback sees it set.
   */
  readonly fallback: boolean;
  /** Details for logs (the parameter, the mint, candidate counts); not sent to clients. */
  readonly context: Readonly<ErrorContextOf<C>> | undefined;
}

/** The failure of `code`, with its code's context (errors.ts ErrorContexts). */
export function quoteFailure<C extends ErrorCode>(code: C, message: string, context?: ErrorContextOf<C>): QuoteFailure<C> {
  return { ok: false, code, message, fallback: false, context };
}

/** A failure with the `fallback` flag set. */
export function withFallback(failure: QuoteFailure): QuoteFailure {
  return failure.fallback ? failure : { ...failure, fallback: true };
}

/** A parameter missing or malformed: TP_ERR_BAD_PARAMETER naming it. */
export function badParameter(parameter: string, message: string): QuoteFailure {
  return quoteFailure(ErrorCode.BadParameter, message, { parameter });
}

/** True for a QuoteFailure (anything else a parser or the engine returns has no `ok: false`). */
export function isQuoteFailure(value: unknown): value is QuoteFailure {
  return typeof value === 'object' && value !== null && (value as { ok?: unknown }).ok === false;
}

/**
 * What a caller gets for an unexpected exception (a bug, a pool the math cannot read): nothing of its
 * text, which may hold what clients must not see. The engine logs the exception itself.
 */
export const INTERNAL_FAILURE: QuoteFailure = Object.freeze(quoteFailure(ErrorCode.Internal, 'internal error'));

/** The TpError of a failure, for callers that throw (tools, tests; never the quote path). */
export function errorOfFailure(failure: QuoteFailure): TpError {
  return new TpError(failure.code, failure.message, failure.context === undefined ? {} : { context: { ...failure.context } });
}
