/**
 * Typed failures of the scanner's JSON-RPC client. `kind` says what failed; for `rpc` the node's
 * JSON-RPC error code and message are kept as sent.
 */

export type RpcFailureKind =
  /** The node answered with a JSON-RPC error object. */
  | 'rpc'
  /** No answer within the per-request timeout. */
  | 'timeout'
  /** A non-200 HTTP status. */
  | 'http'
  /** Connection refused, reset, DNS, ... */
  | 'network'
  /** The answer was not the JSON-RPC shape expected. */
  | 'malformed';

export interface RpcFailureDetails {
  endpoint: string;
  method: string;
  /** JSON-RPC error code (kind `rpc`). */
  rpcCode?: number;
  /** HTTP status (kind `http`). */
  httpStatus?: number;
  cause?: unknown;
}

export class RpcFailure extends Error {
  override readonly name = 'RpcFailure';
  readonly kind: RpcFailureKind;
  readonly endpoint: string;
  readonly method: string;
  readonly rpcCode: number | undefined;
  readonly httpStatus: number | undefined;

  constructor(kind: RpcFailureKind, message: string, details: RpcFailureDetails) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.kind = kind;
    this.endpoint = details.endpoint;
    this.method = details.method;
    this.rpcCode = details.rpcCode;
    this.httpStatus = details.httpStatus;
  }
}

export function isRpcFailure(err: unknown, kind?: RpcFailureKind): err is RpcFailure {
  return err instanceof RpcFailure && (kind === undefined || err.kind === kind);
}

/** The account fetcher's queue is full: the request was refused, not queued. */
export class FetchQueueFull extends Error {
  override readonly name = 'FetchQueueFull';
  constructor(readonly limit: number) {
    super(`account fetch queue full (${limit} addresses waiting)`);
  }
}
