import type { DlmmVariableParameters } from '../dex/index.js';
import { invalidArgument } from '../errors.js';

/**
 * In-place writes of the fields a swap changes, as the programs themselves update their accounts
 * (genesis writes whole accounts with the engine's encoders; a swap rewrites a few fields). The
 * offsets are those of docs/wire-formats.md §4, the same the engine's decoders read; the
 * swap-program tests decode every written account with them. (A Raydium AMM v4 swap writes no
 * reserve: AmmInfo has none, the vaults are the reserves.)
 *
 *   Whirlpool (§4.1):          liquidity u128 @49, sqrt_price u128 @65, tick_current_index i32 @81
 *   Raydium CLMM (§4.2):       liquidity u128 @237, sqrt_price_x64 u128 @253, tick_current i32 @269
 *   Meteora LbPair (§4.3):     v_parameters @40 (volatility_accumulator u32, volatility_reference
 *                              u32, index_reference i32, 4 bytes padding, last_update_timestamp i64),
 *                              active_id i32 @76, protocol_fee amount_x/amount_y u64 @216/@224,
 *                              last_updated_at i64 @712
 *   Meteora BinArray (§4.3):   bins @56, 144 bytes each: amount_x u64 +0, amount_y u64 +8
 */

const WHIRLPOOL_LIQUIDITY = 49;
const WHIRLPOOL_SQRT_PRICE = 65;
const WHIRLPOOL_TICK = 81;
const CLMM_LIQUIDITY = 237;
const CLMM_SQRT_PRICE = 253;
const CLMM_TICK = 269;
const LB_VOLATILITY_ACCUMULATOR = 40;
const LB_VOLATILITY_REFERENCE = 44;
const LB_INDEX_REFERENCE = 48;
const LB_LAST_UPDATE_TIMESTAMP = 56;
const LB_ACTIVE_ID = 76;
const LB_PROTOCOL_FEE_X = 216;
const LB_PROTOCOL_FEE_Y = 224;
const LB_LAST_UPDATED_AT = 712;
const BIN_ARRAY_BINS = 56;
const BIN_SIZE = 144;
const BINS_PER_ARRAY = 70;

const U64 = (1n << 64n) - 1n;

function view(data: Uint8Array): DataView {
  return new DataView(data.buffer, data.byteOffset, data.byteLength);
}

function setU128(v: DataView, offset: number, value: bigint): void {
  v.setBigUint64(offset, value & U64, true);
  v.setBigUint64(offset + 8, value >> 64n, true);
}

export interface ClPriceState {
  sqrtPrice: bigint;
  tick: number;
  liquidity: bigint;
}

export function writeWhirlpoolPrice(data: Uint8Array, state: ClPriceState): void {
  const v = view(data);
  setU128(v, WHIRLPOOL_LIQUIDITY, state.liquidity);
  setU128(v, WHIRLPOOL_SQRT_PRICE, state.sqrtPrice);
  v.setInt32(WHIRLPOOL_TICK, state.tick, true);
}

export function writeClmmPrice(data: Uint8Array, state: ClPriceState): void {
  const v = view(data);
  setU128(v, CLMM_LIQUIDITY, state.liquidity);
  setU128(v, CLMM_SQRT_PRICE, state.sqrtPrice);
  v.setInt32(CLMM_TICK, state.tick, true);
}

export interface LbPairSwapState {
  activeId: number;
  vParameters: DlmmVariableParameters;
  protocolFeeX: bigint;
  protocolFeeY: bigint;
  lastUpdatedAt: bigint;
}

export function writeLbPairState(data: Uint8Array, state: LbPairSwapState): void {
  const v = view(data);
  v.setUint32(LB_VOLATILITY_ACCUMULATOR, state.vParameters.volatilityAccumulator, true);
  v.setUint32(LB_VOLATILITY_REFERENCE, state.vParameters.volatilityReference, true);
  v.setInt32(LB_INDEX_REFERENCE, state.vParameters.indexReference, true);
  v.setBigInt64(LB_LAST_UPDATE_TIMESTAMP, state.vParameters.lastUpdateTimestamp, true);
  v.setInt32(LB_ACTIVE_ID, state.activeId, true);
  v.setBigUint64(LB_PROTOCOL_FEE_X, state.protocolFeeX, true);
  v.setBigUint64(LB_PROTOCOL_FEE_Y, state.protocolFeeY, true);
  v.setBigInt64(LB_LAST_UPDATED_AT, state.lastUpdatedAt, true);
}

/** Writes bin `binId`'s amounts into the BinArray account of index `arrayIndex`. */
export function writeBinAmounts(data: Uint8Array, arrayIndex: number, binId: number, amountX: bigint, amountY: bigint): void {
  const slot = binId - arrayIndex * BINS_PER_ARRAY;
  if (slot < 0 || slot >= BINS_PER_ARRAY) throw invalidArgument('binId', binId, `bin ${binId} is not in bin array ${arrayIndex}`);
  const v = view(data);
  const at = BIN_ARRAY_BINS + slot * BIN_SIZE;
  v.setBigUint64(at, amountX, true);
  v.setBigUint64(at + 8, amountY, true);
}
