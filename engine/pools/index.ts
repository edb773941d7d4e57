/**
 * engine/pools: a pool's current state (decoded pool account and swap context) read from Solana
 * JSON-RPC, for the scanner (after a transaction touched the pool) and the quote service's RPC
 * fallback.
 */
export type { LoadedPool, PoolLoadFailure, PoolLoadResult, PoolLoader } from './types.js';
export {
  RpcPoolLoader,
  createRpcPoolLoader,
  type PoolLoadOptions,
  type RpcPoolLoaderOptions,
  type RpcPoolLoaderStats,
} from './rpc-pool-loader.js';
export { reservesOf } from './reserves.js';
