import { httpStatusOf as httpStatusOfCode } from '../error-status.js';
import { ErrorCode } from '../errors.js';

/**
 * The JSON-RPC errors the proxy answers itself (leaf module). The standard codes of JSON-RPC 2.0
 * for what is wrong with the request, and three of the proxy's own for what went wrong upstream,
 * in the implementation-defined server range (-32000 to -32099) clear of Solana's own codes
 * (-32001 to -32019). Each of the three carries `data.tidepoolCode`, its TP_ERR_* code, and tells
 * the caller whether the call may have taken effect:
 *
 * | code   | tidepoolCode                          | the call...                                   | HTTP (single call) |
 * |--------|---------------------------------------|-----------------------------------------------|--------------------|
 * | -32700 |                                       | body is not JSON (or not UTF-8)               | 200                |
 * | -32600 |                                       | not a JSON-RPC 2.0 call, an empty batch, or a body over the limit | 200 (413 over the limit) |
 * | -32090 | TP_ERR_RPC_PROXY_UNAVAILABLE          | reached no endpoint: send it again            | 503                |
 * | -32091 | TP_ERR_RPC_PROXY_UPSTREAM_FAILED      | a read no endpoint answered: send it again    | 502, 504 on timeout |
 * | -32092 | TP_ERR_RPC_PROXY_WRITE_OUTCOME_UNKNOWN | a write one endpoint took and failed to answer: may have landed; check before sending again | 502, 504 on timeout |
 * | -32093 | TP_ERR_RATE_LIMITED                   | over the client's rate limit, not sent: send it again after `retryAfter` s | 429 with Retry-After |
 *
 * Inside a batch every answer is per call and the HTTP status is 200.
 */
export const JsonRpcErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  Internal: -32603,
  Unavailable: -32090,
  UpstreamFailed: -32091,
  WriteOutcomeUnknown: -32092,
  RateLimited: -32093,
} as const;
export type JsonRpcErrorCode = (typeof JsonRpcErrorCode)[keyof typeof JsonRpcErrorCode];

/** The TP_ERR_* code of each of the proxy's own JSON-RPC codes. */
export const PROXY_ERROR_CODES: Readonly<Partial<Record<JsonRpcErrorCode, ErrorCode>>> = {
  [JsonRpcErrorCode.Unavailable]: ErrorCode.RpcProxyUnavailable,
  [JsonRpcErrorCode.UpstreamFailed]: ErrorCode.RpcProxyUpstreamFailed,
  [JsonRpcErrorCode.WriteOutcomeUnknown]: ErrorCode.RpcProxyWriteOutcomeUnknown,
  [JsonRpcErrorCode.RateLimited]: ErrorCode.RateLimited,
};

/** What a proxy error's `data` holds besides its tidepoolCode. */
export interface ProxyErrorData {
  /** The endpoint of the last attempt (its name, never its URL). */
  endpoint?: string;
  /** Attempts made. */
  attempts?: number;
  /** What went wrong, e.g. `timeout after 10000 ms`. */
  reason?: string;
  /** Whole seconds after which the client's rate limit takes a call again. */
  retryAfter?: number;
}

const NULL_ID = Buffer.from('null');
const CLOSE = Buffer.from('}');

/** A JSON-RPC error reply with the raw id bytes of the call (null when it has none). */
export function errorReply(code: JsonRpcErrorCode, message: string, id: Uint8Array | null, data?: ProxyErrorData): Buffer {
  const tidepoolCode = PROXY_ERROR_CODES[code];
  const dataText = tidepoolCode === undefined ? '' : `,"data":${JSON.stringify({ tidepoolCode, ...data })}`;
  return Buffer.concat([
    Buffer.from(`{"jsonrpc":"2.0","error":{"code":${code},"message":${JSON.stringify(message)}${dataText}},"id":`),
    id ?? NULL_ID,
    CLOSE,
  ]);
}

export const PARSE_ERROR_REPLY = errorReply(JsonRpcErrorCode.ParseError, 'Parse error', null);
export const EMPTY_BATCH_REPLY = errorReply(JsonRpcErrorCode.InvalidRequest, 'Invalid request: empty batch', null);

/**
 * HTTP status of a single call's proxy error (a batch answers 200): its TP_ERR_* code's, from the
 * engine's code table (engine/error-status.ts), or TP_ERR_DEADLINE's (504) when an upstream call
 * timed out; 200 for the standard JSON-RPC errors, which JSON-RPC over HTTP answers in the body.
 */
export function httpStatusOf(code: JsonRpcErrorCode, timedOut: boolean): number {
  const tidepoolCode = PROXY_ERROR_CODES[code];
  if (tidepoolCode === undefined) return 200;
  if (timedOut && tidepoolCode !== ErrorCode.RpcProxyUnavailable) return httpStatusOfCode(ErrorCode.Deadline);
  return httpStatusOfCode(tidepoolCode);
}
