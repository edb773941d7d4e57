/**
 * engine/rpc: reading accounts from Solana JSON-RPC. A getMultipleAccounts client (bigint slot and
 * lamports, timeout, typed failures, round-robin endpoints) and the batched, coalesced account
 * fetcher over it, on the calling thread (AccountFetcher) or with the calls made by a worker thread
 * (WorkerAccountFetcher: RpcThread, rpc-worker.ts, records in SharedArrayBuffer rings). Used by
 * the scanner (lookup tables, pool state) and engine/pools.
 */
export { RpcClient, basicAuthHeader, parseRpcEndpoints, MAX_KEYS_PER_CALL, DEFAULT_RPC_TIMEOUT_MS, type AccountData, type Commitment, type EpochInfo, type MultipleAccountsResult, type RpcClientOptions } from './rpc-client.js';
export { rpcFailure, fetchQueueFull, isRpcFailure, type RpcFailure, type FetchQueueFull, type RpcFailureKind, type RpcFailureDetails } from './rpc-errors.js';
export { AccountFetcher, type AccountFetcherOptions, type AccountFetchOptions, type AccountFetcherStats, type AccountReader, type AccountsSource } from './account-fetcher.js';
export { abortable, sharedAbortController } from './abortable.js';
export { WorkerAccountFetcher, type WorkerAccountFetcherOptions } from './worker-account-fetcher.js';
export {
  RpcThread,
  rpcRequestRingFull,
  rpcWorkerUnavailable,
  type RpcWorkerUnavailable,
  DEFAULT_RPC_WORKER,
  type RpcThreadOptions,
  type RpcThreadStats,
} from './rpc-thread.js';
export { ChainClient, PREFLIGHT_FAILURE, type ChainClientOptions, type LandedTransaction, type PrioritizationFee, type SignatureStatusInfo, type SimulationOutcome, type TokenAccountInfo } from './chain-client.js';
export { JsonRpcHttpClient, type JsonRpcHttpClientOptions, type RpcCallOptions } from './json-rpc-http-client.js';
export { DEFAULT_LOOKUP_TABLE_TTL_MS, OperatorLookupTables, type OperatorLookupTablesOptions } from './operator-lookup-tables.js';
