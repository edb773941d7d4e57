/**
 * dexa_amm: the simplified AMM account layout of spec 02, exactly as the spec gives it. Not what
 * Raydium AMM v4 lays out (amm-info.ts is): a registry reads it only when explicitly set to
 * (`DecoderRegistryOptions.ammLayout: 'spec02-simplified'`, configuration `pools.ammLayout`), and
 * never for the real program id, where offsets 64/72 hold min_size and vol_max_cut_ratio.
 *
 *   0    status     u64
 *   64   reserve A  u64
 *   72   reserve B  u64
 *   400  mint A     pubkey
 *   432  mint B     pubkey
 *
 * The fee is not read from the account: spec 02 fixes it at 25 / 10000.
 *
 * Account size: 752 bytes, the size of Raydium AMM v4 `AmmInfo` (docs/wire-formats.md §4.4), whose mint
 * offsets (400, 432) and status values (offset 0) the simplified layout shares. Accounts of that
 * program are this size and nothing else is, so an exact-size check rejects foreign accounts
 * instead of reading reserves out of them. The account has no Anchor discriminator.
 *
 * Token A is the mint at 400 (Raydium's coin/base), token B the mint at 432 (pc/quote).
 */
import {
  expectSize,
  readPubkey,
  readU64,
  writePubkey,
  writeU64,
} from '../account-bytes.js';
import { Dex, type AmmPool } from '../types.js';

export const AMM_ACCOUNT_SIZE = 752;
export const AMM_STATUS_OFFSET = 0;
export const AMM_RESERVE_A_OFFSET = 64;
export const AMM_RESERVE_B_OFFSET = 72;
export const AMM_MINT_A_OFFSET = 400;
export const AMM_MINT_B_OFFSET = 432;

/** Spec 02: "The AMM decoder sets fee numerator 25 and fee denominator 10000." */
export const AMM_FEE_NUMERATOR = 25n;
export const AMM_FEE_DENOMINATOR = 10_000n;

/** Raydium AMM v4 status values (docs/wire-formats.md §4.4). */
export const AmmStatus = {
  Uninitialized: 0n,
  Initialized: 1n,
  Disabled: 2n,
  WithdrawOnly: 3n,
  LiquidityOnly: 4n,
  OrderBookOnly: 5n,
  SwapOnly: 6n,
  WaitingTrade: 7n,
} as const;

/**
 * Whether a pool in this status accepts swaps: Raydium AMM v4 `AmmStatus::swap_permission`
 * (raydium-amm program/src/state.rs) allows Initialized, SwapOnly and WaitingTrade.
 */
export function ammSwapEnabled(status: bigint): boolean {
  return status === AmmStatus.Initialized || status === AmmStatus.SwapOnly || status === AmmStatus.WaitingTrade;
}

/** Decodes a spec 02 simplified AMM account. Throws TpError(AccountSize) unless it is 752 bytes. */
export function decodeSimplifiedAmmPool(data: Uint8Array, address?: string): AmmPool {
  expectSize(data, AMM_ACCOUNT_SIZE, Dex.Amm, 'AMM pool', address);
  const pool: AmmPool = {
    dex: Dex.Amm,
    tokenA: readPubkey(data, AMM_MINT_A_OFFSET),
    tokenB: readPubkey(data, AMM_MINT_B_OFFSET),
    status: readU64(data, AMM_STATUS_OFFSET),
    reserveA: readU64(data, AMM_RESERVE_A_OFFSET),
    reserveB: readU64(data, AMM_RESERVE_B_OFFSET),
    feeNumerator: AMM_FEE_NUMERATOR,
    feeDenominator: AMM_FEE_DENOMINATOR,
  };
  if (address !== undefined) pool.address = address;
  return pool;
}

export interface SimplifiedAmmPoolFields {
  status: bigint;
  reserveA: bigint;
  reserveB: bigint;
  tokenA: string;
  tokenB: string;
}

/**
 * Writes a spec 02 simplified AMM account (752 bytes, zero outside the five fields). Into `out` when given
 * (it must be 752 bytes), else into a new buffer.
 */
export function encodeSimplifiedAmmPool(fields: SimplifiedAmmPoolFields, out?: Uint8Array): Uint8Array {
  const data = out ?? new Uint8Array(AMM_ACCOUNT_SIZE);
  expectSize(data, AMM_ACCOUNT_SIZE, Dex.Amm, 'AMM pool');
  if (out !== undefined) data.fill(0);
  writeU64(data, AMM_STATUS_OFFSET, fields.status);
  writeU64(data, AMM_RESERVE_A_OFFSET, fields.reserveA);
  writeU64(data, AMM_RESERVE_B_OFFSET, fields.reserveB);
  writePubkey(data, AMM_MINT_A_OFFSET, fields.tokenA);
  writePubkey(data, AMM_MINT_B_OFFSET, fields.tokenB);
  return data;
}
