import { base58 } from '../chain/index.js';
import { createHash } from 'node:crypto';

import {
  AMM_FEE_DENOMINATOR,
  AMM_FEE_NUMERATOR,
  CLMM_BITMAP_EXTENSION_SIZE,
  Dex,
  ammV4CanonicalAuthority,
  clmmBitmapExtensionAddress,
  decodeClmmPool,
  decodeLbPair,
  writeAmmV4SwapFields,
} from '../dex/index.js';
import type { AccountRecord } from './chain-backend.js';
import { GENESIS_UNIX_TIME } from './chain-time.js';
import { programAccount, type SimPoolInfo } from './pool-genesis.js';
import { seededBytes32 } from './prng.js';

/**
 * The accounts and fields the DEX programs' real swap instructions need that the pool builders
 * (pool-genesis.ts) leave out, added at genesis after the market is built (additive: no account
 * the builders write changes, except the AMM fields below, which nothing else reads):
 *
 * - dexa_amm: AmmInfo's nonce (the canonical bump of ["amm authority"], whose PDA already owns
 *   the vaults), swap fee 25/10000 (spec 02's fixed fee) and seeded open-orders, target-orders,
 *   market and market-program keys, at their real offsets (dex/amm/amm-info.ts);
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
      case Dex.Amm: {
        const data = record.data.slice();
        const key = (what: string): string => base58.encode(seededBytes32(seed, `amm:${info.address}:${what}`));
        writeAmmV4SwapFields(data, {
          nonce: ammV4CanonicalAuthority(info.programId).nonce,
          coinVault: info.vaultA,
          pcVault: info.vaultB,
          swapFeeNumerator: AMM_FEE_NUMERATOR,
          swapFeeDenominator: AMM_FEE_DENOMINATOR,
          openOrders: key('open-orders'),
          targetOrders: key('target-orders'),
          market: key('market'),
          marketProgram: key('market-program'),
        });
        accounts.set(info.address, { ...record, data });
        break;
      }
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
