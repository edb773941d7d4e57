/**
 * engine/pools: a pool's current state (decoded pool account and swap context) read from Solana
 * JSON-RPC, for the scanner (after a transaction touched the pool) and the quote service's RPC
 * fallback; with `readMints`, its two mints and their Token-2022 transfer fees at the current
 * epoch (EpochClock over getEpochInfo).
 */
export { abortable } from '../rpc/abortable.js';
export type { LoadedPool, PoolLoadFailure, PoolLoadResult, PoolLoader } from './types.js';
export { EpochClock, type EpochClockOptions, type EpochClockStats, type EpochSource } from './epoch-clock.js';
export {
  RpcPoolLoader,
  createRpcPoolLoader,
  type PlannedAccounts,
  type PoolLoadOptions,
  type PoolLoadRounds,
  type RpcPoolLoaderOptions,
  type RpcPoolLoaderStats,
} from './rpc-pool-loader.js';
export { reservesOf } from './reserves.js';
export { swapPoolOfLoaded } from './swap-pool-of-loaded.js';
