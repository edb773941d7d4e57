import { reservesOf } from '../pools/reserves.js';
import type { LoadedPool } from '../pools/index.js';
import type { PoolStateUpdate } from './types.js';

/**
 * A pool state read from RPC as the cache stores it: reserves (reservesOf), the RPC context slot,
 * the decoded pool, its swap context and its mints' transfer fees (when read). Fees come from the decoded pool (the cache's rule).
 */
export function poolStateOfLoaded(loaded: LoadedPool): PoolStateUpdate {
  const pool = loaded.pool;
  const reserves = reservesOf(loaded);
  return {
    address: loaded.address,
    dex: loaded.dex,
    tokenA: pool.tokenA,
    tokenB: pool.tokenB,
    reserveA: reserves[0],
    reserveB: reserves[1],
    slot: loaded.slot,
    ...(loaded.writeVersion !== undefined ? { writeVersion: loaded.writeVersion } : {}),
    pool,
    ...(loaded.context !== undefined ? { context: loaded.context } : {}),
    ...(loaded.transferFees !== undefined ? { transferFees: loaded.transferFees } : {}),
  };
}
