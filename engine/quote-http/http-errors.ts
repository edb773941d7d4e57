/**
 * Errors as HTTP on the quote port: the status from the one code table (engine/error-status.ts),
 * as the status line uWS writes, and the body `{"error":{"code","message"}}`.
 */
import { STATUS_CODES } from 'node:http';

import { clientErrorOf } from '../error-status.js';
import { ErrorCode, TpError } from '../errors.js';
import type { QuoteFailure } from '../quote/index.js';

/** The uWS status line of an HTTP status ("404 Not Found"); built once per status. */
const lines = new Map<number, string>();
export function statusLine(status: number): string {
  let line = lines.get(status);
  if (line === undefined) {
    line = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`;
    lines.set(status, line);
  }
  return line;
}

/** Status lines the quote port writes without an error code behind them. */
export const STATUS = {
  200: statusLine(200),
  400: statusLine(400),
  404: statusLine(404),
  500: statusLine(500),
  503: statusLine(503),
} as const;

export interface HttpError {
  /** The status line. */
  status: string;
  code: string;
  message: string;
  headers?: [string, string][];
}

/** The HTTP error of `code` and `message`, as the code table says a client sees it. */
export function httpError(code: string, message: string, headers?: [string, string][]): HttpError {
  const e = clientErrorOf(code, message);
  return headers === undefined ? { status: statusLine(e.http), code: e.code, message: e.message } : { status: statusLine(e.http), code: e.code, message: e.message, headers };
}

/** The HTTP answer of a quote failure. */
export function httpErrorOfFailure(failure: QuoteFailure): HttpError {
  return httpError(failure.code, failure.message);
}

/** The HTTP answer of a thrown error; anything but a TpError is a 500 that says nothing more. */
export function httpErrorOf(err: unknown): HttpError {
  return err instanceof TpError ? httpError(err.code, err.message) : httpError(ErrorCode.Internal, 'internal error');
}

/** The JSON error body (engine/common). */
export { errorBody } from '../common/index.js';
