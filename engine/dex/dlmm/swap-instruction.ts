import { MEMO_PROGRAM_ID, TOKEN_PROGRAM_ID, base58, findProgramAddress, type AccountMetaInput, type InstructionInput } from '../../chain/index.js';
import { BorshReader, BorshWriter, hasDiscriminator, type RemainingAccountsSlice } from '../anchor-instruction.js';
import { dlmmBinArrayAddress } from '../pool-accounts.js';
import { SwapMode } from '../types.js';
import { invalidArgument } from '../../errors.js';
import { MAX_BITMAP_ARRAY_INDEX, MIN_BITMAP_ARRAY_INDEX, nextBinArrayWithLiquidity } from './bin-array-bitmap.js';
import { binArrayIndexOf } from './bin-array.js';
import type { DlmmLbPair } from './lb-pair.js';

/**
 * Meteora DLMM `swap2` (exact in) and `swap_exact_out2` (exact out), the swaps that take each
 * token's program (SPL Token or Token-2022) and transfer-hook accounts; `swap` / `swap_exact_out`
 * fix both token programs to SPL Token. tidepool builds the "2" forms, as Meteora's SDK does.
 * Layout from the program's IDL (MeteoraAg/dlmm-sdk idls/dlmm.json, lb_clmm 0.12).
 *
 * Data: discriminator (from the IDL), then swap2: amount_in u64, min_amount_out u64;
 * swap_exact_out2: max_in_amount u64, out_amount u64; then remaining_accounts_info
 * {slices: Vec<{accounts_type u8, length u8}>} (empty: 4 zero bytes).
 *
 * Accounts: 0 lb_pair (w), 1 bin_array_bitmap_extension (w; optional: the program id when absent),
 * 2 reserve_x (w), 3 reserve_y (w), 4 user_token_in (w), 5 user_token_out (w), 6 token_x_mint,
 * 7 token_y_mint, 8 oracle (w), 9 host_fee_in (w; optional: the program id), 10 user (signer),
 * 11 token_x_program, 12 token_y_program, 13 memo program, 14 event_authority (PDA
 * ["__event_authority"]), 15 program; then transfer-hook accounts as the slices say, then the bin
 * arrays (w) the swap walks, from the active one in the swap's direction.
 */

export const DLMM_SWAP2_DISCRIMINATOR = Uint8Array.of(65, 75, 63, 76, 235, 91, 91, 136);
export const DLMM_SWAP_EXACT_OUT2_DISCRIMINATOR = Uint8Array.of(43, 215, 247, 132, 137, 60, 243, 81);
/** Bin arrays a swap passes by default (the SDK's). */
export const DLMM_SWAP_BIN_ARRAYS = 3;

/** DLMM `LBError` codes a swap fails with (IDL). */
export const DlmmError = {
  InvalidInput: 6002,
  ExceededAmountSlippageTolerance: 6003,
  BinArrayNotFound: 6009,
  InvalidTokenMint: 6010,
  PairInsufficientLiquidity: 6012,
  InvalidBinArray: 6027,
  NonContinuousBinArrays: 6028,
  InsufficientOutAmount: 6039,
  PoolDisabled: 6042,
  NotExactAmountOut: 6057,
  InvalidRemainingAccountSlice: 6075,
} as const;

export interface DlmmSwap2Data {
  exactIn: boolean;
  /** swap2: amount_in; swap_exact_out2: max_in_amount. */
  first: bigint;
  /** swap2: min_amount_out; swap_exact_out2: out_amount. */
  second: bigint;
  slices: RemainingAccountsSlice[];
}

export function encodeDlmmSwap2Data(args: DlmmSwap2Data): Uint8Array {
  const w = new BorshWriter(8 + 16 + 4 + 2 * args.slices.length)
    .raw(args.exactIn ? DLMM_SWAP2_DISCRIMINATOR : DLMM_SWAP_EXACT_OUT2_DISCRIMINATOR)
    .u64(args.first)
    .u64(args.second)
    .u32(args.slices.length);
  for (const s of args.slices) w.u8(s.accountsType).u8(s.length);
  return w.done();
}

export function decodeDlmmSwap2Data(data: Uint8Array): DlmmSwap2Data | null {
  const exactIn = hasDiscriminator(data, DLMM_SWAP2_DISCRIMINATOR);
  if (!exactIn && !hasDiscriminator(data, DLMM_SWAP_EXACT_OUT2_DISCRIMINATOR)) return null;
  const r = new BorshReader(data);
  r.at = 8;
  const first = r.u64();
  const second = r.u64();
  const n = r.u32();
  if (first === undefined || second === undefined || n === undefined || n > r.remaining / 2) return null;
  const slices: RemainingAccountsSlice[] = [];
  for (let i = 0; i < n; i++) slices.push({ accountsType: r.u8()!, length: r.u8()! });
  return { exactIn, first, second, slices };
}

/** `["__event_authority"]`, Anchor's event-CPI authority. */
export function dlmmEventAuthority(programId: string): string {
  return findProgramAddress(['__event_authority'], programId).address;
}

/** `["bitmap", lb_pair]`: the bin array bitmap extension (arrays beyond ±512). */
export function dlmmBitmapExtensionAddress(programId: string, pool: string): string {
  return findProgramAddress(['bitmap', base58.decodePubkey(pool)], programId).address;
}

/**
 * The bin arrays a swap walks, in order: the one holding the active bin if it has liquidity, else
 * the first with liquidity in the swap's direction, then the next ones, `count` at most, from the
 * pair's ±512-array bitmap.
 */
export function dlmmSwapBinArrays(pool: DlmmLbPair, programId: string, swapForY: boolean, count = DLMM_SWAP_BIN_ARRAYS): string[] {
  if (pool.address === undefined) throw invalidArgument('pool.address', null, 'a DLMM pair with its address is needed');
  const out: string[] = [];
  let at: number | undefined = binArrayIndexOf(pool.activeId);
  while (out.length < count && at !== undefined && at >= MIN_BITMAP_ARRAY_INDEX && at <= MAX_BITMAP_ARRAY_INDEX) {
    at = nextBinArrayWithLiquidity(pool.binArrayBitmap, swapForY, at);
    if (at === undefined) break;
    out.push(dlmmBinArrayAddress(programId, pool.address, at));
    at += swapForY ? -1 : 1;
  }
  return out;
}

export interface DlmmSwap2Accounts {
  programId: string;
  lbPair: string;
  /** Default: absent (the program id in its place). */
  bitmapExtension?: string;
  reserveX: string;
  reserveY: string;
  userTokenIn: string;
  userTokenOut: string;
  tokenXMint: string;
  tokenYMint: string;
  oracle: string;
  /** Default: absent. */
  hostFeeIn?: string;
  user: string;
  tokenXProgram: string;
  tokenYProgram: string;
  binArrays: readonly string[];
}

export function dlmmSwap2Instruction(accounts: DlmmSwap2Accounts, args: Omit<DlmmSwap2Data, 'slices'>): InstructionInput {
  const w = (pubkey: string): AccountMetaInput => ({ pubkey, isSigner: false, isWritable: true });
  const r = (pubkey: string): AccountMetaInput => ({ pubkey, isSigner: false, isWritable: false });
  const program = accounts.programId;
  const metas: AccountMetaInput[] = [
    w(accounts.lbPair),
    accounts.bitmapExtension === undefined ? r(program) : w(accounts.bitmapExtension),
    w(accounts.reserveX),
    w(accounts.reserveY),
    w(accounts.userTokenIn),
    w(accounts.userTokenOut),
    r(accounts.tokenXMint),
    r(accounts.tokenYMint),
    w(accounts.oracle),
    accounts.hostFeeIn === undefined ? r(program) : w(accounts.hostFeeIn),
    { pubkey: accounts.user, isSigner: true, isWritable: false },
    r(accounts.tokenXProgram),
    r(accounts.tokenYProgram),
    r(MEMO_PROGRAM_ID),
    r(dlmmEventAuthority(program)),
    r(program),
    ...accounts.binArrays.map(w),
  ];
  return { programId: program, accounts: metas, data: encodeDlmmSwap2Data({ ...args, slices: [] }) };
}

export interface DlmmPoolSwapInput {
  programId: string;
  /** Decoded with its address. */
  pool: DlmmLbPair;
  owner: string;
  /** The owner's token accounts for X (token A) and Y (token B). */
  tokenAccountA: string;
  tokenAccountB: string;
  /** Default SPL Token. */
  tokenProgramA?: string;
  tokenProgramB?: string;
  /** X → Y. */
  aToB: boolean;
  mode: SwapMode;
  amount: bigint;
  otherAmountThreshold: bigint;
  /** Default: dlmmSwapBinArrays(pool, programId, aToB). */
  binArrays?: readonly string[];
}

/** swap2 / swap_exact_out2 on a decoded pair. */
export function dlmmPoolSwapInstruction(input: DlmmPoolSwapInput): InstructionInput {
  const { pool, aToB } = input;
  if (pool.address === undefined) throw invalidArgument('pool.address', null, 'a DLMM pair with its address is needed');
  const exactIn = input.mode === SwapMode.ExactIn;
  return dlmmSwap2Instruction(
    {
      programId: input.programId,
      lbPair: pool.address,
      reserveX: pool.reserveX,
      reserveY: pool.reserveY,
      userTokenIn: aToB ? input.tokenAccountA : input.tokenAccountB,
      userTokenOut: aToB ? input.tokenAccountB : input.tokenAccountA,
      tokenXMint: pool.tokenA,
      tokenYMint: pool.tokenB,
      oracle: pool.oracle,
      user: input.owner,
      tokenXProgram: input.tokenProgramA ?? TOKEN_PROGRAM_ID,
      tokenYProgram: input.tokenProgramB ?? TOKEN_PROGRAM_ID,
      binArrays: input.binArrays ?? dlmmSwapBinArrays(pool, input.programId, aToB),
    },
    exactIn
      ? { exactIn, first: input.amount, second: input.otherAmountThreshold }
      : { exactIn, first: input.otherAmountThreshold, second: input.amount },
  );
}
