/**
 * One error class for the whole engine, with a stable code per failure (`TP_ERR_...`).
 * Codes are part of the public contract: logs, metrics labels and API error bodies carry them.
 * Their HTTP and gRPC statuses are in one table, engine/error-status.ts, which every server uses.
 */
export const ErrorCode = {
  // configuration
  ConfigInvalid: 'TP_ERR_CONFIG_INVALID',
  ConfigFile: 'TP_ERR_CONFIG_FILE',
  // wire formats
  EntryMalformed: 'TP_ERR_ENTRY_MALFORMED',
  Base58Invalid: 'TP_ERR_BASE58_INVALID',
  // pool accounts
  UnknownOwner: 'TP_ERR_UNKNOWN_OWNER',
  AccountSize: 'TP_ERR_ACCOUNT_SIZE',
  AccountDiscriminator: 'TP_ERR_ACCOUNT_DISCRIMINATOR',
  AccountInvalid: 'TP_ERR_ACCOUNT_INVALID',
  // swaps
  UnknownMint: 'TP_ERR_UNKNOWN_MINT',
  InvalidAmount: 'TP_ERR_INVALID_AMOUNT',
  // quote service (spec 02 error table)
  /** A query parameter is missing or malformed (HTTP 400); `context.parameter` names it. */
  BadParameter: 'TP_ERR_BAD_PARAMETER',
  /** Spec 02: no pools known for the pair. */
  NoPoolsInCache: 'TP_ERR_NO_POOLS_IN_CACHE',
  /** Spec 02: every candidate pool missing, stale, older than maxStateAgeMs or refused by the swap math. */
  NoValidQuotes: 'TP_ERR_NO_VALID_QUOTES',
  /** The circuit breaker is open: the cache path fails at once. */
  CircuitOpen: 'TP_ERR_CIRCUIT_OPEN',
  RateLimited: 'TP_ERR_RATE_LIMITED',
  /** No pool is known for the pair, in the cache or in the quote service's pool directory (HTTP 404). */
  NoPoolForPair: 'TP_ERR_NO_POOL_FOR_PAIR',
  /** The RPC fallback failed; the message carries the RPC error (HTTP 503, spec 02: returned to the caller). */
  RpcFallbackFailed: 'TP_ERR_RPC_FALLBACK_FAILED',
  /** The request deadline passed before the RPC answered (HTTP 504). */
  Deadline: 'TP_ERR_DEADLINE',
  /** Neither the cache nor the RPC fallback can answer (cache disabled without RPC, shutting down; HTTP 503). */
  Unavailable: 'TP_ERR_UNAVAILABLE',
  NotFound: 'TP_ERR_NOT_FOUND',
  /** An HTTP method a path does not take (405, with `Allow`). */
  MethodNotAllowed: 'TP_ERR_METHOD_NOT_ALLOWED',
  /** A request (HTTP or WebSocket) without a valid JWT bearer token on an authenticated path (401, `WWW-Authenticate: Bearer`). */
  Unauthenticated: 'TP_ERR_UNAUTHENTICATED',
  /** A request body that is not the JSON its path takes (400). */
  InvalidJson: 'TP_ERR_INVALID_JSON',
  /** A request body above the path's bound (413). */
  PayloadTooLarge: 'TP_ERR_PAYLOAD_TOO_LARGE',
  /** The amount is valid but too small to buy anything: the best route's output is 0 (400). */
  AmountTooSmall: 'TP_ERR_AMOUNT_TOO_SMALL',
  /** The request's URL (path and query) is longer than the port accepts (414). */
  UriTooLong: 'TP_ERR_URI_TOO_LONG',
  /** The request's header fields are larger in all than the port accepts (431). */
  HeadersTooLarge: 'TP_ERR_HEADERS_TOO_LARGE',
  Internal: 'TP_ERR_INTERNAL',
  // external quote service (engine/external): what a poll of the provider's GET /quote ended with
  /** The provider found no route for the pair (400 COULD_NOT_FIND_ANY_ROUTE / TOKEN_NOT_TRADABLE; gRPC NOT_FOUND). */
  ExternalNoRoute: 'TP_ERR_EXTERNAL_NO_ROUTE',
  /** The provider refused the request with another 4xx (bad parameter, bad API key, wrong path). */
  ExternalRejected: 'TP_ERR_EXTERNAL_REJECTED',
  /** The provider answered 5xx. */
  ExternalServerError: 'TP_ERR_EXTERNAL_SERVER_ERROR',
  /** No connection to the provider (refused, reset, DNS). */
  ExternalUnreachable: 'TP_ERR_EXTERNAL_UNREACHABLE',
  /** The provider's answer is not the documented /quote shape (bad JSON, missing or bad fields). */
  ExternalMalformed: 'TP_ERR_EXTERNAL_MALFORMED',
  // RPC proxy (engine/rpc-proxy): why the proxy answered a call itself (in the error's `data.tidepoolCode`)
  /** The call reached no endpoint (none reachable, or the proxy is shutting down); safe to send again. */
  RpcProxyUnavailable: 'TP_ERR_RPC_PROXY_UNAVAILABLE',
  /** A read reached endpoints but none answered (network error, timeout, 5xx) within the retries. */
  RpcProxyUpstreamFailed: 'TP_ERR_RPC_PROXY_UPSTREAM_FAILED',
  /** A write reached one endpoint, which failed before answering: it may have been applied; not sent again. */
  RpcProxyWriteOutcomeUnknown: 'TP_ERR_RPC_PROXY_WRITE_OUTCOME_UNKNOWN',
  // chain RPC clients (engine/rpc) and the simulated node (engine/sim)
  /**
   * A JSON-RPC call to a node failed; `context.kind` says how (rpc, timeout, http, network,
   * malformed), with the endpoint, the method and, as sent, the node's error code or HTTP status.
   */
  RpcFailed: 'TP_ERR_RPC_FAILED',
  /** An account fetch was refused, not queued: the fetcher's queue or request ring is full (`context.limit`). */
  FetchQueueFull: 'TP_ERR_FETCH_QUEUE_FULL',
  /** The RPC worker thread cannot answer: the fetcher was closed, or the worker ended (`context.reason`). */
  RpcWorkerUnavailable: 'TP_ERR_RPC_WORKER_UNAVAILABLE',
  /** A PubSub (websocket) connection to a node was lost, or a call on it failed before its answer. */
  PubsubConnectionLost: 'TP_ERR_PUBSUB_CONNECTION_LOST',
  /** The simulated node refuses a JSON-RPC call with this error object (`context.rpcCode`, `context.data`). */
  NodeRpcError: 'TP_ERR_NODE_RPC_ERROR',
  /** The swap API (quote, swap) refuses a request, in the real API's shape (`context.errorCode`, `context.status`). */
  SwapApiRefused: 'TP_ERR_SWAP_API_REFUSED',
  // cancellation
  /** The operation was cancelled by its caller (a close, a SIGTERM) before it finished; `context.reason` says why. */
  Aborted: 'TP_ERR_ABORTED',
  // message bus (engine/bus)
  /** A JetStream stream or consumer could not be created or updated. */
  BusSetup: 'TP_ERR_BUS_SETUP',
  /** A publish failed: no connection, too many in flight, or no acknowledgement after the retries. */
  BusPublish: 'TP_ERR_BUS_PUBLISH',
  /** The bus refused the credentials (token, user/password, creds file) or the TLS handshake failed. */
  BusAuth: 'TP_ERR_BUS_AUTH',
  /** No bus server answered within a service's start wait (engine/app/service-host.ts); the message names the setting. */
  BusUnavailable: 'TP_ERR_BUS_UNAVAILABLE',
  // platform state (engine/state: PostgreSQL, the key-value store; engine/wallets)
  /** The database cannot be reached (refused, timed out, authentication failed). */
  DbUnavailable: 'TP_ERR_DB_UNAVAILABLE',
  /** The embedded database's data directory is open in another process. */
  DbLocked: 'TP_ERR_DB_LOCKED',
  /** A migration failed or an applied migration file was changed afterwards. */
  DbMigration: 'TP_ERR_DB_MIGRATION',
  /** The key-value store (Redis) cannot be reached or refused a command. */
  KvUnavailable: 'TP_ERR_KV_UNAVAILABLE',
  /** A lock was released or extended by someone who does not hold it. */
  LockNotHeld: 'TP_ERR_LOCK_NOT_HELD',
  /** No wallet passphrase or key file, or it does not open a stored key. */
  WalletPassphrase: 'TP_ERR_WALLET_PASSPHRASE',
  /** A stored encrypted key or a keypair file is not in a format we read. */
  WalletKeyFormat: 'TP_ERR_WALLET_KEY_FORMAT',
  /** A wallet (tier, address) is missing, duplicated or not usable for the operation. */
  WalletInvalid: 'TP_ERR_WALLET_INVALID',
  /** A transfer was refused by the chain, failed on it, or was not confirmed in time. */
  TransferFailed: 'TP_ERR_TRANSFER_FAILED',
  // transactions
  /** A transaction does not fit in a packet (1232 bytes), in legacy form nor as v0 with the tables given. */
  TransactionTooLarge: 'TP_ERR_TX_TOO_LARGE',
  /** A swap route cannot be built: a hop refused by the pool's math, a route that does not chain, a bad slippage. */
  RouteInvalid: 'TP_ERR_ROUTE_INVALID',
  // platform messages (engine/messages: TradeOpportunity, MarketEvent, PriceUpdate)
  /** A platform message does not match its JSON Schema or breaks a rule of its format (`context.path` names the field). */
  MessageInvalid: 'TP_ERR_MESSAGE_INVALID',
  /**
   * A transaction cannot be built, signed or read as asked (`context.reason`): a signer's key
   * missing, an invoked program marked writable, lookup tables for a legacy message, more accounts
   * than a message indexes, or bytes that hold no signature.
   */
  TransactionInvalid: 'TP_ERR_TX_INVALID',
  // programming contract
  /**
   * A function or constructor was given a value outside its domain: an option out of range, an
   * index past the end, a number too wide for its wire field, a buffer of the wrong length. A bug
   * in the caller or a value no setting check caught; `context.argument` names it.
   */
  ArgumentInvalid: 'TP_ERR_ARGUMENT_INVALID',
  // command line
  Usage: 'TP_ERR_USAGE',
  Io: 'TP_ERR_IO',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * The context each code carries: a reader (a transport, a log query, a test) can rely on these
 * fields when a context is given. Every code has an entry (error-contexts.test.ts checks it), and
 * each `new TpError(code, …, { context })` gives its code's fields, checked by the compiler. Every
 * shape is exact: a field not named here is refused, so a new field is added here, with its doc.
 */
export interface ErrorContexts {
  /** Which request parameter (query key, body field, gRPC field) is missing or malformed. */
  [ErrorCode.BadParameter]: {
    parameter: string;
    /** Its value as given (bigints as decimal strings, lists by their length, null when absent). */
    value?: string | number | null;
    /** The bound the value passes. */
    max?: number;
    /** The opportunity the request was made for. */
    opportunityId?: string;
  };
  /** The setting at fault, as the user writes it (key, flag or variable), or every issue found. */
  [ErrorCode.ConfigInvalid]: ConfigInvalidContext;
  /** The field of the message at fault (a JSON pointer or dotted path). */
  [ErrorCode.MessageInvalid]: {
    path: string;
    /** The message's kind (its schema title, `TradeOpportunity`). */
    message?: string;
    /** Every violation found, as `path: problem`. */
    violations?: readonly string[];
  };
  /** The mint no pool of the cache or the directory knows; or, for a pool asked to swap a pair it does not trade, the pool, its mints and the pair. */
  [ErrorCode.UnknownMint]: { mint: string } | (PairContext & { mint: string; pool: string; dex: string; tokenA: string; tokenB: string });
  /** How the call failed, where and, as the node sent them, its JSON-RPC error code (and data) or HTTP status. */
  [ErrorCode.RpcFailed]: RpcFailedContext;
  /** The bound that was reached: addresses waiting, or bytes of the worker's request ring (`ringBytes`). */
  [ErrorCode.FetchQueueFull]: { limit: number; ringBytes?: number };
  /** `closed`: the fetcher was closed; `exited`: the worker ended before answering. */
  [ErrorCode.RpcWorkerUnavailable]: { reason: 'closed' | 'exited' };
  /** The JSON-RPC error object the simulated node answers with. */
  [ErrorCode.NodeRpcError]: { rpcCode: number; data?: unknown };
  /** The real swap API's error code (or an injected status's text as a code) and the HTTP status it answers with. */
  [ErrorCode.SwapApiRefused]: { errorCode: string; status: number };
  /** Why the operation was cancelled (the abort signal's reason, as text). */
  [ErrorCode.Aborted]: { reason: string };
  /** The argument at fault, as the code names it (`capacity`, `options.batchSize`, `seed`), and its value when small. */
  [ErrorCode.ArgumentInvalid]: ArgumentInvalidContext;
  /** The account's length; with the length expected and which account (`account`, `dex`, `address`) where known. */
  [ErrorCode.AccountSize]: {
    actual: number;
    expected?: number;
    account?: string;
    /** The DEX whose account it is. */
    dex?: string;
    /** The account's address. */
    address?: string | undefined;
    /** The token program that owns it (a Mint's: Token or Token-2022). */
    program?: string;
  };
  /** What is wrong with the transaction, and the account it names where one is at fault. */
  [ErrorCode.TransactionInvalid]: {
    reason: TransactionInvalidReason;
    address?: string;
    /** `too-many-accounts`: how many accounts the message references. */
    accounts?: number;
    /** `signer-count`: the signers the message has. */
    signers?: number;
    /** `no-signature`: the length of the bytes, in bytes. */
    length?: number;
  };
  /** The flag or setting the command line got wrong, as the user writes it (`--from`, `strategy`). */
  [ErrorCode.Usage]: { setting: string };
  /** The account that does not decode (its address where known), with its DEX and its kind (`Mint`, `Reserve`). */
  [ErrorCode.AccountInvalid]: {
    address: string | undefined;
    dex?: string;
    account?: string;
    /** The token program that owns it (Token or Token-2022). */
    program?: string;
    /** Token-2022 extension data: the account's length in bytes. */
    size?: number;
    /** A lookup table: what is wrong with it (LookupTableErrorKind, or why the simulator will not extend it). */
    kind?: string;
  };
  /** The program that owns the account, which no decoder takes, and the account's address where known. */
  [ErrorCode.UnknownOwner]: { owner: string; address: string | undefined; account?: string };
  /** Which account has the wrong discriminator: its address and DEX where known, or its kind (`account`). */
  [ErrorCode.AccountDiscriminator]: { address?: string | undefined; dex?: string; account?: string };
  /** The migration at fault (its version) and its file where one is read. */
  [ErrorCode.DbMigration]: { version: number; file?: string };
  /** The data directory that is locked, and the process holding it where known. */
  [ErrorCode.DbLocked]: { dataDir: string; pid?: number };
  /** The database that cannot be reached (host, port and database; no password). */
  [ErrorCode.DbUnavailable]: { target: string };
  /** The store that cannot be reached (`target`, no password), or the key of the refused command. */
  [ErrorCode.KvUnavailable]: { target: string } | { key: string };
  /** The wallet whose stored key is not in a format we read. */
  [ErrorCode.WalletKeyFormat]: { address: string };
  /** The setting that lacks the passphrase, or the wallet whose key it does not open. */
  [ErrorCode.WalletPassphrase]: { setting: string } | { address: string };
  /** The start-wait setting, the servers tried and how long (ms) the service waited. */
  [ErrorCode.BusUnavailable]: { setting: string; servers: string; waitMs: number };
  /** The amount at fault, by the field or parameter that holds it, and its value (bigints as decimal strings). */
  [ErrorCode.InvalidAmount]: {
    field: string;
    value?: string | number;
    /** The pool the amount belongs to. */
    address?: string;
  };
  /** The text that is not base58 (a short preview) and its length, or the type of a value that is not text. */
  [ErrorCode.Base58Invalid]: ({ value: string; length?: number } | { type: string });
  /** The transaction that failed or was not confirmed, or the node (`url`) that refused to send it. */
  [ErrorCode.TransferFailed]: { signature: string } | { url: string; rpcCode?: number | undefined };
  /** The stream being set up, and the consumer when the consumer failed. */
  [ErrorCode.BusSetup]: {
    stream: string;
    consumer?: string;
    /** A stream the server cannot reserve: its byte bound, its storage, and the setting that sizes it. */
    maxBytes?: number;
    storage?: string;
    setting?: string;
    /** A stream that exists with another storage type: the storage it has and the one the spec asks. */
    existing?: string;
    wanted?: string;
  };
  /**
   * Why the publish failed: the subject it was sent on (no acknowledgement, a refusal), the bound
   * on publishes in flight that was reached, or the bus connection's status when not connected.
   */
  [ErrorCode.BusPublish]:
    | {
        subject: string;
        /** The message's id (JetStream `Nats-Msg-Id`, an opportunity's or a signal's id). */
        msgId?: string;
        /** How many times it was sent. */
        attempts?: number;
      }
    | { maxInFlight: number }
    | { status: string };
  /** The deadline that passed (ms), or, for an aggregated quote, the codes both sources failed with. */
  [ErrorCode.Deadline]:
    | {
        deadlineMs: number;
        /** What was awaited (a test helper's condition). */
        what?: string;
        /** The transaction whose confirmation was awaited. */
        signature?: string;
      }
    | AggregatedFailureContext;
  /** Where the bytes break: an offset into them, their length, or the record being read (`record`). */
  [ErrorCode.EntryMalformed]:
    | {
        offset: number;
        /** The entry parser's status name (`truncated`) and the slot of the batch (decimal). */
        status?: string;
        slot?: string;
      }
    | { length: number }
    | {
        record: string;
        /** What is wrong with the record. */
        problem?: string;
      };
  /** The servers refused (comma-separated, without credentials) and the NATS error code (`TLS` for a handshake). */
  [ErrorCode.BusAuth]: { servers: string; natsCode: string };
  /**
   * The transaction's size and the packet limit (bytes), or, for a fitted transaction, each form
   * tried (by version) with its size or why it could not be built.
   */
  [ErrorCode.TransactionTooLarge]: { size: number; limit: number } | { tried: Record<string, number | string> };
  /** The body's bound in bytes. */
  [ErrorCode.PayloadTooLarge]: { limitBytes: number };
  /** The file that cannot be read or does not hold the JSON it should. */
  [ErrorCode.ConfigFile]: { path: string };
  /** The pair asked for; with the fresh pools a DEX filter left out, when it left out all. */
  [ErrorCode.NoPoolsInCache]: PairContext & { candidates?: number };
  /** The pair asked for, the candidate pools that passed the filters and, from the cache, all pools known for the pair. */
  [ErrorCode.NoValidQuotes]: PairContext & { candidates: number; pools?: number };
  /** Which circuit breaker is open: the quote engine's cache path, or the external provider's. */
  [ErrorCode.CircuitOpen]: { circuit: 'cache' | 'provider' };
  /** Whole seconds after which the limit takes a request again (the `Retry-After` value). */
  [ErrorCode.RateLimited]: { retryAfter: number };
  /** The pair asked for, and the pools known for it when a DEX filter left out all of them. */
  [ErrorCode.NoPoolForPair]: PairContext & { pools?: number };
  /** The pair and how many RPC reads failed, or the RPC method that failed (pool discovery) and its HTTP status. */
  [ErrorCode.RpcFallbackFailed]: (PairContext & { failures: number }) | { method: string; httpStatus?: number };
  /** What cannot be read or reached (see UnavailableContext). */
  [ErrorCode.Unavailable]: UnavailableContext;
  /** What was looked for (see NotFoundContext). */
  [ErrorCode.NotFound]: NotFoundContext;
  /** The method used and the methods the path takes (the `Allow` value). */
  [ErrorCode.MethodNotAllowed]: { method: string; allow: string };
  /** The credential the request lacked or that did not verify: a bearer token (JWT) or an API key. */
  [ErrorCode.Unauthenticated]: { credential: 'bearer' | 'api-key' };
  /** The body's length in bytes. */
  [ErrorCode.InvalidJson]: { bytes: number };
  /** The pair whose best route gives 0. */
  [ErrorCode.AmountTooSmall]: PairContext;
  /** The port's bound on the URL, in characters. */
  [ErrorCode.UriTooLong]: { limitChars: number };
  /** The port's bound on all header fields together, in characters. */
  [ErrorCode.HeadersTooLarge]: { limitChars: number };
  /** Which invariant broke (see InternalContext). */
  [ErrorCode.Internal]: InternalContext;
  /** How the provider's poll ended (engine/external PollOutcomeKind, e.g. `no_route`). */
  [ErrorCode.ExternalNoRoute]: ExternalPollContext;
  /** How the provider's poll ended (`rejected`, `rate_limited`). */
  [ErrorCode.ExternalRejected]: ExternalPollContext;
  /** How the provider's poll ended (`server_error`). */
  [ErrorCode.ExternalServerError]: ExternalPollContext;
  /** How the provider's poll ended (`connection_error`). */
  [ErrorCode.ExternalUnreachable]: ExternalPollContext;
  /** How the provider's poll ended (`malformed`). */
  [ErrorCode.ExternalMalformed]: ExternalPollContext;
  /** Why no endpoint was reached, with the last endpoint tried (its name) and the attempts. */
  [ErrorCode.RpcProxyUnavailable]: RpcProxyContext;
  /** What the last attempt ended with, its endpoint (its name) and the attempts made. */
  [ErrorCode.RpcProxyUpstreamFailed]: RpcProxyContext;
  /** What the one attempt ended with and its endpoint (its name). */
  [ErrorCode.RpcProxyWriteOutcomeUnknown]: RpcProxyContext;
  /** The node (its name) whose PubSub connection was lost. */
  [ErrorCode.PubsubConnectionLost]: { endpoint: string };
  /** The key of the lock. */
  [ErrorCode.LockNotHeld]: { key: string };
  /**
   * The wallet at fault (its address, with the token it holds none of), the id or tier asked for
   * (with how many enabled wallets the tier has when it needs exactly one), or the input field that
   * is not what a wallet takes.
   */
  [ErrorCode.WalletInvalid]: { address: string; token?: string } | { id: string } | { tier: string; count?: number } | { field: string };
  /** The hop at fault (its pool, the mint it does not trade, or why its math refused), or the pool and amount of a one-hop order. */
  [ErrorCode.RouteInvalid]: { hop: number; pool?: string; mint?: string; reason?: string } | { pool: string; amount: string };
  /** The file or the listening address at fault, or the command that failed and its exit code. */
  [ErrorCode.Io]: IoContext;
}

/** ErrorCode.ConfigInvalid: the settings at fault. */
export type ConfigInvalidContext =
  /**
   * One setting (as the user writes it) with its value where it is short; with the program id
   * configured twice or refused, or the strategy type that has no row.
   */
  | { setting: string; value?: string | number; programId?: string; strategy?: string }
  /** Shared-state settings a money-moving service lacks (`missing`; `setting` joins them). */
  | { setting: string; service: string; missing: readonly string[] }
  /** Endpoint settings left at a loopback default (`settings`) while the RPC settings `remoteRpc` are remote. */
  | { setting: string; remoteRpc: readonly string[]; settings: readonly string[] }
  /** Every issue found; for a config file, with its unknown settings. */
  | { issues: readonly string[]; unknown?: readonly string[] };

/** For an aggregated quote neither source answered: the codes the local and external sources failed with. */
export type AggregatedFailureContext = { localError: string; externalError: string };

/** The pair a quote was asked for. */
export type PairContext = { inputMint: string; outputMint: string };

/** How a poll of the external provider ended (engine/external PollOutcomeKind). */
export type ExternalPollContext = { outcome: string };

/** What the proxy's JSON-RPC error says in its `data` besides `tidepoolCode` (engine/rpc-proxy ProxyErrorData). */
export type RpcProxyContext = { reason: string; endpoint?: string; attempts?: number };

/** ErrorCode.Unavailable: what an operation needs that cannot be read or reached now. */
export type UnavailableContext =
  /** A pool account that could not be read (or has not been yet). */
  | { pool: string }
  /** A bus stream that could not be read. */
  | { stream: string }
  /** A service (the simulator's RPC, a planner) that did not answer at this URL. */
  | { url: string }
  /** A landed transaction whose record cannot be read yet, and the trade it carries. */
  | { signature: string; tradeId?: string }
  /** How a request to the price oracle failed. */
  | { oracle: 'http' | 'timeout' | 'network' | 'malformed' }
  /** For an aggregated quote: the codes both sources failed with. */
  | AggregatedFailureContext;

/** ErrorCode.NotFound: what was looked for. */
export type NotFoundContext =
  /** A pool (or account) by its address. */
  | { address: string }
  /** A pair (`inputMint:outputMint` id) with no quote held. */
  | { pairId: string }
  /** A strategy by its id or id prefix. */
  | { strategy: string }
  /** For an aggregated quote: the codes both sources failed with (both no route). */
  | AggregatedFailureContext;

/** ErrorCode.Internal: the invariant that broke, by what it was about. */
export type InternalContext =
  /** A close step of a fixture failed. */
  | { closer: string }
  /** A buffer was written short of (or past) its size. */
  | { written: number; size: number }
  /** An order state change the lifecycle does not allow. */
  | { orderId: string; from: string; to: string }
  /** A worker answered a call that is not pending. */
  | { callId: number }
  /** A shared buffer is not laid out as expected (its length). */
  | { bytes: number };

/** ErrorCode.Io: where input or output failed. */
export type IoContext =
  /** A file or directory. */
  | { path: string }
  /** A listening address (host and port), with the setting that chose it where there is one. */
  | { host: string; port: number; setting?: string }
  /** A listening address as one text (a gRPC `host:port` target). */
  | { address: string }
  /** A command run as a child (its arguments) and its exit code. */
  | { args: readonly string[]; exitCode: number };

export interface ArgumentInvalidContext {
  /** The parameter or option at fault (`capacity`, `options.batchSize`, `entry.hash`). */
  argument: string;
  /** Its value as given (bigints as decimal strings, byte arrays by their length). */
  value?: string | number | boolean | null | undefined;
}

/** Why a transaction cannot be built, signed or read (ErrorCode.TransactionInvalid). */
export type TransactionInvalidReason =
  /** An account to sign has no keypair among the signers given (`address`). */
  | 'missing-signer'
  /** A program the transaction invokes is marked writable (`address`). */
  | 'writable-program'
  /** Address lookup tables were given for a legacy message. */
  | 'lookup-tables-need-v0'
  /** The message references more accounts than its u8 indexes reach. */
  | 'too-many-accounts'
  /** The message's signer count is not the one this builder takes. */
  | 'signer-count'
  /** The bytes hold no signature (no transaction id). */
  | 'no-signature';

/** What failed in a JSON-RPC call (ErrorCode.RpcFailed). */
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

export interface RpcFailedContext {
  kind: RpcFailureKind;
  endpoint: string;
  method: string;
  /** JSON-RPC error code (kind `rpc`). */
  rpcCode?: number | undefined;
  /** The JSON-RPC error's `data` (kind `rpc`; a failed preflight's simulation). */
  data?: unknown;
  /** HTTP status (kind `http`). */
  httpStatus?: number | undefined;
}

/** The context of code `C`: its fixed shape (for a union of codes, any of theirs). */
export type ErrorContextOf<C extends ErrorCode> = ErrorContexts[C];

export interface TpErrorOptions<C extends ErrorCode = ErrorCode> {
  cause?: unknown;
  context?: ErrorContextOf<C>;
}


export class TpError<C extends ErrorCode = ErrorCode> extends Error {
  override readonly name = 'TpError';
  readonly code: C;
  readonly context: ErrorContextOf<C>;

  constructor(code: C, message: string, options?: TpErrorOptions<C>) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.context = (options?.context ?? {}) as ErrorContextOf<C>;
  }

  toJSON(): { code: C; message: string; context: ErrorContextOf<C> } {
    return { code: this.code, message: this.message, context: this.context };
  }
}

export function isTpError<C extends ErrorCode = ErrorCode>(err: unknown, code?: C): err is TpError<C> {
  return err instanceof TpError && (code === undefined || err.code === code);
}

/** TpError(ArgumentInvalid) naming the argument at fault and its value; build it on the failure path only. */
export function invalidArgument(argument: string, value: ArgumentInvalidContext['value'], message: string): TpError<typeof ErrorCode.ArgumentInvalid> {
  return new TpError(ErrorCode.ArgumentInvalid, message, { context: { argument, value } });
}
