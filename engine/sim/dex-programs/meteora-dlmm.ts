import { MEMO_PROGRAM_ID } from '../../chain/index.js';
import {
  DLMM_SWAP2_DISCRIMINATOR,
  DLMM_SWAP_EXACT_OUT2_DISCRIMINATOR,
  Dex,
  DlmmError,
  SwapFailure,
  anchorHasDiscriminator,
  decodeDlmmSwap2Data,
  dlmmEventAuthority,
  quoteDlmmWithBins,
  type BinArray,
  type DlmmLbPair,
} from '../../dex/index.js';
import { decodeBinArrayOf, decodePoolOf } from '../decoded-accounts.js';
import type { InvokeContext } from '../invoke-context.js';
import type { ArrayAccount } from '../swap-program.js';
import type { InstructionErrorValue } from '../tx-errors.js';
import {
  AnchorError,
  anchorFail,
  checkMint,
  checkProgramAccount,
  checkTokenAccount,
  hasAccountDiscriminator,
  isTokenProgram,
  readTokenAccount,
  type ErrorTable,
} from './program-support.js';
import { modeOf, settleSwap } from './swap-settlement.js';
import { ErrorCode, TpError } from '../../errors.js';

/**
 * Meteora DLMM `swap2` / `swap_exact_out2` over the simulator's pairs. The program's source is not
 * public: the accounts and their relations come from its IDL (has_one: reserves, mints, oracle and
 * bitmap extension belong to the pair; the event authority PDA; the program itself), the error
 * codes from the IDL's error list. Checks: accounts, owners and discriminators (LbPair, Oracle,
 * BinArrays), mut, relations, signer, token programs owning the mints, memo program, event
 * authority; the direction from the input account's mint; the bin arrays passed after the
 * transfer-hook accounts, each this pair's; then the engine's exact DLMM walk over them
 * (quoteDlmmWithBins, the same as quoteSwap), the threshold, the transfers and the pair's new
 * state (active bin, volatility, protocol fees, bins).
 *
 * Not modelled: the Oracle's samples (the account must exist and is not written), host fees,
 * bitmap extensions (a pair's arrays stay within ±512), Token-2022 transfer fees and hooks.
 */

const SWAP_UNITS = 55_000;
const POOL = 0;
const ORACLE_DISCRIMINATOR = Uint8Array.of(139, 194, 131, 179, 140, 179, 229, 244);

const ERRORS: ErrorTable = {
  [DlmmError.InvalidInput]: ['InvalidInput', 'Invalid input data'],
  [DlmmError.ExceededAmountSlippageTolerance]: ['ExceededAmountSlippageTolerance', 'Exceeded amount slippage tolerance'],
  [DlmmError.BinArrayNotFound]: ['BinArrayNotFound', 'Cannot find bin array'],
  [DlmmError.InvalidTokenMint]: ['InvalidTokenMint', 'Invalid token mint'],
  [DlmmError.PairInsufficientLiquidity]: ['PairInsufficientLiquidity', 'Pair insufficient liquidity'],
  [DlmmError.InvalidBinArray]: ['InvalidBinArray', 'Invalid bin array'],
  [DlmmError.InsufficientOutAmount]: ['InsufficientOutAmount', 'Insufficient out amount'],
  [DlmmError.PoolDisabled]: ['PoolDisabled', 'Pool disabled'],
  [DlmmError.InvalidRemainingAccountSlice]: ['InvalidRemainingAccountSlice', 'Invalid remaining account slice'],
};

/** Runs swap2 / swap_exact_out2; undefined when the data is neither. */
export function meteoraDlmmSwap(ctx: InvokeContext): InstructionErrorValue | null | undefined {
  const args = decodeDlmmSwap2Data(ctx.data);
  if (args === null) {
    const ours = anchorHasDiscriminator(ctx.data, DLMM_SWAP2_DISCRIMINATOR) || anchorHasDiscriminator(ctx.data, DLMM_SWAP_EXACT_OUT2_DISCRIMINATOR);
    return ours ? anchorFail(ctx, AnchorError.InstructionDidNotDeserialize) : undefined;
  }
  ctx.log(args.exactIn ? 'Instruction: Swap2' : 'Instruction: SwapExactOut2');
  ctx.consume(SWAP_UNITS);
  if (ctx.accountCount < 16) return anchorFail(ctx, AnchorError.AccountNotEnoughKeys);
  const program = ctx.programId;

  const err =
    checkProgramAccount(ctx, POOL, 'lb_pair', (d) => decodePoolOf(Dex.Dlmm, d, ctx.keys[POOL]!)) ??
    (ctx.keys[1] === program ? null : anchorFail(ctx, AnchorError.AccountNotInitialized, ERRORS, 'bin_array_bitmap_extension')) ??
    checkTokenAccount(ctx, 2, 'reserve_x') ??
    checkTokenAccount(ctx, 3, 'reserve_y') ??
    checkTokenAccount(ctx, 4, 'user_token_in') ??
    checkTokenAccount(ctx, 5, 'user_token_out') ??
    checkMint(ctx, 6, 'token_x_mint') ??
    checkMint(ctx, 7, 'token_y_mint') ??
    checkProgramAccount(ctx, 8, 'oracle', (d) => {
      if (!hasAccountDiscriminator({ data: d } as never, ORACLE_DISCRIMINATOR)) throw new TpError(ErrorCode.AccountDiscriminator, 'not an Oracle');
    });
  if (err !== null) return err;
  const oracleRecord = ctx.account(8)!;
  if (!hasAccountDiscriminator(oracleRecord, ORACLE_DISCRIMINATOR)) return anchorFail(ctx, AnchorError.AccountDiscriminatorMismatch, ERRORS, 'oracle');
  if (!ctx.isSigner(10)) return anchorFail(ctx, AnchorError.AccountNotSigner, ERRORS, 'user');
  for (const [i, name] of [[11, 'token_x_program'], [12, 'token_y_program']] as const) {
    if (!isTokenProgram(ctx.keys[i]!)) return anchorFail(ctx, AnchorError.InvalidProgramId, ERRORS, name);
  }
  if (ctx.keys[13] !== MEMO_PROGRAM_ID) return anchorFail(ctx, AnchorError.InvalidProgramId, ERRORS, 'memo_program');
  if (ctx.keys[14] !== dlmmEventAuthority(program)) return anchorFail(ctx, AnchorError.ConstraintSeeds, ERRORS, 'event_authority');
  if (ctx.keys[15] !== program) return anchorFail(ctx, AnchorError.ConstraintAddress, ERRORS, 'program');

  const poolRecord = ctx.account(POOL)!;
  const pair = decodePoolOf(Dex.Dlmm, poolRecord.data, ctx.keys[POOL]!) as DlmmLbPair;
  const relations: [number, string, string][] = [
    [2, 'reserve_x', pair.reserveX],
    [3, 'reserve_y', pair.reserveY],
    [6, 'token_x_mint', pair.tokenA],
    [7, 'token_y_mint', pair.tokenB],
    [8, 'oracle', pair.oracle],
  ];
  for (const [i, name, expected] of relations) if (ctx.keys[i] !== expected) return anchorFail(ctx, AnchorError.ConstraintHasOne, ERRORS, name);
  for (const [i, name] of [[POOL, 'lb_pair'], [2, 'reserve_x'], [3, 'reserve_y'], [4, 'user_token_in'], [5, 'user_token_out'], [8, 'oracle']] as const) {
    if (!ctx.isWritable(i)) return anchorFail(ctx, AnchorError.ConstraintMut, ERRORS, name);
  }
  if (ctx.account(6)!.owner !== ctx.keys[11] || ctx.account(7)!.owner !== ctx.keys[12]) return anchorFail(ctx, DlmmError.InvalidTokenMint, ERRORS);

  const userIn = readTokenAccount(ctx, 4)!;
  let swapForY: boolean;
  if (userIn.mint === pair.tokenA) swapForY = true;
  else if (userIn.mint === pair.tokenB) swapForY = false;
  else return anchorFail(ctx, DlmmError.InvalidTokenMint, ERRORS);

  // Remaining accounts: the transfer-hook accounts the slices name, then the bin arrays.
  let next = 16;
  for (const slice of args.slices) {
    if (slice.accountsType > 4) return anchorFail(ctx, DlmmError.InvalidRemainingAccountSlice, ERRORS);
    next += slice.length;
  }
  if (next > ctx.accountCount) return anchorFail(ctx, DlmmError.InvalidRemainingAccountSlice, ERRORS);
  const arrays: ArrayAccount[] = [];
  for (let i = next; i < ctx.accountCount; i++) {
    const record = ctx.account(i);
    if (record === null || record.owner !== program) return anchorFail(ctx, DlmmError.InvalidBinArray, ERRORS);
    let array: BinArray;
    try {
      array = decodeBinArrayOf(record.data, ctx.keys[i]!);
    } catch {
      return anchorFail(ctx, DlmmError.InvalidBinArray, ERRORS);
    }
    if (array.pool !== ctx.keys[POOL] || !ctx.isWritable(i)) return anchorFail(ctx, DlmmError.InvalidBinArray, ERRORS);
    arrays.push({ index: i, record, array });
  }

  const amount = args.exactIn ? args.first : args.second;
  if (amount === 0n) return anchorFail(ctx, DlmmError.InvalidInput, ERRORS);
  const walk = quoteDlmmWithBins(pair, { aToB: swapForY, mode: modeOf(args.exactIn), amount }, { binArrays: arrays.map((a) => a.array as BinArray), nowSeconds: ctx.blockTime });
  if (!walk.ok) {
    ctx.log(`swap refused: ${walk.message}`);
    switch (walk.reason) {
      case SwapFailure.InsufficientLiquidityData:
        return anchorFail(ctx, DlmmError.BinArrayNotFound, ERRORS);
      case SwapFailure.PoolDisabled:
        return anchorFail(ctx, DlmmError.PoolDisabled, ERRORS);
      case SwapFailure.ZeroAmount:
        return anchorFail(ctx, DlmmError.InsufficientOutAmount, ERRORS);
      default:
        return anchorFail(ctx, DlmmError.PairInsufficientLiquidity, ERRORS);
    }
  }
  if (args.exactIn ? walk.amountOut < args.second : walk.amountIn > args.first) {
    return anchorFail(ctx, DlmmError.ExceededAmountSlippageTolerance, ERRORS);
  }
  return settleSwap({
    ctx,
    userIn: 4,
    userOut: 5,
    vaultIn: swapForY ? 2 : 3,
    vaultOut: swapForY ? 3 : 2,
    user: ctx.keys[10]!,
    poolAuthority: ctx.keys[POOL]!,
    amountIn: walk.amountIn,
    amountOut: walk.amountOut,
    poolIndex: POOL,
    poolRecord,
    decoded: pair,
    aToB: swapForY,
    quote: walk,
    dlmm: walk,
    arrays,
  });
}
