import { MEMO_PROGRAM_ID, base58, findProgramAddress } from '../../chain/index.js';
import {
  Dex,
  MAX_TICK,
  MIN_TICK,
  SwapFailure,
  WHIRLPOOL_SWAP_V2_DISCRIMINATOR,
  WHIRLPOOL_TICK_ARRAY_SIZE,
  WhirlpoolAccountsType,
  WhirlpoolError,
  anchorHasDiscriminator,
  decodeWhirlpoolSwapV2Data,
  quoteSwap,
  whirlpoolOracleAddress,
  type ConcentratedPool,
  type TickArray,
} from '../../dex/index.js';
import { decodePoolOf, decodeTickArrayOf } from '../decoded-accounts.js';
import type { InvokeContext } from '../invoke-context.js';
import { SYSTEM_PROGRAM_ID } from '../known-accounts.js';
import type { ArrayAccount } from '../swap-program.js';
import type { InstructionErrorValue } from '../tx-errors.js';
import {
  AnchorError,
  anchorFail,
  checkMint,
  checkProgramAccount,
  checkTokenAccount,
  isTokenProgram,
  readTokenAccount,
  type ErrorTable,
} from './program-support.js';
import { modeOf, settleSwap } from './swap-settlement.js';

/**
 * Orca Whirlpool `swap_v2` as the program runs it (orca-so/whirlpools programs/whirlpool/src/
 * instructions/v2/swap.rs, util/sparse_swap.rs): Anchor's account checks (token programs = the
 * mints' owners, memo program, signer, the Whirlpool, mints and vaults from it, owner accounts of
 * the right mints, mut, the oracle PDA), the remaining-accounts slices (transfer hooks A/B and
 * supplemental tick arrays), then the sparse tick-array sequence: every passed array merged and
 * deduplicated, initialized ones loaded (owner, discriminator, this Whirlpool's), and the up to
 * three start indexes the direction walks (shifted one array up for b→a at an array's top tick)
 * taken from them, an absent array at its PDA standing for an empty one; then the engine's exact
 * CL math on that sequence, the threshold, the transfers and the pool's new price.
 *
 * Not modelled: a non-zero sqrt_price_limit (refused with SqrtPriceOutOfBounds rather than a
 * partial fill), adaptive fees (their Oracle), Token-2022 transfer fees and hooks, fee growth and
 * reward updates.
 */

const SWAP_UNITS = 45_000;
const POOL = 4;

const ERRORS: ErrorTable = {
  [WhirlpoolError.SqrtPriceOutOfBounds]: ['SqrtPriceOutOfBounds', 'Provided sqrt price out of bounds'],
  [WhirlpoolError.InvalidTickArraySequence]: ['InvalidTickArraySequence', 'Invalid tick array sequence provided for instruction.'],
  [WhirlpoolError.ZeroTradableAmount]: ['ZeroTradableAmount', 'There are no tradable amount to swap.'],
  [WhirlpoolError.AmountOutBelowMinimum]: ['AmountOutBelowMinimum', 'Amount out below minimum threshold'],
  [WhirlpoolError.AmountInAboveMaximum]: ['AmountInAboveMaximum', 'Amount in above maximum threshold'],
  [WhirlpoolError.TickArraySequenceInvalidIndex]: ['TickArraySequenceInvalidIndex', 'Invalid index for tick array sequence'],
  [WhirlpoolError.RemainingAccountsInvalidSlice]: ['RemainingAccountsInvalidSlice', 'Invalid remaining accounts'],
  [WhirlpoolError.RemainingAccountsInsufficient]: ['RemainingAccountsInsufficient', 'Insufficient remaining accounts'],
  [WhirlpoolError.DifferentWhirlpoolTickArrayAccount]: ['DifferentWhirlpoolTickArrayAccount', 'TickArray account for different whirlpool provided'],
  [WhirlpoolError.PartialFillError]: ['PartialFillError', 'Trade resulted in partial fill'],
  6053: ['RemainingAccountsDuplicatedAccountsType', 'Same accounts type is provided more than once'],
};

const VALID_SLICES: readonly number[] = [WhirlpoolAccountsType.TransferHookA, WhirlpoolAccountsType.TransferHookB, WhirlpoolAccountsType.SupplementalTickArrays];

/** `Tick::check_is_valid_start_tick`. */
function validStart(start: number, tickSpacing: number): boolean {
  const span = WHIRLPOOL_TICK_ARRAY_SIZE * tickSpacing;
  if (start % span !== 0) return false;
  const min = MIN_TICK - ((MIN_TICK % span) + span);
  return start >= min && start <= MAX_TICK;
}

/** `get_start_tick_indexes`: the arrays a swap in this direction walks. */
function startIndexes(pool: ConcentratedPool, aToB: boolean): number[] {
  const span = WHIRLPOOL_TICK_ARRAY_SIZE * pool.tickSpacing;
  const base = Math.floor(pool.tick / span) * span;
  const offsets = aToB ? [0, -1, -2] : pool.tick + pool.tickSpacing >= base + span ? [1, 2, 3] : [0, 1, 2];
  return offsets.map((o) => base + o * span).filter((s) => validStart(s, pool.tickSpacing));
}

function emptyArray(pool: string, startTickIndex: number, tickSpacing: number): TickArray {
  const ticks = Array.from({ length: WHIRLPOOL_TICK_ARRAY_SIZE }, (_, i) => ({ index: startTickIndex + i * tickSpacing, initialized: false, liquidityNet: 0n, liquidityGross: 0n }));
  return { dex: Dex.Whirlpool, pool, startTickIndex, ticks };
}

/** Runs swap_v2; undefined when the data is not swap_v2. */
export function orcaWhirlpoolSwap(ctx: InvokeContext): InstructionErrorValue | null | undefined {
  const args = decodeWhirlpoolSwapV2Data(ctx.data);
  if (args === null) {
    return anchorHasDiscriminator(ctx.data, WHIRLPOOL_SWAP_V2_DISCRIMINATOR) ? anchorFail(ctx, AnchorError.InstructionDidNotDeserialize) : undefined;
  }
  ctx.log('Instruction: SwapV2');
  ctx.consume(SWAP_UNITS);
  if (ctx.accountCount < 15) return anchorFail(ctx, AnchorError.AccountNotEnoughKeys);

  for (const [i, name] of [[0, 'token_program_a'], [1, 'token_program_b']] as const) {
    if (!isTokenProgram(ctx.keys[i]!)) return anchorFail(ctx, AnchorError.InvalidProgramId, ERRORS, name);
  }
  if (ctx.keys[2] !== MEMO_PROGRAM_ID) return anchorFail(ctx, AnchorError.InvalidProgramId, ERRORS, 'memo_program');
  if (!ctx.isSigner(3)) return anchorFail(ctx, AnchorError.AccountNotSigner, ERRORS, 'token_authority');
  const err =
    checkProgramAccount(ctx, POOL, 'whirlpool', (d) => decodePoolOf(Dex.Whirlpool, d, ctx.keys[POOL]!)) ??
    checkMint(ctx, 5, 'token_mint_a') ??
    checkMint(ctx, 6, 'token_mint_b') ??
    checkTokenAccount(ctx, 7, 'token_owner_account_a') ??
    checkTokenAccount(ctx, 8, 'token_vault_a') ??
    checkTokenAccount(ctx, 9, 'token_owner_account_b') ??
    checkTokenAccount(ctx, 10, 'token_vault_b');
  if (err !== null) return err;

  const poolRecord = ctx.account(POOL)!;
  const decoded = decodePoolOf(Dex.Whirlpool, poolRecord.data, ctx.keys[POOL]!) as ConcentratedPool;
  if (ctx.keys[0] !== ctx.account(5)!.owner) return anchorFail(ctx, AnchorError.ConstraintAddress, ERRORS, 'token_program_a');
  if (ctx.keys[1] !== ctx.account(6)!.owner) return anchorFail(ctx, AnchorError.ConstraintAddress, ERRORS, 'token_program_b');
  if (!ctx.isWritable(POOL)) return anchorFail(ctx, AnchorError.ConstraintMut, ERRORS, 'whirlpool');
  if (ctx.keys[5] !== decoded.tokenA) return anchorFail(ctx, AnchorError.ConstraintAddress, ERRORS, 'token_mint_a');
  if (ctx.keys[6] !== decoded.tokenB) return anchorFail(ctx, AnchorError.ConstraintAddress, ERRORS, 'token_mint_b');
  const checks: [number, string, () => boolean, number][] = [
    [7, 'token_owner_account_a', () => readTokenAccount(ctx, 7)!.mint === decoded.tokenA, AnchorError.ConstraintRaw],
    [8, 'token_vault_a', () => ctx.keys[8] === decoded.vaultA, AnchorError.ConstraintAddress],
    [9, 'token_owner_account_b', () => readTokenAccount(ctx, 9)!.mint === decoded.tokenB, AnchorError.ConstraintRaw],
    [10, 'token_vault_b', () => ctx.keys[10] === decoded.vaultB, AnchorError.ConstraintAddress],
  ];
  for (const [i, name, ok, code] of checks) {
    if (!ctx.isWritable(i)) return anchorFail(ctx, AnchorError.ConstraintMut, ERRORS, name);
    if (!ok()) return anchorFail(ctx, code, ERRORS, name);
  }
  for (const i of [11, 12, 13, 14]) {
    if (!ctx.isWritable(i)) return anchorFail(ctx, AnchorError.ConstraintMut, ERRORS, i === 14 ? 'oracle' : `tick_array_${i - 11}`);
  }
  if (ctx.keys[14] !== whirlpoolOracleAddress(ctx.programId, ctx.keys[POOL]!)) return anchorFail(ctx, AnchorError.ConstraintSeeds, ERRORS, 'oracle');

  // parse_remaining_accounts
  let next = 15;
  const supplemental: number[] = [];
  const seen = new Set<number>();
  for (const slice of args.remainingAccounts ?? []) {
    if (!VALID_SLICES.includes(slice.accountsType)) return anchorFail(ctx, WhirlpoolError.RemainingAccountsInvalidSlice, ERRORS);
    if (seen.has(slice.accountsType)) return anchorFail(ctx, 6053, ERRORS);
    seen.add(slice.accountsType);
    if (next + slice.length > ctx.accountCount) return anchorFail(ctx, WhirlpoolError.RemainingAccountsInsufficient, ERRORS);
    for (let k = 0; k < slice.length; k++, next++) if (slice.accountsType === WhirlpoolAccountsType.SupplementalTickArrays) supplemental.push(next);
  }

  // SparseSwapTickSequenceBuilder: merge, dedupe by key, load the initialized ones.
  const candidates = new Map<string, number>();
  for (const i of [11, 12, 13, ...supplemental]) if (!candidates.has(ctx.keys[i]!)) candidates.set(ctx.keys[i]!, i);
  const loaded: ArrayAccount[] = [];
  for (const [key, i] of candidates) {
    const record = ctx.account(i);
    if (record === null || (record.owner === SYSTEM_PROGRAM_ID && record.data.length === 0)) continue;
    const e = checkProgramAccount(ctx, i, 'tick_array', (d) => decodeTickArrayOf(Dex.Whirlpool, d, key, decoded.tickSpacing));
    if (e !== null) return e;
    const array = decodeTickArrayOf(Dex.Whirlpool, record.data, key, decoded.tickSpacing);
    if (array.pool !== ctx.keys[POOL]) return anchorFail(ctx, WhirlpoolError.DifferentWhirlpoolTickArrayAccount, ERRORS);
    loaded.push({ index: i, record, array });
  }
  const poolBytes = base58.decodePubkey(ctx.keys[POOL]!);
  const sequence: ArrayAccount[] = [];
  const tickArrays: TickArray[] = [];
  for (const start of startIndexes(decoded, args.aToB)) {
    const found = loaded.find((a) => (a.array as TickArray).startTickIndex === start);
    if (found !== undefined) {
      sequence.push(found);
      tickArrays.push(found.array as TickArray);
      continue;
    }
    const pda = findProgramAddress(['tick_array', poolBytes, String(start)], ctx.programId).address;
    if (!candidates.has(pda)) break;
    tickArrays.push(emptyArray(ctx.keys[POOL]!, start, decoded.tickSpacing));
  }
  if (tickArrays.length === 0) return anchorFail(ctx, WhirlpoolError.InvalidTickArraySequence, ERRORS);

  if (args.sqrtPriceLimit !== 0n) {
    ctx.log('the simulator does not model a sqrt_price_limit other than 0');
    return anchorFail(ctx, WhirlpoolError.SqrtPriceOutOfBounds, ERRORS);
  }
  const quote = quoteSwap(decoded, { aToB: args.aToB, mode: modeOf(args.amountSpecifiedIsInput), amount: args.amount }, { tickArrays, nowSeconds: ctx.blockTime });
  if (!quote.ok) {
    ctx.log(`swap refused: ${quote.message}`);
    switch (quote.reason) {
      case SwapFailure.InsufficientLiquidityData:
        return anchorFail(ctx, WhirlpoolError.TickArraySequenceInvalidIndex, ERRORS);
      case SwapFailure.ZeroAmount:
        return anchorFail(ctx, WhirlpoolError.ZeroTradableAmount, ERRORS);
      default:
        return anchorFail(ctx, WhirlpoolError.PartialFillError, ERRORS);
    }
  }
  if (args.amountSpecifiedIsInput ? quote.amountOut < args.otherAmountThreshold : quote.amountIn > args.otherAmountThreshold) {
    return anchorFail(ctx, args.amountSpecifiedIsInput ? WhirlpoolError.AmountOutBelowMinimum : WhirlpoolError.AmountInAboveMaximum, ERRORS);
  }
  return settleSwap({
    ctx,
    userIn: args.aToB ? 7 : 9,
    userOut: args.aToB ? 9 : 7,
    vaultIn: args.aToB ? 8 : 10,
    vaultOut: args.aToB ? 10 : 8,
    user: ctx.keys[3]!,
    poolAuthority: ctx.keys[POOL]!,
    amountIn: quote.amountIn,
    amountOut: quote.amountOut,
    poolIndex: POOL,
    poolRecord,
    decoded,
    aToB: args.aToB,
    quote,
    arrays: sequence,
  });
}
