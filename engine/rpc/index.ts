/**
 * engine/rpc: reading accounts from Solana JSON-RPC. A getMultipleAccounts client (bigint slot and
 * lamports, timeout, typed failures, round-robin endpoints) and the batched, coalesced account
 * fetcher over it. Used by the scanner (lookup tables, pool state) and engine/pools.
 */
export { RpcClient, parseRpcEndpoints, MAX_KEYS_PER_CALL, DEFAULT_RPC_TIMEOUT_MS, type AccountData, type Commitment, type MultipleAccountsResult, type RpcClientOptions } from './rpc-client.js';
export { RpcFailure, FetchQueueFull, isRpcFailure, type RpcFailureKind, type RpcFailureDetails } from './rpc-errors.js';
export { AccountFetcher, type AccountFetcherOptions, type AccountFetcherStats, type AccountsSource } from './account-fetcher.js';
