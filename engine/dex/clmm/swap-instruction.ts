import { MEMO_PROGRAM_ID, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID, base58, findProgramAddress, type AccountMetaInput, type InstructionInput } from '../../chain/index.js';
import { BorshReader, BorshWriter, anchorInstructionDiscriminator, hasDiscriminator } from '../anchor-instruction.js';
import { MAX_BITMAP_ARRAY_INDEX, MIN_BITMAP_ARRAY_INDEX, nextBinArrayWithLiquidity } from '../dlmm/bin-array-bitmap.js';
import { clmmTickArrayAddress } from '../pool-accounts.js';
import { Dex, SwapMode, type ConcentratedPool } from '../types.js';
import { invalidArgument } from '../../errors.js';
import { CLMM_TICK_ARRAY_SIZE } from './tick-array.js';

/**
 * Raydium CLMM `swap_v2` (raydium-clmm programs/amm/src/instructions/swap_v2.rs), the swap that
 * handles Token-2022 mints (transfer fees, both token programs passed); the older `swap` takes
 * only SPL Token. tidepool builds swap_v2 for every pool, as Raydium's SDK does.
 *
 * Data (41 bytes): discriminator sha256("global:swap_v2")[0..8], amount u64,
 * other_amount_threshold u64, sqrt_price_limit_x64 u128 (0: none, the program then refuses a
 * partial fill), is_base_input bool.
 *
 * Accounts:
 *   0 payer (signer)            5 input vault (w)            10 memo program
 *   1 amm_config                6 output vault (w)           11 input vault mint
 *   2 pool_state (w)            7 observation_state (w)      12 output vault mint
 *   3 input token account (w)   8 SPL Token program          13… remaining: the tick-array bitmap
 *   4 output token account (w)  9 Token-2022 program             extension (w), then tick arrays (w)
 *
 * The program reads the remaining accounts by size: 10,240-byte tick arrays, the 1,832-byte
 * bitmap extension; anything else ends the list. It skips tick arrays until the one holding the
 * pool's current price (or the first initialized one in the swap's direction) and walks on from
 * there, so the arrays must come in swap order. The extension exists for every pool (created
 * with it) and is passed first, as the SDK does.
 */

export const CLMM_SWAP_V2_DISCRIMINATOR = anchorInstructionDiscriminator('swap_v2');
export const CLMM_SWAP_V2_DATA_SIZE = 41;
/** `TickArrayBitmapExtension::LEN`. */
export const CLMM_BITMAP_EXTENSION_SIZE = 1832;
/** Tick arrays a swap passes by default. */
export const CLMM_SWAP_TICK_ARRAYS = 3;

/** Raydium CLMM `ErrorCode` values a swap fails with (Anchor custom errors from 6000). */
export const ClmmError = {
  NotApproved: 6000,
  SqrtPriceLimitOverflow: 6011,
  LiquidityInsufficient: 6016,
  TooLittleOutputReceived: 6018,
  TooMuchInputPaid: 6019,
  ZeroAmountSpecified: 6020,
  InvalidInputPoolVault: 6021,
  TooSmallInputOrOutputAmount: 6022,
  NotEnoughTickArrayAccount: 6023,
  InvalidFirstTickArrayAccount: 6024,
} as const;

export interface ClmmSwapV2Data {
  amount: bigint;
  otherAmountThreshold: bigint;
  sqrtPriceLimitX64: bigint;
  isBaseInput: boolean;
}

export function encodeClmmSwapV2Data(args: ClmmSwapV2Data): Uint8Array {
  return new BorshWriter(CLMM_SWAP_V2_DATA_SIZE)
    .raw(CLMM_SWAP_V2_DISCRIMINATOR)
    .u64(args.amount)
    .u64(args.otherAmountThreshold)
    .u128(args.sqrtPriceLimitX64)
    .bool(args.isBaseInput)
    .done();
}

/** Null unless `data` is swap_v2 data (Borsh reads past the fields are ignored by Anchor). */
export function decodeClmmSwapV2Data(data: Uint8Array): ClmmSwapV2Data | null {
  if (!hasDiscriminator(data, CLMM_SWAP_V2_DISCRIMINATOR)) return null;
  const r = new BorshReader(data);
  r.at = 8;
  const amount = r.u64();
  const otherAmountThreshold = r.u64();
  const sqrtPriceLimitX64 = r.u128();
  const isBaseInput = r.bool();
  if (amount === undefined || otherAmountThreshold === undefined || sqrtPriceLimitX64 === undefined || isBaseInput === undefined) return null;
  return { amount, otherAmountThreshold, sqrtPriceLimitX64, isBaseInput };
}

/** `["pool_tick_array_bitmap_extension", pool]`. */
export function clmmBitmapExtensionAddress(programId: string, pool: string): string {
  return findProgramAddress(['pool_tick_array_bitmap_extension', base58.decodePubkey(pool)], programId).address;
}

/** `["observation", pool]`: where newer pools keep their ObservationState (older ones: any key, see the pool). */
export function clmmObservationAddress(programId: string, pool: string): string {
  return findProgramAddress(['observation', base58.decodePubkey(pool)], programId).address;
}

/**
 * The tick arrays a swap of `pool` in direction `aToB` walks, in order: the initialized array
 * holding the current tick or, if it holds none, the first initialized one that way, then the
 * next initialized ones, `count` at most, from the pool's ±512-array bitmap.
 */
export function clmmSwapTickArrays(pool: ConcentratedPool, programId: string, aToB: boolean, count = CLMM_SWAP_TICK_ARRAYS): string[] {
  if (pool.dex !== Dex.Clmm || pool.address === undefined) throw invalidArgument('pool', pool.dex, 'a Raydium CLMM pool with its address is needed');
  const span = pool.tickSpacing * CLMM_TICK_ARRAY_SIZE;
  const bitmap = pool.tickArrayBitmap ?? [];
  const out: string[] = [];
  let at: number | undefined = Math.floor(pool.tick / span);
  while (out.length < count && at !== undefined && at >= MIN_BITMAP_ARRAY_INDEX && at <= MAX_BITMAP_ARRAY_INDEX) {
    at = nextBinArrayWithLiquidity(bitmap, aToB, at);
    if (at === undefined) break;
    out.push(clmmTickArrayAddress(programId, pool.address, at * span));
    at += aToB ? -1 : 1;
  }
  return out;
}

export interface ClmmSwapV2Accounts {
  programId: string;
  payer: string;
  ammConfig: string;
  pool: string;
  inputTokenAccount: string;
  outputTokenAccount: string;
  inputVault: string;
  outputVault: string;
  observationState: string;
  inputVaultMint: string;
  outputVaultMint: string;
  /** Passed before the tick arrays when given. */
  bitmapExtension?: string;
  tickArrays: readonly string[];
}

export function clmmSwapV2Instruction(accounts: ClmmSwapV2Accounts, args: ClmmSwapV2Data): InstructionInput {
  const w = (pubkey: string): AccountMetaInput => ({ pubkey, isSigner: false, isWritable: true });
  const r = (pubkey: string): AccountMetaInput => ({ pubkey, isSigner: false, isWritable: false });
  const metas: AccountMetaInput[] = [
    { pubkey: accounts.payer, isSigner: true, isWritable: false },
    r(accounts.ammConfig),
    w(accounts.pool),
    w(accounts.inputTokenAccount),
    w(accounts.outputTokenAccount),
    w(accounts.inputVault),
    w(accounts.outputVault),
    w(accounts.observationState),
    r(TOKEN_PROGRAM_ID),
    r(TOKEN_2022_PROGRAM_ID),
    r(MEMO_PROGRAM_ID),
    r(accounts.inputVaultMint),
    r(accounts.outputVaultMint),
  ];
  if (accounts.bitmapExtension !== undefined) metas.push(w(accounts.bitmapExtension));
  for (const key of accounts.tickArrays) metas.push(w(key));
  return { programId: accounts.programId, accounts: metas, data: encodeClmmSwapV2Data(args) };
}

export interface ClmmPoolSwapInput {
  programId: string;
  /** Decoded with its address, `ammConfig` and `observationKey`. */
  pool: ConcentratedPool;
  owner: string;
  /** The owner's token accounts for the pool's token A (mint 0) and B (mint 1). */
  tokenAccountA: string;
  tokenAccountB: string;
  aToB: boolean;
  mode: SwapMode;
  amount: bigint;
  otherAmountThreshold: bigint;
  /** Default: clmmSwapTickArrays(pool, programId, aToB). */
  tickArrays?: readonly string[];
}

/** swap_v2 on a decoded pool, with its derived accounts. */
export function clmmPoolSwapInstruction(input: ClmmPoolSwapInput): InstructionInput {
  const { pool, aToB } = input;
  if (pool.address === undefined || pool.ammConfig === undefined || pool.observationKey === undefined) {
    throw invalidArgument('pool', pool.address ?? null, 'a Raydium CLMM pool decoded with its address, AmmConfig and observation key is needed');
  }
  return clmmSwapV2Instruction(
    {
      programId: input.programId,
      payer: input.owner,
      ammConfig: pool.ammConfig,
      pool: pool.address,
      inputTokenAccount: aToB ? input.tokenAccountA : input.tokenAccountB,
      outputTokenAccount: aToB ? input.tokenAccountB : input.tokenAccountA,
      inputVault: aToB ? pool.vaultA : pool.vaultB,
      outputVault: aToB ? pool.vaultB : pool.vaultA,
      observationState: pool.observationKey,
      inputVaultMint: aToB ? pool.tokenA : pool.tokenB,
      outputVaultMint: aToB ? pool.tokenB : pool.tokenA,
      bitmapExtension: clmmBitmapExtensionAddress(input.programId, pool.address),
      tickArrays: input.tickArrays ?? clmmSwapTickArrays(pool, input.programId, aToB),
    },
    { amount: input.amount, otherAmountThreshold: input.otherAmountThreshold, sqrtPriceLimitX64: 0n, isBaseInput: input.mode === SwapMode.ExactIn },
  );
}
