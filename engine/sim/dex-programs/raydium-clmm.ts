import { MEMO_PROGRAM_ID, TOKEN_2022_PROGRAM_ID } from '../../chain/index.js';
import { createHash } from 'node:crypto';

import { ErrorCode, TpError } from '../../errors.js';
import {
  CLMM_SWAP_V2_DISCRIMINATOR,
  anchorHasDiscriminator as hasDiscriminator,
  CLMM_BITMAP_EXTENSION_SIZE,
  CLMM_TICK_ARRAY_ACCOUNT_SIZE,
  CLMM_TICK_ARRAY_SIZE,
  ClmmError,
  Dex,
  SwapFailure,
  decodeClmmSwapV2Data,
  nextBinArrayWithLiquidity,
  quoteSwap,
  withAmmConfig,
  type ConcentratedPool,
  type TickArray,
} from '../../dex/index.js';
import { TOKEN_PROGRAM_ID } from '../known-accounts.js';
import { decodeAmmConfigOf, decodePoolOf, decodeTickArrayOf } from '../decoded-accounts.js';
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
  keyAt,
  readTokenAccount,
  type ErrorTable,
} from './program-support.js';
import { modeOf, settleSwap } from './swap-settlement.js';

/**
 * Raydium CLMM `swap_v2` as the program runs it (raydium-clmm programs/amm/src/instructions/
 * swap_v2.rs and swap.rs swap_internal): Anchor's account checks (signer, owners and
 * discriminators, mut, AmmConfig and ObservationState addresses from the pool, the three programs,
 * vault mints), open_time, the vaults for the direction (input vault's mint = mint 0 → zero for
 * one), the remaining accounts read by size (tick arrays, the bitmap extension, anything else ends
 * them), the tick arrays skipped up to the first one the swap starts in; then the engine's exact
 * CL math over the arrays from there on, the threshold, the transfers and the pool's new price.
 *
 * Not modelled: a non-zero sqrt_price_limit_x64 (the simulator refuses it with
 * SqrtPriceLimitOverflow rather than fill partially), Token-2022 transfer fees, the observation
 * and fee-growth updates.
 */

const SWAP_UNITS = 48_000;
const POOL = 2;
const OPEN_TIME = 1080;
const OBSERVATION_DISCRIMINATOR = new Uint8Array(createHash('sha256').update('account:ObservationState').digest().subarray(0, 8));
const OBSERVATION_POOL_ID = 19;
const EXTENSION_DISCRIMINATOR = Uint8Array.of(60, 150, 36, 219, 97, 128, 139, 153);

const ERRORS: ErrorTable = {
  [ClmmError.NotApproved]: ['NotApproved', 'Not approved'],
  [ClmmError.SqrtPriceLimitOverflow]: ['SqrtPriceLimitOverflow', 'Square root price limit overflow'],
  [ClmmError.LiquidityInsufficient]: ['LiquidityInsufficient', 'Liquidity insufficient'],
  [ClmmError.TooLittleOutputReceived]: ['TooLittleOutputReceived', 'Too little output received'],
  [ClmmError.TooMuchInputPaid]: ['TooMuchInputPaid', 'Too much input paid'],
  [ClmmError.ZeroAmountSpecified]: ['ZeroAmountSpecified', 'Swap special amount can not be zero'],
  [ClmmError.InvalidInputPoolVault]: ['InvalidInputPoolVault', 'Input pool vault is invalid'],
  [ClmmError.TooSmallInputOrOutputAmount]: ['TooSmallInputOrOutputAmount', 'Swap input or output amount is too small'],
  [ClmmError.NotEnoughTickArrayAccount]: ['NotEnoughTickArrayAccount', 'Not enough tick array account'],
  [ClmmError.InvalidFirstTickArrayAccount]: ['InvalidFirstTickArrayAccount', 'Invalid first tick array account'],
};

/** Runs swap_v2; undefined when the data is not swap_v2 (the caller tries other formats). */
export function raydiumClmmSwap(ctx: InvokeContext): InstructionErrorValue | null | undefined {
  const args = decodeClmmSwapV2Data(ctx.data);
  if (args === null) {
    // swap_v2's discriminator with data too short for its arguments.
    return hasDiscriminator(ctx.data, CLMM_SWAP_V2_DISCRIMINATOR) ? anchorFail(ctx, AnchorError.InstructionDidNotDeserialize) : undefined;
  }
  ctx.log('Instruction: SwapV2');
  ctx.consume(SWAP_UNITS);
  if (ctx.accountCount < 13) return anchorFail(ctx, AnchorError.AccountNotEnoughKeys);

  // Account types, in the struct's order.
  if (!ctx.isSigner(0)) return anchorFail(ctx, AnchorError.AccountNotSigner, ERRORS, 'payer');
  let err =
    checkProgramAccount(ctx, 1, 'amm_config', (d) => decodeAmmConfigOf(d, ctx.keys[1]!)) ??
    checkProgramAccount(ctx, POOL, 'pool_state', (d) => decodePoolOf(Dex.Clmm, d, ctx.keys[POOL]!)) ??
    checkTokenAccount(ctx, 3, 'input_token_account') ??
    checkTokenAccount(ctx, 4, 'output_token_account') ??
    checkTokenAccount(ctx, 5, 'input_vault') ??
    checkTokenAccount(ctx, 6, 'output_vault') ??
    checkProgramAccount(ctx, 7, 'observation_state', (d) => {
      if (d.length < OBSERVATION_POOL_ID + 32 || !d.subarray(0, 8).every((b, i) => b === OBSERVATION_DISCRIMINATOR[i])) {
        throw new TpError(ErrorCode.AccountDiscriminator, 'not an ObservationState');
      }
    });
  if (err !== null) return err;
  if (ctx.keys[8] !== TOKEN_PROGRAM_ID) return anchorFail(ctx, AnchorError.InvalidProgramId, ERRORS, 'token_program');
  if (ctx.keys[9] !== TOKEN_2022_PROGRAM_ID) return anchorFail(ctx, AnchorError.InvalidProgramId, ERRORS, 'token_program_2022');
  if (ctx.keys[10] !== MEMO_PROGRAM_ID) return anchorFail(ctx, AnchorError.InvalidProgramId, ERRORS, 'memo_program');
  err = checkMint(ctx, 11, 'input_vault_mint') ?? checkMint(ctx, 12, 'output_vault_mint');
  if (err !== null) return err;

  // Constraints.
  const poolRecord = ctx.account(POOL)!;
  const decoded = decodePoolOf(Dex.Clmm, poolRecord.data, ctx.keys[POOL]!) as ConcentratedPool;
  if (ctx.keys[1] !== decoded.ammConfig) return anchorFail(ctx, AnchorError.ConstraintAddress, ERRORS, 'amm_config');
  for (const [i, name] of [[POOL, 'pool_state'], [3, 'input_token_account'], [4, 'output_token_account'], [5, 'input_vault'], [6, 'output_vault'], [7, 'observation_state']] as const) {
    if (!ctx.isWritable(i)) return anchorFail(ctx, AnchorError.ConstraintMut, ERRORS, name);
  }
  if (ctx.keys[7] !== decoded.observationKey) return anchorFail(ctx, AnchorError.ConstraintAddress, ERRORS, 'observation_state');
  const inputVault = readTokenAccount(ctx, 5)!;
  const outputVault = readTokenAccount(ctx, 6)!;
  if (ctx.keys[11] !== inputVault.mint) return anchorFail(ctx, AnchorError.ConstraintAddress, ERRORS, 'input_vault_mint');
  if (ctx.keys[12] !== outputVault.mint) return anchorFail(ctx, AnchorError.ConstraintAddress, ERRORS, 'output_vault_mint');

  // exact_internal_v2
  const openTime = new DataView(poolRecord.data.buffer, poolRecord.data.byteOffset).getBigUint64(OPEN_TIME, true);
  if (!(ctx.blockTime > openTime)) return anchorFail(ctx, AnchorError.RequireGtViolated, ERRORS);
  const zeroForOne = inputVault.mint === decoded.tokenA;
  const vaultsMatch = zeroForOne
    ? ctx.keys[5] === decoded.vaultA && ctx.keys[6] === decoded.vaultB
    : ctx.keys[5] === decoded.vaultB && ctx.keys[6] === decoded.vaultA;
  if (!vaultsMatch) return anchorFail(ctx, ClmmError.InvalidInputPoolVault, ERRORS);

  // Remaining accounts by size: tick arrays, the bitmap extension; anything else ends them.
  const arrays: ArrayAccount[] = [];
  for (let i = 13; i < ctx.accountCount; i++) {
    const record = ctx.account(i);
    const size = record?.data.length ?? 0;
    if (size === CLMM_TICK_ARRAY_ACCOUNT_SIZE) {
      const e = checkProgramAccount(ctx, i, 'tick_array', (d) => decodeTickArrayOf(Dex.Clmm, d, ctx.keys[i]!, decoded.tickSpacing));
      if (e !== null) return e;
      arrays.push({ index: i, record: record!, array: decodeTickArrayOf(Dex.Clmm, record!.data, ctx.keys[i]!, decoded.tickSpacing) });
    } else if (size === CLMM_BITMAP_EXTENSION_SIZE) {
      if (record!.owner !== ctx.programId) return anchorFail(ctx, AnchorError.AccountOwnedByWrongProgram, ERRORS, 'tickarray_bitmap_extension');
      if (!hasAccountDiscriminator(record!, EXTENSION_DISCRIMINATOR)) return anchorFail(ctx, AnchorError.AccountDiscriminatorMismatch, ERRORS, 'tickarray_bitmap_extension');
      if (keyAt(record!.data, 8) !== ctx.keys[POOL]) return anchorFail(ctx, AnchorError.RequireKeysEqViolated, ERRORS);
    } else {
      break;
    }
  }

  // swap_internal
  if (args.amount === 0n) return anchorFail(ctx, ClmmError.ZeroAmountSpecified, ERRORS);
  if (decoded.swapDisabled === true) return anchorFail(ctx, ClmmError.NotApproved, ERRORS);
  if (args.sqrtPriceLimitX64 !== 0n) {
    ctx.log('the simulator does not model a sqrt_price_limit_x64 other than 0');
    return anchorFail(ctx, ClmmError.SqrtPriceLimitOverflow, ERRORS);
  }
  const observation = ctx.account(7)!;
  if (keyAt(observation.data, OBSERVATION_POOL_ID) !== ctx.keys[POOL]) return anchorFail(ctx, AnchorError.RequireKeysEqViolated, ERRORS);
  const span = decoded.tickSpacing * CLMM_TICK_ARRAY_SIZE;
  const firstValid = nextBinArrayWithLiquidity(decoded.tickArrayBitmap ?? [], zeroForOne, Math.floor(decoded.tick / span));
  if (firstValid === undefined) return anchorFail(ctx, ClmmError.LiquidityInsufficient, ERRORS);
  const start = arrays.findIndex((a) => (a.array as TickArray).startTickIndex === firstValid * span);
  if (start < 0) return anchorFail(ctx, ClmmError.NotEnoughTickArrayAccount, ERRORS);
  const walked = arrays.slice(start);
  for (const a of walked) {
    if (a.array.pool !== ctx.keys[POOL]) return anchorFail(ctx, AnchorError.RequireKeysEqViolated, ERRORS);
  }

  const pool = withAmmConfig(decoded, decodeAmmConfigOf(ctx.account(1)!.data, ctx.keys[1]!));
  const quote = quoteSwap(pool, { aToB: zeroForOne, mode: modeOf(args.isBaseInput), amount: args.amount }, { tickArrays: walked.map((a) => a.array as TickArray), nowSeconds: ctx.blockTime });
  if (!quote.ok) {
    ctx.log(`swap refused: ${quote.message}`);
    switch (quote.reason) {
      case SwapFailure.InsufficientLiquidityData:
        return anchorFail(ctx, ClmmError.NotEnoughTickArrayAccount, ERRORS);
      case SwapFailure.ZeroAmount:
        return anchorFail(ctx, ClmmError.TooSmallInputOrOutputAmount, ERRORS);
      case SwapFailure.PoolDisabled:
        return anchorFail(ctx, ClmmError.NotApproved, ERRORS);
      default:
        return anchorFail(ctx, ClmmError.LiquidityInsufficient, ERRORS);
    }
  }
  if (args.isBaseInput ? quote.amountOut < args.otherAmountThreshold : quote.amountIn > args.otherAmountThreshold) {
    return anchorFail(ctx, args.isBaseInput ? ClmmError.TooLittleOutputReceived : ClmmError.TooMuchInputPaid, ERRORS);
  }
  return settleSwap({
    ctx,
    userIn: 3,
    userOut: 4,
    vaultIn: 5,
    vaultOut: 6,
    user: ctx.keys[0]!,
    poolAuthority: ctx.keys[POOL]!,
    amountIn: quote.amountIn,
    amountOut: quote.amountOut,
    poolIndex: POOL,
    poolRecord,
    decoded,
    aToB: zeroForOne,
    quote,
    arrays: walked,
  });
}
