/**
 * Orca `Whirlpool` account (docs/wire-formats.md §4.1): Borsh, 653 bytes, discriminator 3f95d10ce1806309.
 *
 *   8   whirlpools_config pubkey      81  tick_current_index i32
 *   40  whirlpool_bump u8             85  protocol_fee_owed_a u64
 *   41  tick_spacing u16              93  protocol_fee_owed_b u64
 *   43  fee_tier_index_seed [u8;2]    101 token_mint_a / 133 token_vault_a
 *   45  fee_rate u16 (millionths)     165 fee_growth_global_a u128
 *   47  protocol_fee_rate u16         181 token_mint_b / 213 token_vault_b
 *   49  liquidity u128                245 fee_growth_global_b u128
 *   65  sqrt_price u128 (Q64.64)      261 reward_last_updated_timestamp u64; 269 reward_infos
 *
 * Token A is mint a (the protocol orders mint a < mint b bytewise). A pool whose fee tier index
 * differs from its tick spacing was created from an adaptive fee tier (`adaptiveFee`).
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
  readU64,
  readU8,
  writeI32,
  writePubkey,
  writeU128,
  writeU16,
  writeU64,
  writeU8,
} from '../account-bytes.js';
import { MAX_TICK, MIN_SQRT_PRICE, MIN_TICK, WHIRLPOOL_MAX_SQRT_PRICE } from '../concentrated/tick-math.js';
import { Dex, type ConcentratedPool } from '../types.js';

export const WHIRLPOOL_ACCOUNT_SIZE = 653;
export const WHIRLPOOL_DISCRIMINATOR = hexBytes('3f95d10ce1806309');

const CONFIG = 8;
const BUMP = 40;
const TICK_SPACING = 41;
const FEE_TIER_INDEX = 43;
const FEE_RATE = 45;
const PROTOCOL_FEE_RATE = 47;
const LIQUIDITY = 49;
const SQRT_PRICE = 65;
const TICK_CURRENT = 81;
const PROTOCOL_FEE_OWED_A = 85;
const PROTOCOL_FEE_OWED_B = 93;
const MINT_A = 101;
const VAULT_A = 133;
const FEE_GROWTH_A = 165;
const MINT_B = 181;
const VAULT_B = 213;
const FEE_GROWTH_B = 245;
const REWARD_TIMESTAMP = 261;

/** Fee rates are millionths: a rate of 1e6 or more would leave nothing to swap. */
const FEE_RATE_LIMIT = 1_000_000;

/** Decodes a Whirlpool account. Throws TpError AccountSize / AccountDiscriminator / AccountInvalid. */
export function decodeWhirlpool(data: Uint8Array, address?: string): ConcentratedPool {
  expectSize(data, WHIRLPOOL_ACCOUNT_SIZE, Dex.Whirlpool, 'Whirlpool', address);
  expectDiscriminator(data, WHIRLPOOL_DISCRIMINATOR, Dex.Whirlpool, 'Whirlpool', address);
  const tickSpacing = readU16(data, TICK_SPACING);
  const feeRate = readU16(data, FEE_RATE);
  const sqrtPrice = readU128(data, SQRT_PRICE);
  const tick = readI32(data, TICK_CURRENT);
  if (tickSpacing === 0) throw invalidAccount(Dex.Whirlpool, 'Whirlpool', 'tick spacing is 0', address);
  if (feeRate >= FEE_RATE_LIMIT) {
    throw invalidAccount(Dex.Whirlpool, 'Whirlpool', `fee rate ${feeRate} is not below 1e6`, address);
  }
  if (sqrtPrice < MIN_SQRT_PRICE || sqrtPrice > WHIRLPOOL_MAX_SQRT_PRICE || tick < MIN_TICK || tick > MAX_TICK) {
    throw invalidAccount(Dex.Whirlpool, 'Whirlpool', `price ${sqrtPrice} / tick ${tick} out of range`, address);
  }
  const pool: ConcentratedPool = {
    dex: Dex.Whirlpool,
    tokenA: readPubkey(data, MINT_A),
    tokenB: readPubkey(data, MINT_B),
    sqrtPrice,
    tick,
    tickSpacing,
    liquidity: readU128(data, LIQUIDITY),
    feeRate,
    vaultA: readPubkey(data, VAULT_A),
    vaultB: readPubkey(data, VAULT_B),
  };
  if (readU16(data, FEE_TIER_INDEX) !== tickSpacing) pool.adaptiveFee = true;
  if (address !== undefined) pool.address = address;
  return pool;
}

/** Everything the encoder writes; fields the decoder ignores are optional and default to zero. */
export interface WhirlpoolFields {
  tokenA: string;
  tokenB: string;
  vaultA: string;
  vaultB: string;
  sqrtPrice: bigint;
  tick: number;
  tickSpacing: number;
  liquidity: bigint;
  feeRate: number | undefined;
  /** Fee tier index; defaults to the tick spacing (a static-fee pool). */
  feeTierIndex?: number;
  whirlpoolsConfig?: string;
  bump?: number;
  protocolFeeRate?: number;
  protocolFeeOwedA?: bigint;
  protocolFeeOwedB?: bigint;
  feeGrowthGlobalA?: bigint;
  feeGrowthGlobalB?: bigint;
  rewardLastUpdatedTimestamp?: bigint;
}

/** Writes a Whirlpool account (653 bytes; reward infos zero). A decoded pool is valid input. */
export function encodeWhirlpool(fields: WhirlpoolFields, out?: Uint8Array): Uint8Array {
  const data = out ?? new Uint8Array(WHIRLPOOL_ACCOUNT_SIZE);
  expectSize(data, WHIRLPOOL_ACCOUNT_SIZE, Dex.Whirlpool, 'Whirlpool');
  if (out !== undefined) data.fill(0);
  data.set(WHIRLPOOL_DISCRIMINATOR, 0);
  if (fields.whirlpoolsConfig !== undefined) writePubkey(data, CONFIG, fields.whirlpoolsConfig);
  writeU8(data, BUMP, fields.bump ?? 0);
  writeU16(data, TICK_SPACING, fields.tickSpacing);
  writeU16(data, FEE_TIER_INDEX, fields.feeTierIndex ?? fields.tickSpacing);
  writeU16(data, FEE_RATE, fields.feeRate ?? 0);
  writeU16(data, PROTOCOL_FEE_RATE, fields.protocolFeeRate ?? 0);
  writeU128(data, LIQUIDITY, fields.liquidity);
  writeU128(data, SQRT_PRICE, fields.sqrtPrice);
  writeI32(data, TICK_CURRENT, fields.tick);
  writeU64(data, PROTOCOL_FEE_OWED_A, fields.protocolFeeOwedA ?? 0n);
  writeU64(data, PROTOCOL_FEE_OWED_B, fields.protocolFeeOwedB ?? 0n);
  writePubkey(data, MINT_A, fields.tokenA);
  writePubkey(data, VAULT_A, fields.vaultA);
  writeU128(data, FEE_GROWTH_A, fields.feeGrowthGlobalA ?? 0n);
  writePubkey(data, MINT_B, fields.tokenB);
  writePubkey(data, VAULT_B, fields.vaultB);
  writeU128(data, FEE_GROWTH_B, fields.feeGrowthGlobalB ?? 0n);
  writeU64(data, REWARD_TIMESTAMP, fields.rewardLastUpdatedTimestamp ?? 0n);
  return data;
}

/** Reads the raw fields the decoded pool leaves out (for tests and tools). */
export function readWhirlpoolExtras(data: Uint8Array): {
  whirlpoolsConfig: string;
  bump: number;
  feeTierIndex: number;
  protocolFeeRate: number;
  protocolFeeOwedA: bigint;
  protocolFeeOwedB: bigint;
  feeGrowthGlobalA: bigint;
  feeGrowthGlobalB: bigint;
  rewardLastUpdatedTimestamp: bigint;
} {
  expectSize(data, WHIRLPOOL_ACCOUNT_SIZE, Dex.Whirlpool, 'Whirlpool');
  return {
    whirlpoolsConfig: readPubkey(data, CONFIG),
    bump: readU8(data, BUMP),
    feeTierIndex: readU16(data, FEE_TIER_INDEX),
    protocolFeeRate: readU16(data, PROTOCOL_FEE_RATE),
    protocolFeeOwedA: readU64(data, PROTOCOL_FEE_OWED_A),
    protocolFeeOwedB: readU64(data, PROTOCOL_FEE_OWED_B),
    feeGrowthGlobalA: readU128(data, FEE_GROWTH_A),
    feeGrowthGlobalB: readU128(data, FEE_GROWTH_B),
    rewardLastUpdatedTimestamp: readU64(data, REWARD_TIMESTAMP),
  };
}
