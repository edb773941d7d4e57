/**
 * The one place where quote-service error codes become HTTP statuses (ARCHITECTURE.md §3): 400 bad
 * parameters, 404 unknown token or no pool for the pair, 429 rate limited, 503 when neither cache
 * nor RPC can answer, 504 on deadline. Bodies are `{"error":{"code","message"}}`.
 */
import { TpError } from '../errors.js';
import { QuoteErrorCode } from './errors.js';
import type { QuoteFailure } from './quote-failure.js';

/** uWS status lines. */
export const STATUS = {
  200: '200 OK',
  400: '400 Bad Request',
  404: '404 Not Found',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
  504: '504 Gateway Timeout',
} as const;
export type StatusLine = (typeof STATUS)[keyof typeof STATUS];

export interface HttpError {
  status: StatusLine;
  code: string;
  message: string;
  headers?: [string, string][];
}

/** The HTTP answer of a quote failure; a code without a status here is a 500 that says nothing more. */
export function httpErrorOfFailure(failure: QuoteFailure): HttpError {
  return statusOf(failure.code, failure.message);
}

/** The HTTP answer of a thrown error; anything unexpected is a 500 that says nothing more. */
export function httpErrorOf(err: unknown): HttpError {
  return err instanceof TpError ? statusOf(err.code, err.message) : statusOf(QuoteErrorCode.Internal, '');
}

function statusOf(code: string, message: string): HttpError {
  {
    switch (code) {
      case QuoteErrorCode.BadParameter:
        return { status: STATUS[400], code, message };
      case QuoteErrorCode.UnknownMint:
      case QuoteErrorCode.NoPoolsInCache:
      case QuoteErrorCode.NoPoolForPair:
      case QuoteErrorCode.NotFound:
        return { status: STATUS[404], code, message };
      case QuoteErrorCode.NoValidQuotes:
      case QuoteErrorCode.CircuitOpen:
      case QuoteErrorCode.RpcFallbackFailed:
      case QuoteErrorCode.Unavailable:
        return { status: STATUS[503], code, message };
      case QuoteErrorCode.Deadline:
        return { status: STATUS[504], code, message };
      default:
        break;
    }
  }
  return { status: STATUS[500], code: QuoteErrorCode.Internal, message: 'internal error' };
}

/** The JSON error body. */
export function errorBody(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}
