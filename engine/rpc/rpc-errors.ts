import { ErrorCode, TpError, isTpError, type RpcFailedContext, type RpcFailureKind } from '../errors.js';

/**
 * Failures of the chain's JSON-RPC clients, as TpErrors: ErrorCode.RpcFailed, whose context's
 * `kind` says what failed (for `rpc` the node's JSON-RPC error code and message are kept as sent),
 * and ErrorCode.FetchQueueFull for a fetch refused by a full queue.
 */

export type { RpcFailureKind };

/** A failed JSON-RPC call. */
export type RpcFailure = TpError<typeof ErrorCode.RpcFailed>;

export interface RpcFailureDetails {
  endpoint: string;
  method: string;
  /** JSON-RPC error code (kind `rpc`). */
  rpcCode?: number | undefined;
  /** The JSON-RPC error's `data` (kind `rpc`). */
  data?: unknown;
  /** HTTP status (kind `http`). */
  httpStatus?: number | undefined;
  cause?: unknown;
}

/** An RpcFailure of `kind` with `message`. */
export function rpcFailure(kind: RpcFailureKind, message: string, details: RpcFailureDetails): RpcFailure {
  const { cause, ...fields } = details;
  const context: RpcFailedContext = { kind, ...fields };
  return new TpError(ErrorCode.RpcFailed, message, { cause, context });
}

export function isRpcFailure(err: unknown, kind?: RpcFailureKind): err is RpcFailure {
  return isTpError(err, ErrorCode.RpcFailed) && (kind === undefined || err.context.kind === kind);
}

/** The account fetcher's queue is full: the request was refused, not queued. */
export type FetchQueueFull = TpError<typeof ErrorCode.FetchQueueFull>;

export function fetchQueueFull(limit: number): FetchQueueFull {
  return new TpError(ErrorCode.FetchQueueFull, `account fetch queue full (${limit} addresses waiting)`, { context: { limit } });
}
