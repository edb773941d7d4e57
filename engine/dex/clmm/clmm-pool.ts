/**
 * Raydium CLMM `PoolState` (docs/wire-formats.md §4.2): zero-copy `repr(C, packed)`, 1544 bytes,
 * discriminator f7ede3f5d7c3de46. Offsets checked against the Raydium SDK v2 `PoolInfoLayout`
 * (node_modules/@raydium-io/raydium-sdk-v2/src/raydium/clmm/layout.ts, span 1544) by the tests.
 *
 *   8    bump u8                      269  tick_current i32 (273: 4 bytes padding)
 *   9    amm_config pubkey            277  fee_growth_global_0_x64 / 293 _1 (u128)
 *   41   owner pubkey                 309  protocol_fees_token_0 / 317 _1 (u64)
 *   73   token_mint_0 / 105 _1        325  4 x u128 (swap counters in older builds)
 *   137  token_vault_0 / 169 _1       389  status u8 (bit 4: swap disabled); 390 fee_on u8
 *   201  observation_key              397  reward_infos 3 x 169
 *   233  mint_decimals_0 / 234 _1     904  tick_array_bitmap [u64; 16]
 *   235  tick_spacing u16             1064 fund_fees_token_0/1, 1080 open_time, 1088 recent_epoch
 *   237  liquidity u128               1096 dynamic_fee_info (80 bytes, all zero = none)
 *   253  sqrt_price_x64 u128
 *
 * Token A is mint 0. The trade fee lives in the AmmConfig account (amm-config.ts): the decoded
 * pool has `feeRate` undefined until `withAmmConfig` supplies it.
 */
import {
  expectDiscriminator,
  expectSize,
  hexBytes,
  invalidAccount,
  readI32,
  readPubkey,
  readU128,
  readU16,
  readU32,
  readU64,
  readU8,
  writeI32,
  writePubkey,
  writeU128,
  writeU16,
  writeU32,
  writeU64,
  writeU8,
} from '../account-bytes.js';
import { MAX_TICK, MIN_SQRT_PRICE, MIN_TICK, RAYDIUM_MAX_SQRT_PRICE } from '../concentrated/tick-math.js';
import { Dex, type ClmmDynamicFee, type ConcentratedPool } from '../types.js';

export const CLMM_POOL_ACCOUNT_SIZE = 1544;
export const CLMM_POOL_DISCRIMINATOR = hexBytes('f7ede3f5d7c3de46');
/** PoolState.status bit: swaps disabled. */
export const CLMM_STATUS_SWAP_DISABLED = 1 << 4;
export const CLMM_TICK_ARRAY_BITMAP_WORDS = 16;

const BUMP = 8;
const AMM_CONFIG = 9;
const OWNER = 41;
const MINT_0 = 73;
const MINT_1 = 105;
const VAULT_0 = 137;
const VAULT_1 = 169;
const OBSERVATION = 201;
const DECIMALS_0 = 233;
const DECIMALS_1 = 234;
const TICK_SPACING = 235;
const LIQUIDITY = 237;
const SQRT_PRICE = 253;
const TICK_CURRENT = 269;
const STATUS = 389;
const FEE_ON = 390;
const TICK_ARRAY_BITMAP = 904;
const OPEN_TIME = 1080;
const DYNAMIC_FEE = 1096;

const NAME = 'Raydium CLMM PoolState';

/** Decodes a Raydium CLMM pool. Throws TpError AccountSize / AccountDiscriminator / AccountInvalid. */
export function decodeClmmPool(data: Uint8Array, address?: string): ConcentratedPool {
  expectSize(data, CLMM_POOL_ACCOUNT_SIZE, Dex.Clmm, NAME, address);
  expectDiscriminator(data, CLMM_POOL_DISCRIMINATOR, Dex.Clmm, NAME, address);
  const tickSpacing = readU16(data, TICK_SPACING);
  const sqrtPrice = readU128(data, SQRT_PRICE);
  const tick = readI32(data, TICK_CURRENT);
  if (tickSpacing === 0) throw invalidAccount(Dex.Clmm, NAME, 'tick spacing is 0', address);
  if (sqrtPrice < MIN_SQRT_PRICE || sqrtPrice > RAYDIUM_MAX_SQRT_PRICE || tick < MIN_TICK || tick > MAX_TICK) {
    throw invalidAccount(Dex.Clmm, NAME, `price ${sqrtPrice} / tick ${tick} out of range`, address);
  }
  const bitmap: bigint[] = new Array<bigint>(CLMM_TICK_ARRAY_BITMAP_WORDS);
  for (let i = 0; i < CLMM_TICK_ARRAY_BITMAP_WORDS; i++) bitmap[i] = readU64(data, TICK_ARRAY_BITMAP + 8 * i);
  const pool: ConcentratedPool = {
    dex: Dex.Clmm,
    tokenA: readPubkey(data, MINT_0),
    tokenB: readPubkey(data, MINT_1),
    sqrtPrice,
    tick,
    tickSpacing,
    liquidity: readU128(data, LIQUIDITY),
    feeRate: undefined,
    vaultA: readPubkey(data, VAULT_0),
    vaultB: readPubkey(data, VAULT_1),
    ammConfig: readPubkey(data, AMM_CONFIG),
    observationKey: readPubkey(data, OBSERVATION),
    decimalsA: readU8(data, DECIMALS_0),
    decimalsB: readU8(data, DECIMALS_1),
    swapDisabled: (readU8(data, STATUS) & CLMM_STATUS_SWAP_DISABLED) !== 0,
    feeOn: readU8(data, FEE_ON),
    tickArrayBitmap: bitmap,
  };
  const dynamicFee = readDynamicFee(data);
  if (dynamicFee !== undefined) pool.dynamicFee = dynamicFee;
  if (address !== undefined) pool.address = address;
  return pool;
}

function readDynamicFee(data: Uint8Array): ClmmDynamicFee | undefined {
  let zero = true;
  for (let i = DYNAMIC_FEE; i < DYNAMIC_FEE + 34; i++) {
    if (data[i] !== 0) {
      zero = false;
      break;
    }
  }
  if (zero) return undefined;
  return {
    filterPeriod: readU16(data, DYNAMIC_FEE),
    decayPeriod: readU16(data, DYNAMIC_FEE + 2),
    reductionFactor: readU16(data, DYNAMIC_FEE + 4),
    dynamicFeeControl: readU32(data, DYNAMIC_FEE + 6),
    maxVolatilityAccumulator: readU32(data, DYNAMIC_FEE + 10),
    tickSpacingIndexReference: readI32(data, DYNAMIC_FEE + 14),
    volatilityReference: readU32(data, DYNAMIC_FEE + 18),
    volatilityAccumulator: readU32(data, DYNAMIC_FEE + 22),
    lastUpdateTimestamp: readU64(data, DYNAMIC_FEE + 26),
  };
}

/** Everything the encoder writes; fields the decoder ignores are optional and default to zero. */
export interface ClmmPoolFields {
  tokenA: string;
  tokenB: string;
  vaultA: string;
  vaultB: string;
  ammConfig: string;
  sqrtPrice: bigint;
  tick: number;
  tickSpacing: number;
  liquidity: bigint;
  decimalsA?: number;
  decimalsB?: number;
  /** Raw status byte; defaults to swap-disabled bit from `swapDisabled`. */
  status?: number;
  swapDisabled?: boolean;
  feeOn?: number;
  tickArrayBitmap?: readonly bigint[];
  dynamicFee?: ClmmDynamicFee;
  bump?: number;
  owner?: string;
  observationKey?: string;
  openTime?: bigint;
}

/** Writes a PoolState account (1544 bytes; rewards and counters zero). A decoded pool is valid input. */
export function encodeClmmPool(fields: ClmmPoolFields, out?: Uint8Array): Uint8Array {
  const data = out ?? new Uint8Array(CLMM_POOL_ACCOUNT_SIZE);
  expectSize(data, CLMM_POOL_ACCOUNT_SIZE, Dex.Clmm, NAME);
  if (out !== undefined) data.fill(0);
  data.set(CLMM_POOL_DISCRIMINATOR, 0);
  writeU8(data, BUMP, fields.bump ?? 0);
  writePubkey(data, AMM_CONFIG, fields.ammConfig);
  if (fields.owner !== undefined) writePubkey(data, OWNER, fields.owner);
  writePubkey(data, MINT_0, fields.tokenA);
  writePubkey(data, MINT_1, fields.tokenB);
  writePubkey(data, VAULT_0, fields.vaultA);
  writePubkey(data, VAULT_1, fields.vaultB);
  if (fields.observationKey !== undefined) writePubkey(data, OBSERVATION, fields.observationKey);
  writeU8(data, DECIMALS_0, fields.decimalsA ?? 0);
  writeU8(data, DECIMALS_1, fields.decimalsB ?? 0);
  writeU16(data, TICK_SPACING, fields.tickSpacing);
  writeU128(data, LIQUIDITY, fields.liquidity);
  writeU128(data, SQRT_PRICE, fields.sqrtPrice);
  writeI32(data, TICK_CURRENT, fields.tick);
  writeU8(data, STATUS, fields.status ?? (fields.swapDisabled === true ? CLMM_STATUS_SWAP_DISABLED : 0));
  writeU8(data, FEE_ON, fields.feeOn ?? 0);
  const bitmap = fields.tickArrayBitmap ?? [];
  if (bitmap.length > CLMM_TICK_ARRAY_BITMAP_WORDS) {
    throw invalidAccount(Dex.Clmm, NAME, `tick array bitmap has ${bitmap.length} words, not 16`);
  }
  for (let i = 0; i < bitmap.length; i++) writeU64(data, TICK_ARRAY_BITMAP + 8 * i, bitmap[i]!);
  writeU64(data, OPEN_TIME, fields.openTime ?? 0n);
  const fee = fields.dynamicFee;
  if (fee !== undefined) {
    writeU16(data, DYNAMIC_FEE, fee.filterPeriod);
    writeU16(data, DYNAMIC_FEE + 2, fee.decayPeriod);
    writeU16(data, DYNAMIC_FEE + 4, fee.reductionFactor);
    writeU32(data, DYNAMIC_FEE + 6, fee.dynamicFeeControl);
    writeU32(data, DYNAMIC_FEE + 10, fee.maxVolatilityAccumulator);
    writeI32(data, DYNAMIC_FEE + 14, fee.tickSpacingIndexReference);
    writeU32(data, DYNAMIC_FEE + 18, fee.volatilityReference);
    writeU32(data, DYNAMIC_FEE + 22, fee.volatilityAccumulator);
    writeU64(data, DYNAMIC_FEE + 26, fee.lastUpdateTimestamp);
  }
  return data;
}

/** Sets or clears the bitmap bit of the tick array starting at `startTickIndex` (60 ticks). */
export function setTickArrayBit(bitmap: bigint[], startTickIndex: number, tickSpacing: number, on: boolean): void {
  const bit = startTickIndex / (60 * tickSpacing) + 512;
  if (!Number.isInteger(bit) || bit < 0 || bit >= 1024) {
    throw invalidAccount(Dex.Clmm, NAME, `tick array ${startTickIndex} is outside the pool's bitmap`);
  }
  const word = bit >> 6;
  const mask = 1n << BigInt(bit & 63);
  bitmap[word] = on ? bitmap[word]! | mask : bitmap[word]! & ~mask;
}
