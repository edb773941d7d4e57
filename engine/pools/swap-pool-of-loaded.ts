/**
 * A loaded pool as the swap instruction builders take it (engine/dex `SwapPool`): the DEX's program
 * id, the decoded state and context, the Raydium AMM v4 keys from the pool account's bytes, and the
 * mints' token programs when the loader read the mints. Used by everything that builds a swap from
 * a pool it read: the executor's trades and the swap API's transactions.
 */
import { ammV4Keys, Dex, type DecoderRegistry, type SwapPool } from '../dex/index.js';
import type { LoadedPool } from './types.js';

/** The SwapPool of a loaded pool, with the program id the registry maps its DEX to. */
export function swapPoolOfLoaded(loaded: LoadedPool, registry: DecoderRegistry): SwapPool {
  const programId = registry.programIdByDex[loaded.dex];
  const pool: SwapPool = { programId, state: { pool: loaded.pool, context: loaded.context } };
  if (loaded.dex === Dex.Amm) pool.ammKeys = ammV4Keys(programId, loaded.address, loaded.data);
  if (loaded.mints !== undefined) {
    pool.tokenProgramA = loaded.mints[0].programId;
    pool.tokenProgramB = loaded.mints[1].programId;
  }
  return pool;
}

