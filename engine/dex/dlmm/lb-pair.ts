/**
 * Meteora DLMM `LbPair` account: bytemuck `repr(C)`, 904 bytes, Anchor discriminator
 * `210b3162b565b10d` (docs/wire-formats.md §4.3, IDL 0.12). Token X is tokenA, token Y is tokenB.
 *
 *   8    parameters (StaticParameters, 32)   40   v_parameters (VariableParameters, 32)
 *   75   pair_type u8     76 active_id i32    80   bin_step u16    82 status u8
 *   86   activation_type u8
 *   88   token_x_mint     120 token_y_mint    152  reserve_x       184 reserve_y
 *   216  protocol_fee { amount_x u64, amount_y u64 }
 *   264  reward_infos [2 × 144] (mint at +0)  552  oracle
 *   584  bin_array_bitmap [u64; 16]           712  last_updated_at i64
 *   816  activation_point u64                 880  token_mint_x/y_program_flag u8, 882 version u8
 *
 * The decoder reads what quoting and the simulator need; seeds, reward vaults and rates, the
 * pre-activation fields and the creator are not decoded, and the encoder writes them as zeros.
 */
import {
  expectDiscriminator,
  expectSize,
  invalidAccount,
  readI32,
  readI64,
  readPubkey,
  readU16,
  readU32,
  readU64,
  readU8,
  writeI32,
  writeI64,
  writePubkey,
  writeU16,
  writeU32,
  writeU64,
  writeU8,
} from '../account-bytes.js';
import { Dex, type DlmmPool } from '../types.js';
import {
  BIN_ARRAY_BITMAP_WORDS,
  CollectFeeMode,
  DEFAULT_PUBKEY,
  FunctionType,
  MAX_BIN_ID,
  MIN_BIN_ID,
} from './constants.js';

export const DLMM_LB_PAIR_SIZE = 904;
/** sha256("account:LbPair")[0..8]. */
export const DLMM_LB_PAIR_DISCRIMINATOR = new Uint8Array([0x21, 0x0b, 0x31, 0x62, 0xb5, 0x65, 0xb1, 0x0d]);
/** The program's `MAX_BIN_STEP`. */
export const DLMM_MAX_BIN_STEP = 400;

const ACCOUNT = 'LbPair';

// StaticParameters (+8)
const BASE_FACTOR = 8;
const FILTER_PERIOD = 10;
const DECAY_PERIOD = 12;
const REDUCTION_FACTOR = 14;
const VARIABLE_FEE_CONTROL = 16;
const MAX_VOLATILITY_ACCUMULATOR = 20;
const MIN_BIN_ID_OFFSET = 24;
const MAX_BIN_ID_OFFSET = 28;
const PROTOCOL_SHARE = 32;
const BASE_FEE_POWER_FACTOR = 34;
const FUNCTION_TYPE = 35;
const COLLECT_FEE_MODE = 36;
// VariableParameters (+40)
const VOLATILITY_ACCUMULATOR = 40;
const VOLATILITY_REFERENCE = 44;
const INDEX_REFERENCE = 48;
const LAST_UPDATE_TIMESTAMP = 56;
// LbPair
const PAIR_TYPE = 75;
const ACTIVE_ID = 76;
const BIN_STEP = 80;
const STATUS = 82;
const ACTIVATION_TYPE = 86;
const TOKEN_X_MINT = 88;
const TOKEN_Y_MINT = 120;
const RESERVE_X = 152;
const RESERVE_Y = 184;
const PROTOCOL_FEE_X = 216;
const PROTOCOL_FEE_Y = 224;
const REWARD_INFOS = 264;
const REWARD_INFO_SIZE = 144;
const ORACLE = 552;
const BIN_ARRAY_BITMAP = 584;
const LAST_UPDATED_AT = 712;
const ACTIVATION_POINT = 816;
const TOKEN_MINT_X_PROGRAM_FLAG = 880;
const TOKEN_MINT_Y_PROGRAM_FLAG = 881;
const VERSION = 882;

/**
 * A decoded LbPair: the shared `DlmmPool` plus the fields that decide how a swap runs (activation,
 * limit-order support) and the ones the simulator writes back.
 */
export interface DlmmLbPair extends DlmmPool {
  /** `pair_type` (see `PairType`). */
  pairType: number;
  /** `activation_type`: 0 slot, 1 Unix timestamp. */
  activationType: number;
  /** Before this point, Permissioned and CustomizablePermissionless pairs refuse swaps. */
  activationPoint: bigint;
  /**
   * Farming reward mints (DEFAULT_PUBKEY when a slot is unused). A function-type-0 pair fills limit
   * orders only when it has no rewards: in such pairs bin bytes 48..143 held reward data.
   */
  rewardMints: readonly [string, string];
  oracle: string;
  protocolFeeX: bigint;
  protocolFeeY: bigint;
  lastUpdatedAt: bigint;
  /** 0 SPL Token, 1 Token-2022. */
  tokenXProgramFlag: number;
  tokenYProgramFlag: number;
  version: number;
}

/**
 * Decodes an LbPair account. Throws TpError AccountSize (not 904 bytes), AccountDiscriminator
 * (not an LbPair) or AccountInvalid (bin step, active id or an enum out of the program's range).
 */
export function decodeLbPair(data: Uint8Array, address?: string): DlmmLbPair {
  expectSize(data, DLMM_LB_PAIR_SIZE, Dex.Dlmm, ACCOUNT, address);
  expectDiscriminator(data, DLMM_LB_PAIR_DISCRIMINATOR, Dex.Dlmm, ACCOUNT, address);

  const binStep = readU16(data, BIN_STEP);
  const activeId = readI32(data, ACTIVE_ID);
  const functionType = readU8(data, FUNCTION_TYPE);
  const collectFeeMode = readU8(data, COLLECT_FEE_MODE);
  if (binStep === 0 || binStep > DLMM_MAX_BIN_STEP) {
    throw invalidAccount(Dex.Dlmm, ACCOUNT, `bin_step ${binStep} outside 1..${DLMM_MAX_BIN_STEP}`, address);
  }
  if (activeId < MIN_BIN_ID || activeId > MAX_BIN_ID) {
    throw invalidAccount(Dex.Dlmm, ACCOUNT, `active_id ${activeId} outside ${MIN_BIN_ID}..${MAX_BIN_ID}`, address);
  }
  if (functionType > FunctionType.LimitOrder) {
    throw invalidAccount(Dex.Dlmm, ACCOUNT, `unknown function_type ${functionType}`, address);
  }
  if (collectFeeMode > CollectFeeMode.OnlyY) {
    throw invalidAccount(Dex.Dlmm, ACCOUNT, `unknown collect_fee_mode ${collectFeeMode}`, address);
  }

  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const binArrayBitmap = new Array<bigint>(BIN_ARRAY_BITMAP_WORDS);
  for (let i = 0; i < BIN_ARRAY_BITMAP_WORDS; i++) binArrayBitmap[i] = view.getBigUint64(BIN_ARRAY_BITMAP + 8 * i, true);

  const pool: DlmmLbPair = {
    dex: Dex.Dlmm,
    tokenA: readPubkey(data, TOKEN_X_MINT),
    tokenB: readPubkey(data, TOKEN_Y_MINT),
    activeId,
    binStep,
    status: readU8(data, STATUS),
    reserveX: readPubkey(data, RESERVE_X),
    reserveY: readPubkey(data, RESERVE_Y),
    parameters: {
      baseFactor: readU16(data, BASE_FACTOR),
      filterPeriod: readU16(data, FILTER_PERIOD),
      decayPeriod: readU16(data, DECAY_PERIOD),
      reductionFactor: readU16(data, REDUCTION_FACTOR),
      variableFeeControl: readU32(data, VARIABLE_FEE_CONTROL),
      maxVolatilityAccumulator: readU32(data, MAX_VOLATILITY_ACCUMULATOR),
      minBinId: readI32(data, MIN_BIN_ID_OFFSET),
      maxBinId: readI32(data, MAX_BIN_ID_OFFSET),
      protocolShare: readU16(data, PROTOCOL_SHARE),
      baseFeePowerFactor: readU8(data, BASE_FEE_POWER_FACTOR),
      functionType,
      collectFeeMode,
    },
    vParameters: {
      volatilityAccumulator: readU32(data, VOLATILITY_ACCUMULATOR),
      volatilityReference: readU32(data, VOLATILITY_REFERENCE),
      indexReference: readI32(data, INDEX_REFERENCE),
      lastUpdateTimestamp: readI64(data, LAST_UPDATE_TIMESTAMP),
    },
    binArrayBitmap,
    pairType: readU8(data, PAIR_TYPE),
    activationType: readU8(data, ACTIVATION_TYPE),
    activationPoint: readU64(data, ACTIVATION_POINT),
    rewardMints: [readOptionalPubkey(data, REWARD_INFOS), readOptionalPubkey(data, REWARD_INFOS + REWARD_INFO_SIZE)],
    oracle: readPubkey(data, ORACLE),
    protocolFeeX: readU64(data, PROTOCOL_FEE_X),
    protocolFeeY: readU64(data, PROTOCOL_FEE_Y),
    lastUpdatedAt: readI64(data, LAST_UPDATED_AT),
    tokenXProgramFlag: readU8(data, TOKEN_MINT_X_PROGRAM_FLAG),
    tokenYProgramFlag: readU8(data, TOKEN_MINT_Y_PROGRAM_FLAG),
    version: readU8(data, VERSION),
  };
  if (address !== undefined) pool.address = address;
  return pool;
}

/** A pubkey that is usually unset: all-zero bytes skip the base58 encoding (~6 µs). */
function readOptionalPubkey(data: Uint8Array, offset: number): string {
  for (let i = offset; i < offset + 32; i++) if (data[i] !== 0) return readPubkey(data, offset);
  return DEFAULT_PUBKEY;
}

/**
 * Writes an LbPair account (904 bytes, discriminator included) for the simulator. Fields a plain
 * `DlmmPool` lacks are written as zeros / the default pubkey; `decodeLbPair` reads back the pool.
 */
export function encodeLbPair(pool: DlmmPool | DlmmLbPair): Uint8Array {
  const data = new Uint8Array(DLMM_LB_PAIR_SIZE);
  data.set(DLMM_LB_PAIR_DISCRIMINATOR, 0);
  const p = pool.parameters;
  writeU16(data, BASE_FACTOR, p.baseFactor);
  writeU16(data, FILTER_PERIOD, p.filterPeriod);
  writeU16(data, DECAY_PERIOD, p.decayPeriod);
  writeU16(data, REDUCTION_FACTOR, p.reductionFactor);
  writeU32(data, VARIABLE_FEE_CONTROL, p.variableFeeControl);
  writeU32(data, MAX_VOLATILITY_ACCUMULATOR, p.maxVolatilityAccumulator);
  writeI32(data, MIN_BIN_ID_OFFSET, p.minBinId);
  writeI32(data, MAX_BIN_ID_OFFSET, p.maxBinId);
  writeU16(data, PROTOCOL_SHARE, p.protocolShare);
  writeU8(data, BASE_FEE_POWER_FACTOR, p.baseFeePowerFactor);
  writeU8(data, FUNCTION_TYPE, p.functionType);
  writeU8(data, COLLECT_FEE_MODE, p.collectFeeMode);
  const v = pool.vParameters;
  writeU32(data, VOLATILITY_ACCUMULATOR, v.volatilityAccumulator);
  writeU32(data, VOLATILITY_REFERENCE, v.volatilityReference);
  writeI32(data, INDEX_REFERENCE, v.indexReference);
  writeI64(data, LAST_UPDATE_TIMESTAMP, v.lastUpdateTimestamp);

  writeI32(data, ACTIVE_ID, pool.activeId);
  writeU16(data, BIN_STEP, pool.binStep);
  writeU8(data, STATUS, pool.status);
  writePubkey(data, TOKEN_X_MINT, pool.tokenA);
  writePubkey(data, TOKEN_Y_MINT, pool.tokenB);
  writePubkey(data, RESERVE_X, pool.reserveX);
  writePubkey(data, RESERVE_Y, pool.reserveY);
  for (let i = 0; i < BIN_ARRAY_BITMAP_WORDS; i++) {
    writeU64(data, BIN_ARRAY_BITMAP + 8 * i, pool.binArrayBitmap[i] ?? 0n);
  }

  const extra = pool as Partial<DlmmLbPair>;
  writeU8(data, PAIR_TYPE, extra.pairType ?? 0);
  writeU8(data, ACTIVATION_TYPE, extra.activationType ?? 0);
  writeU64(data, ACTIVATION_POINT, extra.activationPoint ?? 0n);
  writePubkey(data, REWARD_INFOS, extra.rewardMints?.[0] ?? DEFAULT_PUBKEY);
  writePubkey(data, REWARD_INFOS + REWARD_INFO_SIZE, extra.rewardMints?.[1] ?? DEFAULT_PUBKEY);
  writePubkey(data, ORACLE, extra.oracle ?? DEFAULT_PUBKEY);
  writeU64(data, PROTOCOL_FEE_X, extra.protocolFeeX ?? 0n);
  writeU64(data, PROTOCOL_FEE_Y, extra.protocolFeeY ?? 0n);
  writeI64(data, LAST_UPDATED_AT, extra.lastUpdatedAt ?? 0n);
  writeU8(data, TOKEN_MINT_X_PROGRAM_FLAG, extra.tokenXProgramFlag ?? 0);
  writeU8(data, TOKEN_MINT_Y_PROGRAM_FLAG, extra.tokenYProgramFlag ?? 0);
  writeU8(data, VERSION, extra.version ?? 0);
  return data;
}

/**
 * Whether swaps in this pair also fill resting limit orders (the SDK's `isSupportLimitOrder`):
 * LimitOrder pairs do, LiquidityMining pairs do not, Undetermined pairs do when no reward mint is
 * set. A pool without `rewardMints` (not from `decodeLbPair`) counts as having no rewards.
 */
export function supportsLimitOrders(pool: DlmmPool): boolean {
  switch (pool.parameters.functionType) {
    case FunctionType.LimitOrder:
      return true;
    case FunctionType.LiquidityMining:
      return false;
    default: {
      const mints = (pool as Partial<DlmmLbPair>).rewardMints;
      return mints === undefined || (mints[0] === DEFAULT_PUBKEY && mints[1] === DEFAULT_PUBKEY);
    }
  }
}
