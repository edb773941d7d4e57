/**
 * The one table from error codes (engine/errors.ts) to what a transport answers: the HTTP status,
 * the gRPC status, and whether the code and its message may be shown to the client as they are.
 * Every server uses it (GET /quote and the quote stream in engine/quote, the aggregator, the external
 * quote service, the scanner's HTTP port); none maps codes of its own.
 *
 * docs/architecture.md §3: 400 bad parameters, 404 unknown token or no pool for the pair, 429 rate limited,
 * 503 when nothing can answer, 504 on deadline; gRPC uses the matching statuses (INVALID_ARGUMENT,
 * NOT_FOUND, RESOURCE_EXHAUSTED, UNAVAILABLE, DEADLINE_EXCEEDED).
 *
 * A leaf: no gRPC library is imported; the status numbers are gRPC's (grpc/status.proto), checked
 * against @grpc/grpc-js in the tests.
 */
import { ErrorCode } from './errors.js';
import { maskSecretsInText } from './secret-mask.js';

/** gRPC status codes. */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;
export type GrpcStatus = (typeof GrpcStatus)[keyof typeof GrpcStatus];

export interface ErrorStatus {
  readonly http: number;
  readonly grpc: GrpcStatus;
  /**
   * True when the code and its message are for the client. False for failures inside the engine
   * (configuration, decoding, I/O): a client is told TP_ERR_INTERNAL 'internal error' instead.
   */
  readonly client: boolean;
}

const s = (http: number, grpc: GrpcStatus, client = true): ErrorStatus => ({ http, grpc, client });
const G = GrpcStatus;

/** Every code's statuses. A code added to ErrorCode does not compile until it has a row here. */
export const ERROR_STATUS: { readonly [C in ErrorCode]: ErrorStatus } = {
  // configuration: a bad value given by the caller (POST /config/pools) is a bad request
  [ErrorCode.ConfigInvalid]: s(400, G.INVALID_ARGUMENT),
  [ErrorCode.ConfigFile]: s(500, G.INTERNAL, false),
  // wire formats and pool accounts: the engine's own reading failed
  [ErrorCode.EntryMalformed]: s(500, G.INTERNAL, false),
  [ErrorCode.Base58Invalid]: s(400, G.INVALID_ARGUMENT),
  [ErrorCode.UnknownOwner]: s(500, G.INTERNAL, false),
  [ErrorCode.AccountSize]: s(500, G.INTERNAL, false),
  [ErrorCode.AccountDiscriminator]: s(500, G.INTERNAL, false),
  [ErrorCode.AccountInvalid]: s(500, G.INTERNAL, false),
  // swaps and quotes
  [ErrorCode.UnknownMint]: s(404, G.NOT_FOUND),
  [ErrorCode.InvalidAmount]: s(400, G.INVALID_ARGUMENT),
  [ErrorCode.BadParameter]: s(400, G.INVALID_ARGUMENT),
  [ErrorCode.NoPoolsInCache]: s(404, G.NOT_FOUND),
  [ErrorCode.NoValidQuotes]: s(503, G.UNAVAILABLE),
  [ErrorCode.CircuitOpen]: s(503, G.UNAVAILABLE),
  [ErrorCode.RateLimited]: s(429, G.RESOURCE_EXHAUSTED),
  [ErrorCode.NoPoolForPair]: s(404, G.NOT_FOUND),
  [ErrorCode.RpcFallbackFailed]: s(503, G.UNAVAILABLE),
  [ErrorCode.Deadline]: s(504, G.DEADLINE_EXCEEDED),
  [ErrorCode.Unavailable]: s(503, G.UNAVAILABLE),
  [ErrorCode.NotFound]: s(404, G.NOT_FOUND),
  [ErrorCode.MethodNotAllowed]: s(405, G.UNIMPLEMENTED),
  [ErrorCode.Unauthenticated]: s(401, G.UNAUTHENTICATED),
  [ErrorCode.InvalidJson]: s(400, G.INVALID_ARGUMENT),
  [ErrorCode.PayloadTooLarge]: s(413, G.RESOURCE_EXHAUSTED),
  [ErrorCode.AmountTooSmall]: s(400, G.INVALID_ARGUMENT),
  [ErrorCode.UriTooLong]: s(414, G.INVALID_ARGUMENT),
  [ErrorCode.HeadersTooLarge]: s(431, G.INVALID_ARGUMENT),
  [ErrorCode.Internal]: s(500, G.INTERNAL),
  // the external quote API: no route is the pair's answer; every other failure means it cannot answer
  [ErrorCode.ExternalNoRoute]: s(404, G.NOT_FOUND),
  [ErrorCode.ExternalRejected]: s(503, G.UNAVAILABLE),
  [ErrorCode.ExternalServerError]: s(503, G.UNAVAILABLE),
  [ErrorCode.ExternalUnreachable]: s(503, G.UNAVAILABLE),
  [ErrorCode.ExternalMalformed]: s(503, G.UNAVAILABLE),
  // chain RPC: a node or the engine's own worker failed; details are not the client's. The simulated
  // node's refusal goes out as its JSON-RPC error (context.rpcCode), the swap API's refusal with its
  // own status (context.status); these rows are for a server that only has the code.
  [ErrorCode.RpcFailed]: s(502, G.UNAVAILABLE, false),
  [ErrorCode.FetchQueueFull]: s(503, G.RESOURCE_EXHAUSTED, false),
  [ErrorCode.RpcWorkerUnavailable]: s(503, G.UNAVAILABLE, false),
  [ErrorCode.PubsubConnectionLost]: s(502, G.UNAVAILABLE, false),
  [ErrorCode.NodeRpcError]: s(400, G.INVALID_ARGUMENT),
  [ErrorCode.SwapApiRefused]: s(400, G.INVALID_ARGUMENT),
  // cancellation: the engine stopped the work itself (closing)
  [ErrorCode.Aborted]: s(503, G.CANCELLED, false),
  // message bus
  [ErrorCode.BusSetup]: s(503, G.UNAVAILABLE, false),
  [ErrorCode.BusPublish]: s(503, G.UNAVAILABLE, false),
  [ErrorCode.BusAuth]: s(503, G.UNAVAILABLE, false),
  [ErrorCode.BusUnavailable]: s(503, G.UNAVAILABLE, false),
  // RPC proxy (engine/rpc-proxy): reached no endpoint (send again); a read no endpoint
  // answered (send again; 504 when it timed out); a write that may have landed (not UNAVAILABLE,
  // which says "retry")
  [ErrorCode.RpcProxyUnavailable]: s(503, G.UNAVAILABLE),
  [ErrorCode.RpcProxyUpstreamFailed]: s(502, G.UNAVAILABLE),
  [ErrorCode.RpcProxyWriteOutcomeUnknown]: s(502, G.UNKNOWN),
  // platform state: the engine's own stores, their details are not the client's
  [ErrorCode.DbUnavailable]: s(503, G.UNAVAILABLE, false),
  [ErrorCode.DbLocked]: s(503, G.UNAVAILABLE, false),
  [ErrorCode.DbMigration]: s(500, G.INTERNAL, false),
  [ErrorCode.KvUnavailable]: s(503, G.UNAVAILABLE, false),
  [ErrorCode.LockNotHeld]: s(409, G.ABORTED),
  [ErrorCode.WalletPassphrase]: s(500, G.INTERNAL, false),
  [ErrorCode.WalletKeyFormat]: s(500, G.INTERNAL, false),
  [ErrorCode.WalletInvalid]: s(400, G.INVALID_ARGUMENT),
  [ErrorCode.TransferFailed]: s(502, G.UNKNOWN),
  // transactions: a route or transaction the request asked for cannot be built
  [ErrorCode.TransactionTooLarge]: s(400, G.INVALID_ARGUMENT),
  [ErrorCode.RouteInvalid]: s(400, G.INVALID_ARGUMENT),
  [ErrorCode.TransactionInvalid]: s(500, G.INTERNAL, false),
  // programming contract: the engine called itself wrong
  [ErrorCode.ArgumentInvalid]: s(500, G.INTERNAL, false),
  // platform messages: the sender's message is malformed
  [ErrorCode.MessageInvalid]: s(400, G.INVALID_ARGUMENT),
  // command line
  [ErrorCode.Usage]: s(400, G.INVALID_ARGUMENT),
  [ErrorCode.Io]: s(500, G.INTERNAL, false),
};

const INTERNAL_STATUS = ERROR_STATUS[ErrorCode.Internal];

/** The statuses of `code`; a string that is no ErrorCode is TP_ERR_INTERNAL's (500, INTERNAL). */
export function errorStatusOf(code: string): ErrorStatus {
  return (ERROR_STATUS as Readonly<Record<string, ErrorStatus>>)[code] ?? INTERNAL_STATUS;
}

export function httpStatusOf(code: string): number {
  return errorStatusOf(code).http;
}

export function grpcStatusOf(code: string): GrpcStatus {
  return errorStatusOf(code).grpc;
}

/** What a client is told of an error: its code and message, or TP_ERR_INTERNAL 'internal error'. */
export interface ClientError {
  readonly code: string;
  readonly message: string;
  readonly http: number;
  readonly grpc: GrpcStatus;
}

const INTERNAL_CLIENT_ERROR: ClientError = Object.freeze({ code: ErrorCode.Internal, message: 'internal error', http: 500, grpc: GrpcStatus.INTERNAL });

/** The client's view of an error with `code` and `message` (see ErrorStatus.client). */
export function clientErrorOf(code: string, message: string): ClientError {
  const status = (ERROR_STATUS as Readonly<Record<string, ErrorStatus>>)[code];
  if (status === undefined || !status.client) return INTERNAL_CLIENT_ERROR;
  // A message may quote an upstream's error, and with it the upstream's URL and its credentials.
  return { code, message: maskSecretsInText(message), http: status.http, grpc: status.grpc };
}
