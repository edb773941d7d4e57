import { base58 } from '../chain/index.js';
import { createHash } from 'node:crypto';

import {
  CLMM_BITMAP_EXTENSION_SIZE,
  Dex,
  clmmBitmapExtensionAddress,
  decodeClmmPool,
  decodeLbPair,
} from '../dex/index.js';
import type { AccountRecord } from './chain-backend.js';
import { GENESIS_UNIX_TIME } from './chain-time.js';
import { programAccount, type SimPoolInfo } from './pool-genesis.js';

/**
 * The accounts and fields the DEX programs' real swap instructions need that the pool builders
 * (pool-genesis.ts) leave out, added at genesis after the market is built (additive: no account
 * the builders write changes but the Raydium CLMM open time). The AMM v4 pools need nothing more:
 * pool-genesis writes whole AmmInfo accounts.
 *
 * - dexa_clmm: open_time one second before genesis (the program swaps only when the block time is
 *   past it, and the first slots share the genesis second), the pool's ObservationState (at its observation_key: 4,483 bytes, pool_id set) and
 *   its TickArrayBitmapExtension (PDA ["pool_tick_array_bitmap_extension", pool]: 1,832 bytes,
 *   empty bitmaps, as every Raydium pool is created with);
 * - dexb_dlmm: the pair's Oracle (at its oracle key: the 32-byte header, no samples).
 */

const OBSERVATION_STATE_SIZE = 8 + 1 + 8 + 2 + 32 + 44 * 100 + 32;
const OBSERVATION_DISCRIMINATOR = createHash('sha256').update('account:ObservationState').digest().subarray(0, 8);
const EXTENSION_DISCRIMINATOR = Uint8Array.of(60, 150, 36, 219, 97, 128, 139, 153);
const ORACLE_DISCRIMINATOR = Uint8Array.of(139, 194, 131, 179, 140, 179, 229, 244);
const ORACLE_HEADER_SIZE = 8 + 24;
const CLMM_OPEN_TIME = 1080;

export function addSwapProgramAccounts(seed: number, pools: readonly SimPoolInfo[], accounts: Map<string, AccountRecord>): void {
  for (const info of pools) {
    const record = accounts.get(info.address);
    if (record === undefined) continue;
    const poolBytes = base58.decodePubkey(info.address);
    switch (info.dex) {
      case Dex.Clmm: {
        const pool = decodeClmmPool(record.data, info.address);
        const data = record.data.slice();
        new DataView(data.buffer).setBigUint64(CLMM_OPEN_TIME, GENESIS_UNIX_TIME - 1n, true);
        accounts.set(info.address, { ...record, data });
        const observation = new Uint8Array(OBSERVATION_STATE_SIZE);
        observation.set(OBSERVATION_DISCRIMINATOR, 0);
        observation.set(poolBytes, 19);
        if (pool.observationKey !== undefined && !accounts.has(pool.observationKey)) accounts.set(pool.observationKey, programAccount(info.programId, observation));
        const extension = new Uint8Array(CLMM_BITMAP_EXTENSION_SIZE);
        extension.set(EXTENSION_DISCRIMINATOR, 0);
        extension.set(poolBytes, 8);
        accounts.set(clmmBitmapExtensionAddress(info.programId, info.address), programAccount(info.programId, extension));
        break;
      }
      case Dex.Dlmm: {
        const pair = decodeLbPair(record.data, info.address);
        const oracle = new Uint8Array(ORACLE_HEADER_SIZE);
        oracle.set(ORACLE_DISCRIMINATOR, 0);
        if (!accounts.has(pair.oracle)) accounts.set(pair.oracle, programAccount(info.programId, oracle));
        break;
      }
      default:
        break;
    }
  }
}
