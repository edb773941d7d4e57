import { STATUS_CODES } from 'node:http';

import { ErrorCode, TpError, isTpError } from '../errors.js';

/**
 * Errors of the swap API (quote and swap), in the real swap API's shape: HTTP 400 (or the injected status) with
 * `{"error": "<message>", "errorCode": "<CODE>"}`. The codes are the real API's where it has one
 * (docs/wire-formats.md §7 and its public error list); the injected-fault codes are ours.
 */

export const QuoteErrorCode = {
  /** A query parameter is missing or cannot be parsed, or is out of range. */
  InvalidRequest: 'INVALID_REQUEST',
  /** inputMint equals outputMint. */
  CircularArbitrageIsDisabled: 'CIRCULAR_ARBITRAGE_IS_DISABLED',
  /** A well-formed mint the market does not trade. */
  TokenNotTradable: 'TOKEN_NOT_TRADABLE',
  /** No route (every candidate refused, filtered out, or a zero amount). */
  CouldNotFindAnyRoute: 'COULD_NOT_FIND_ANY_ROUTE',
  /** ExactOut: the slippage threshold does not fit in a u64. */
  CannotComputeOtherAmountThreshold: 'CANNOT_COMPUTE_OTHER_AMOUNT_THRESHOLD',
  /** /swap: the quote is older than the swap API takes (ours: the message names its age). */
  QuoteExpired: 'QUOTE_EXPIRED',
  /** /swap: on the current state the route no longer meets the quote's threshold (its slippage). */
  SlippageToleranceExceeded: 'SLIPPAGE_TOLERANCE_EXCEEDED',
  /** /swap: a pool of the route could not be read (503; ours). */
  PoolUnavailable: 'POOL_UNAVAILABLE',
  /** Injected 429 (faults.quoteApi.failStatus). Not verified against the real API. */
  RateLimited: 'RATE_LIMITED',
  /** A bug (500). Other injected statuses carry their status text as a code (SERVICE_UNAVAILABLE). */
  InternalServerError: 'INTERNAL_SERVER_ERROR',
} as const;
export type QuoteErrorCode = (typeof QuoteErrorCode)[keyof typeof QuoteErrorCode];

export interface QuoteErrorBody {
  error: string;
  errorCode: string;
}

/**
 * A refusal of /quote or /swap: a TpError (ErrorCode.SwapApiRefused) whose context holds the real
 * API's code and the HTTP status. Thrown by parsing and routing.
 */
export type QuoteApiError = TpError<typeof ErrorCode.SwapApiRefused>;

/** A refusal with `errorCode` (a QuoteErrorCode, or an injected status's text as a code), answered with `status`. */
export function quoteApiError(errorCode: QuoteErrorCode | (string & {}), message: string, status = 400): QuoteApiError {
  return new TpError(ErrorCode.SwapApiRefused, message, { context: { errorCode, status } });
}

export function isQuoteApiError(err: unknown): err is QuoteApiError {
  return isTpError(err, ErrorCode.SwapApiRefused);
}

/** The body the HTTP answer carries for `err`. */
export function quoteErrorBody(err: QuoteApiError): QuoteErrorBody {
  return { error: err.message, errorCode: err.context.errorCode };
}

/** `Query parameter <name> cannot be parsed: <reason>`, the real API's parse-error message. */
export function unparsable(name: string, reason: string): QuoteApiError {
  return quoteApiError(QuoteErrorCode.InvalidRequest, `Query parameter ${name} cannot be parsed: ${reason}`);
}

/**
 * The error an injected failure answers with: 429 is `RATE_LIMITED`, any other status its status
 * text as a code (503: `SERVICE_UNAVAILABLE`).
 */
export function injectedFailure(status: number): QuoteApiError {
  if (status === 429) return quoteApiError(QuoteErrorCode.RateLimited, 'Rate limit exceeded', 429);
  const text = STATUS_CODES[status] ?? 'Error';
  const code = text.toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_|_$/g, '');
  return quoteApiError(code, `${text} (injected)`, status);
}
