import type { AccountMetaInput, InstructionInput } from '../chain/index.js';
import {
  Dex,
  SwapFailure,
  SwapMode,
  binArrayIndexOf,
  calculatePreFeeAmount,
  epochFee,
  type DecodedMint,
  quoteDlmmWithBins,
  quoteSwap,
  withAmmConfig,
  withAmmVaultAccounts,
  type AmmPool,
  type BinArray,
  type ConcentratedPool,
  type DecodedPool,
  type DlmmBinArray,
  type DlmmBinUpdate,
  type DlmmLbPair,
  type SwapContext,
  type SwapQuote,
  type SwapRefusal,
  type TickArray,
} from '../dex/index.js';
import type { AccountRecord } from './chain-backend.js';
import { decodeAmmConfigOf, decodeBinArrayOf, decodeMintOf, decodePoolOf, decodeTickArrayOf, rememberBinArray, rememberPool } from './decoded-accounts.js';
import type { InvokeContext, ProgramHandler } from './invoke-context.js';
import type { SimPoolInfo } from './pool-genesis.js';
import { pubkeyBytes } from './key-cache.js';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from './known-accounts.js';
import {
  writeBinAmounts,
  writeClmmPrice,
  writeLbPairState,
  writeWhirlpoolPrice,
  type ClPriceState,
} from './pool-state-writes.js';
import { isTokenAccount, tokenAccountMintIs, tokenAccountOwnerIs } from './spl-token.js';
import { moveTokens, transferFeeOf } from './token-transfer.js';
import { IxError, type InstructionErrorValue } from './tx-errors.js';

/**
 * The simulator's swap instruction: one format for the four pool kinds, executed with the engine's
 * exact swap math, so the chain's pools move exactly as `quoteSwap` says they would.
 *
 * Program id: the pool's DEX program (DEFAULT_PROGRAM_IDS: Raydium AMM v4 for dexa_amm, Raydium
 * CLMM, Orca Whirlpool, Meteora DLMM).
 *
 * Accounts:
 *   0  trader                   signer, writable
 *   1  pool                     writable
 *   2  vault A                  writable (the pool's token A vault / DLMM reserve_x)
 *   3  vault B                  writable
 *   4  trader token account A   writable (mint A, owned by the trader)
 *   5  trader token account B   writable
 *   6  token program            SPL Token
 *   7… by kind: dexa_amm none; dexc_whirlpool tick arrays (writable); dexa_clmm the AmmConfig
 *      (readonly) then tick arrays (writable); dexb_dlmm bin arrays (writable). The swap can only
 *      walk the arrays it is given, as on chain: pass the arrays from the current one onwards in
 *      the swap direction.
 *
 * swap_v2 (tag 10), for pools of Token-2022 mints (and any other pool), as Whirlpool's and Raydium's
 * v2 swaps pass them: accounts 0..5 as above, then
 *   6  token program A          SPL Token or Token-2022: the owner of mint A
 *   7  token program B
 *   8  mint A                   readonly (the transfer fee is read from it)
 *   9  mint B
 *   10… the kind's extra accounts, as 7… above.
 * The v1 swap refuses a pool whose vaults the SPL Token program does not own (IncorrectProgramId).
 *
 * Transfer fees (swap_v2 on a Token-2022 mint with TransferFeeConfig, the fee of the block's
 * epoch), as Whirlpool's `swap_with_transfer_fee_extension` does: exact in, the trader sends
 * `amount`, the pool swaps `amount - fee_in` and sends `out`, the trader receives `out - fee_out`,
 * which must reach the threshold; exact out, the pool sends the smallest amount that arrives as
 * `amount`, swaps for it, and the trader sends the smallest amount that arrives as the pool's
 * input, which must not exceed the threshold. Each transfer withholds its fee at the destination's
 * TransferFeeAmount, as the token program does (token-transfer.ts).
 *
 * Data (19 bytes, little-endian):
 *   0  u8   tag = 9 (swap) or 10 (swap_v2)
 *   1  u64  amount                   input for exact in, output for exact out
 *   9  u64  other_amount_threshold   exact in: minimum output; exact out: maximum input
 *   17 u8   a_to_b                   1: token A in, token B out
 *   18 u8   exact_in                 1: exact in, 0: exact out
 *
 * Execution: decode the pool (and its arrays / AmmConfig) with the engine's decoders, quote with
 * `quoteSwap` at the block time (DLMM: `quoteDlmmWithBins`, the same walk), check the threshold,
 * move the tokens (trader → vault in, vault out → trader), and write the fields the swap changed
 * into the accounts, as the programs do (pool-state-writes.ts): AMM reserves; CL sqrt price, tick
 * and liquidity (after crossed ticks); DLMM the active id, the volatility parameters, protocol
 * fees and each traded bin's amounts. Fee growth and reward accounting are not kept.
 *
 * Errors, as `{InstructionError: [index, {Custom: n}]}` (or a builtin InstructionError):
 *   Custom 6000 InvalidPool           the pool account is not a pool of this program
 *   Custom 6001 SlippageExceeded      output below / input above other_amount_threshold
 *   Custom 6002 InvalidVault          vault accounts are not the pool's
 *   Custom 6003 InvalidTokenAccount   trader token accounts: wrong mint or owner, or not token accounts
 *   Custom 6004 MissingSwapAccounts   the swap needs tick/bin arrays (or the AmmConfig) not passed
 *   Custom 6005 SwapRefused           the pool cannot do this swap (no liquidity, zero output, disabled,
 *                                     a transfer fee that takes the whole input)
 *   Custom 6006 InvalidMint           swap_v2: mint accounts are not the pool's, or not mints
 *   Custom 2000 ConstraintMut         pool, vaults or trader token accounts not writable (Anchor's code)
 *   Custom 1    (SPL Token InsufficientFunds) the trader's input account holds less than the input
 *   InvalidInstructionData, NotEnoughAccountKeys, MissingRequiredSignature, IncorrectProgramId
 *   (a token program that is not the owner of its mint, vaults or trader accounts)
 */

export const SWAP_INSTRUCTION_TAG = 9;
export const SWAP_V2_INSTRUCTION_TAG = 10;
export const SWAP_DATA_SIZE = 19;
/** Accounts before the kind-specific ones. */
export const SWAP_FIXED_ACCOUNTS = 7;
export const SWAP_V2_FIXED_ACCOUNTS = 10;

export const SwapProgramError = {
  InvalidPool: 6000,
  SlippageExceeded: 6001,
  InvalidVault: 6002,
  InvalidTokenAccount: 6003,
  MissingSwapAccounts: 6004,
  SwapRefused: 6005,
  InvalidMint: 6006,
  ConstraintMut: 2000,
} as const;

export interface SwapInstructionData {
  amount: bigint;
  otherAmountThreshold: bigint;
  aToB: boolean;
  exactIn: boolean;
}

export function encodeSwapData(args: SwapInstructionData, tag: number = SWAP_INSTRUCTION_TAG): Uint8Array {
  const data = new Uint8Array(SWAP_DATA_SIZE);
  const view = new DataView(data.buffer);
  data[0] = tag;
  view.setBigUint64(1, args.amount, true);
  view.setBigUint64(9, args.otherAmountThreshold, true);
  data[17] = args.aToB ? 1 : 0;
  data[18] = args.exactIn ? 1 : 0;
  return data;
}

/** The arguments of a swap (tag 9) or swap_v2 (tag 10) instruction; null for other data. */
export function decodeSwapData(data: Uint8Array): SwapInstructionData | null {
  const tag = data[0];
  if (data.length !== SWAP_DATA_SIZE || (tag !== SWAP_INSTRUCTION_TAG && tag !== SWAP_V2_INSTRUCTION_TAG) || data[17]! > 1 || data[18]! > 1) return null;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  return { amount: view.getBigUint64(1, true), otherAmountThreshold: view.getBigUint64(9, true), aToB: data[17] === 1, exactIn: data[18] === 1 };
}

export interface SwapAccounts {
  programId: string;
  trader: string;
  pool: string;
  vaultA: string;
  vaultB: string;
  traderTokenA: string;
  traderTokenB: string;
  /** The kind's extra accounts in order (AmmConfig first for dexa_clmm, then arrays). */
  extra: readonly string[];
  /** Raydium CLMM: the AmmConfig, passed read-only before the arrays. */
  ammConfig?: string;
  /** swap_v2: the mints and their programs; the v1 swap when absent. */
  v2?: { mintA: string; mintB: string; tokenProgramA: string; tokenProgramB: string };
}

/**
 * The swap accounts of `info` for a trader: swap_v2 when either of its mints is a Token-2022
 * mint, the v1 swap otherwise.
 */
export function swapAccountsOf(info: SimPoolInfo, trader: string, traderTokenA: string, traderTokenB: string, extra: readonly string[]): SwapAccounts {
  const accounts: SwapAccounts = { programId: info.programId, trader, pool: info.address, vaultA: info.vaultA, vaultB: info.vaultB, traderTokenA, traderTokenB, extra };
  if (info.ammConfig !== undefined) accounts.ammConfig = info.ammConfig;
  if (info.tokenA.programId !== undefined || info.tokenB.programId !== undefined) {
    accounts.v2 = {
      mintA: info.tokenA.mint,
      mintB: info.tokenB.mint,
      tokenProgramA: info.tokenA.programId ?? TOKEN_PROGRAM_ID,
      tokenProgramB: info.tokenB.programId ?? TOKEN_PROGRAM_ID,
    };
  }
  return accounts;
}

/** Tick or bin arrays a swap passes by default (the protocols' usual three). */
export const SWAP_ARRAYS = 3;

/**
 * The addresses of the tick arrays (CL) or bin arrays (DLMM) from the one holding the pool's
 * current tick or active bin onwards in the swap's direction, `count` of them at most.
 */
export function swapArrays(info: SimPoolInfo, pool: DecodedPool, aToB: boolean, count = SWAP_ARRAYS): string[] {
  let current: number;
  if (pool.dex === Dex.Amm) return [];
  if (pool.dex === Dex.Dlmm) current = binArrayIndexOf(pool.activeId);
  else {
    const span = info.tickSpacing! * info.ticksPerArray!;
    current = Math.floor(pool.tick / span) * span;
  }
  const out: string[] = [];
  const arrays = info.arrays;
  if (aToB) {
    for (let i = arrays.length - 1; i >= 0 && out.length < count; i--) if (arrays[i]!.key <= current) out.push(arrays[i]!.address);
  } else {
    for (let i = 0; i < arrays.length && out.length < count; i++) if (arrays[i]!.key >= current) out.push(arrays[i]!.address);
  }
  return out;
}

/** The swap instruction, ready for buildTransaction. */
export function swapInstruction(accounts: SwapAccounts, args: SwapInstructionData): InstructionInput {
  const metas: AccountMetaInput[] = [
    { pubkey: accounts.trader, isSigner: true, isWritable: true },
    { pubkey: accounts.pool, isSigner: false, isWritable: true },
    { pubkey: accounts.vaultA, isSigner: false, isWritable: true },
    { pubkey: accounts.vaultB, isSigner: false, isWritable: true },
    { pubkey: accounts.traderTokenA, isSigner: false, isWritable: true },
    { pubkey: accounts.traderTokenB, isSigner: false, isWritable: true },
  ];
  const v2 = accounts.v2;
  if (v2 === undefined) metas.push({ pubkey: TOKEN_PROGRAM_ID, isSigner: false, isWritable: false });
  else {
    metas.push(
      { pubkey: v2.tokenProgramA, isSigner: false, isWritable: false },
      { pubkey: v2.tokenProgramB, isSigner: false, isWritable: false },
      { pubkey: v2.mintA, isSigner: false, isWritable: false },
      { pubkey: v2.mintB, isSigner: false, isWritable: false },
    );
  }
  if (accounts.ammConfig !== undefined) metas.push({ pubkey: accounts.ammConfig, isSigner: false, isWritable: false });
  for (const key of accounts.extra) metas.push({ pubkey: key, isSigner: false, isWritable: true });
  return { programId: accounts.programId, accounts: metas, data: encodeSwapData(args, v2 === undefined ? SWAP_INSTRUCTION_TAG : SWAP_V2_INSTRUCTION_TAG) };
}

const ACCOUNT = { trader: 0, pool: 1, vaultA: 2, vaultB: 3, traderA: 4, traderB: 5, tokenProgram: 6 } as const;
/** swap_v2: the token programs and mints of each side. */
const V2 = { tokenProgramA: 6, tokenProgramB: 7, mintA: 8, mintB: 9 } as const;

/** The handler of `dex`'s program. */
export function createSwapProgram(dex: Dex): ProgramHandler {
  return (ctx) => executeSwap(dex, ctx);
}

function custom(code: number): InstructionErrorValue {
  return { Custom: code };
}

/** One side of the swap: its token program and, for swap_v2, its decoded mint. */
interface Side {
  program: string;
  mint: DecodedMint | undefined;
}

function executeSwap(dex: Dex, ctx: InvokeContext): InstructionErrorValue | null {
  const args = decodeSwapData(ctx.data);
  if (args === null) return IxError.InvalidInstructionData;
  const v2 = ctx.data[0] === SWAP_V2_INSTRUCTION_TAG;
  const fixed = v2 ? SWAP_V2_FIXED_ACCOUNTS : SWAP_FIXED_ACCOUNTS;
  if (ctx.accountCount < fixed) return IxError.NotEnoughAccountKeys;
  if (!ctx.isSigner(ACCOUNT.trader)) return IxError.MissingRequiredSignature;
  if (v2) {
    for (const i of [V2.tokenProgramA, V2.tokenProgramB]) {
      if (ctx.keys[i] !== TOKEN_PROGRAM_ID && ctx.keys[i] !== TOKEN_2022_PROGRAM_ID) return IxError.IncorrectProgramId;
    }
  } else if (ctx.keys[ACCOUNT.tokenProgram] !== TOKEN_PROGRAM_ID) return IxError.IncorrectProgramId;
  for (const i of [ACCOUNT.pool, ACCOUNT.vaultA, ACCOUNT.vaultB, ACCOUNT.traderA, ACCOUNT.traderB]) {
    if (!ctx.isWritable(i)) return custom(SwapProgramError.ConstraintMut);
  }
  ctx.consume(dex === Dex.Amm ? 32_000 : 48_000);

  const poolAddress = ctx.keys[ACCOUNT.pool]!;
  const poolRecord = ctx.account(ACCOUNT.pool);
  if (poolRecord === null || poolRecord.owner !== ctx.programId) return custom(SwapProgramError.InvalidPool);
  let decoded: DecodedPool;
  try {
    decoded = decodePoolOf(dex, poolRecord.data, poolAddress);
  } catch {
    return custom(SwapProgramError.InvalidPool);
  }
  let pool = decoded;

  // Mints and token programs of each side (v1: SPL Token, no mint passed).
  let sideA: Side = { program: TOKEN_PROGRAM_ID, mint: undefined };
  let sideB: Side = sideA;
  if (v2) {
    const a = sideOf(ctx, V2.tokenProgramA, V2.mintA, pool.tokenA);
    if (!isSide(a)) return a;
    const b = sideOf(ctx, V2.tokenProgramB, V2.mintB, pool.tokenB);
    if (!isSide(b)) return b;
    sideA = a;
    sideB = b;
  }

  // Vaults and trader accounts.
  const [vaultA, vaultB] = vaultsOf(pool);
  if (ctx.keys[ACCOUNT.vaultA] !== vaultA || ctx.keys[ACCOUNT.vaultB] !== vaultB) return custom(SwapProgramError.InvalidVault);
  if (ctx.account(ACCOUNT.vaultA)?.owner !== sideA.program || ctx.account(ACCOUNT.vaultB)?.owner !== sideB.program) return IxError.IncorrectProgramId;
  const trader = pubkeyBytes(ctx.keys[ACCOUNT.trader]!);
  const mintA = pubkeyBytes(pool.tokenA);
  const mintB = pubkeyBytes(pool.tokenB);
  const traderA = ctx.account(ACCOUNT.traderA);
  const traderB = ctx.account(ACCOUNT.traderB);
  for (const [record, mint, side] of [[traderA, mintA, sideA], [traderB, mintB, sideB]] as const) {
    if (record === null || record.owner !== side.program || !isTokenAccount(record.data) || !tokenAccountMintIs(record.data, mint) || !tokenAccountOwnerIs(record.data, trader)) {
      return custom(SwapProgramError.InvalidTokenAccount);
    }
  }

  // The kind's extra accounts.
  const extra = swapContextOf(dex, pool, ctx, fixed);
  if (typeof extra === 'number') return custom(extra);
  pool = extra.pool;
  const ctxSwap = extra.context;

  // What the pool itself swaps: the amounts after the transfer fees (swap_with_transfer_fee_extension).
  const [inSide, outSide] = args.aToB ? [sideA, sideB] : [sideB, sideA];
  let poolAmount = args.amount;
  if (args.exactIn) {
    poolAmount = args.amount - transferFeeOf(inSide.mint, ctx.epoch, args.amount);
  } else if (outSide.mint?.transferFeeConfig !== undefined) {
    const pre = calculatePreFeeAmount(epochFee(outSide.mint.transferFeeConfig, ctx.epoch), args.amount);
    if (pre === undefined) return custom(SwapProgramError.SwapRefused);
    poolAmount = pre;
  }
  if (poolAmount === 0n && args.amount > 0n) {
    ctx.log('swap refused: the transfer fee takes the whole input');
    return custom(SwapProgramError.SwapRefused);
  }
  const request = { aToB: args.aToB, mode: args.exactIn ? SwapMode.ExactIn : SwapMode.ExactOut, amount: poolAmount };
  let quote: SwapQuote | SwapRefusal;
  let dlmm: ReturnType<typeof quoteDlmmWithBins> | undefined;
  if (dex === Dex.Dlmm) {
    dlmm = quoteDlmmWithBins(pool as DlmmLbPair, request, ctxSwap);
    quote = dlmm;
  } else {
    quote = quoteSwap(pool, request, ctxSwap);
  }
  if (!quote.ok) {
    ctx.log(`swap refused: ${quote.message}`);
    return custom(quote.reason === SwapFailure.InsufficientLiquidityData || quote.reason === SwapFailure.MissingFeeRate ? SwapProgramError.MissingSwapAccounts : SwapProgramError.SwapRefused);
  }
  // The trader's side of the transfers: what it sends, and what arrives of the pool's output.
  let traderIn = args.amount;
  if (!args.exactIn || quote.amountIn !== poolAmount) {
    const pre = inSide.mint?.transferFeeConfig === undefined ? quote.amountIn : calculatePreFeeAmount(epochFee(inSide.mint.transferFeeConfig, ctx.epoch), quote.amountIn);
    if (pre === undefined) return custom(SwapProgramError.SwapRefused);
    traderIn = pre;
  }
  const feeIn = transferFeeOf(inSide.mint, ctx.epoch, traderIn);
  const feeOut = transferFeeOf(outSide.mint, ctx.epoch, quote.amountOut);
  const received = quote.amountOut - feeOut;
  if (args.exactIn ? received < args.otherAmountThreshold : traderIn > args.otherAmountThreshold) {
    ctx.log(`slippage: ${args.exactIn ? `out ${received} < minimum` : `in ${traderIn} > maximum`} ${args.otherAmountThreshold}`);
    return custom(SwapProgramError.SlippageExceeded);
  }

  // Token movements, as the program's two CPIs to the token programs would make them.
  const [traderInIx, traderOutIx, vaultInIx, vaultOutIx] = args.aToB
    ? [ACCOUNT.traderA, ACCOUNT.traderB, ACCOUNT.vaultA, ACCOUNT.vaultB]
    : [ACCOUNT.traderB, ACCOUNT.traderA, ACCOUNT.vaultB, ACCOUNT.vaultA];
  const err = moveTokens(ctx, traderInIx, vaultInIx, traderIn, feeIn) ?? moveTokens(ctx, vaultOutIx, traderOutIx, quote.amountOut, feeOut);
  if (err !== null) return err;

  // The new pool state (the pool's own amounts).
  const written = writePoolState(poolRecord, decoded, args.aToB, quote, dlmm, ctx, extra.arrays);
  if (written !== null) return written;
  if (ctx.collectingLogs) {
    ctx.log(`swap: in ${quote.amountIn} out ${quote.amountOut} fee ${quote.fee}${feeIn > 0n || feeOut > 0n ? ` transfer fees ${feeIn} in, ${feeOut} out` : ''}`);
  }
  return null;
}

function isSide(value: Side | InstructionErrorValue): value is Side {
  return typeof value === 'object' && 'program' in value;
}

/** swap_v2: one side's token program and mint, checked against the pool's mint. */
function sideOf(ctx: InvokeContext, programIx: number, mintIx: number, poolMint: string): Side | InstructionErrorValue {
  if (ctx.keys[mintIx] !== poolMint) return custom(SwapProgramError.InvalidMint);
  const record = ctx.account(mintIx);
  if (record === null) return custom(SwapProgramError.InvalidMint);
  if (record.owner !== ctx.keys[programIx]) return IxError.IncorrectProgramId;
  try {
    return { program: record.owner, mint: decodeMintOf(record.owner, record.data) };
  } catch {
    return custom(SwapProgramError.InvalidMint);
  }
}

/** The pool's two vault keys (an AmmInfo's coin and pc vaults; DLMM reserves). */
function vaultsOf(pool: DecodedPool): [string | undefined, string | undefined] {
  switch (pool.dex) {
    case Dex.Amm:
      return [pool.vaultA, pool.vaultB];
    case Dex.Dlmm:
      return [pool.reserveX, pool.reserveY];
    default:
      return [pool.vaultA, pool.vaultB];
  }
}

export interface ArrayAccount {
  /** Instruction account position. */
  index: number;
  record: AccountRecord;
  array: TickArray | BinArray;
}

/** The pool (with its fee rate for Raydium) and the quote context from the extra accounts. */
function swapContextOf(
  dex: Dex,
  pool: DecodedPool,
  ctx: InvokeContext,
  fixed: number,
): { pool: DecodedPool; context: SwapContext; arrays: ArrayAccount[] } | number {
  const arrays: ArrayAccount[] = [];
  let first = fixed;
  if (dex === Dex.Amm) {
    // The reserves are the vaults' balances less need_take_pnl (the vault keys were checked).
    const withVaults = withAmmVaultAccounts(pool as AmmPool, ctx.account(ACCOUNT.vaultA), ctx.account(ACCOUNT.vaultB));
    if (typeof withVaults === 'string') return SwapProgramError.InvalidVault;
    return { pool: withVaults, context: { nowSeconds: ctx.blockTime }, arrays };
  }
  if (dex === Dex.Clmm) {
    const cl = pool as ConcentratedPool;
    const configRecord = ctx.accountCount > first ? ctx.account(first) : null;
    if (configRecord === null || configRecord.owner !== ctx.programId || ctx.keys[first] !== cl.ammConfig) return SwapProgramError.MissingSwapAccounts;
    try {
      pool = withAmmConfig(cl, decodeAmmConfigOf(configRecord.data, ctx.keys[first]!));
    } catch {
      return SwapProgramError.MissingSwapAccounts;
    }
    first++;
  }
  for (let i = first; i < ctx.accountCount; i++) {
    const record = ctx.account(i);
    if (record === null || record.owner !== ctx.programId) return SwapProgramError.MissingSwapAccounts;
    try {
      const array =
        dex === Dex.Dlmm
          ? decodeBinArrayOf(record.data, ctx.keys[i]!)
          : decodeTickArrayOf(dex, record.data, ctx.keys[i]!, (pool as ConcentratedPool).tickSpacing);
      if (array.pool !== pool.address) return SwapProgramError.MissingSwapAccounts;
      arrays.push({ index: i, record, array });
    } catch {
      return SwapProgramError.MissingSwapAccounts;
    }
  }
  const context: SwapContext =
    dex === Dex.Dlmm
      ? { binArrays: arrays.map((a) => a.array as BinArray), nowSeconds: ctx.blockTime }
      : { tickArrays: arrays.map((a) => a.array as TickArray), nowSeconds: ctx.blockTime };
  return { pool, context, arrays };
}

/**
 * Writes the changed fields of the pool (as decoded, without an AmmConfig's fee) and its bins; the
 * pool is instruction account `poolIndex`. The real-format DEX programs (dex-programs/) share it.
 */
export function writePoolState(
  record: AccountRecord,
  pool: DecodedPool,
  aToB: boolean,
  quote: SwapQuote,
  dlmm: ReturnType<typeof quoteDlmmWithBins> | undefined,
  ctx: InvokeContext,
  arrays: readonly ArrayAccount[],
  poolIndex: number = ACCOUNT.pool,
): InstructionErrorValue | null {
  const data = record.data.slice();
  let after: DecodedPool;
  switch (pool.dex) {
    case Dex.Amm:
      // AmmInfo keeps no reserves: the vault transfers are the whole of the swap's effect.
      return null;
    case Dex.Whirlpool:
    case Dex.Clmm: {
      const state = clAfter(pool, quote);
      if (pool.dex === Dex.Whirlpool) writeWhirlpoolPrice(data, state);
      else writeClmmPrice(data, state);
      after = { ...pool, ...state };
      break;
    }
    case Dex.Dlmm: {
      if (dlmm === undefined || !dlmm.ok) return custom(SwapProgramError.SwapRefused);
      // The protocol's share of the fee is booked in the token the fee was taken in.
      const protocolOnX = aToB && quote.feeInOutput !== true;
      const lb = pool as DlmmLbPair;
      const state = {
        activeId: dlmm.activeIdAfter,
        vParameters: dlmm.vParametersAfter,
        protocolFeeX: protocolOnX ? lb.protocolFeeX + dlmm.protocolFee : lb.protocolFeeX,
        protocolFeeY: protocolOnX ? lb.protocolFeeY : lb.protocolFeeY + dlmm.protocolFee,
        lastUpdatedAt: ctx.blockTime,
      };
      writeLbPairState(data, state);
      after = { ...lb, ...state };
      const err = writeBins(dlmm.bins, arrays, ctx);
      if (err !== null) return err;
      break;
    }
  }
  rememberPool(data, after);
  return ctx.put(poolIndex, { ...record, data });
}

function clAfter(pool: ConcentratedPool, quote: SwapQuote): ClPriceState {
  return { sqrtPrice: quote.sqrtPriceAfter ?? pool.sqrtPrice, tick: quote.tickAfter ?? pool.tick, liquidity: quote.liquidityAfter ?? pool.liquidity };
}

/** Writes each traded bin's new amounts into its bin array (one new record per array touched). */
function writeBins(bins: readonly DlmmBinUpdate[], arrays: readonly ArrayAccount[], ctx: InvokeContext): InstructionErrorValue | null {
  for (const account of arrays) {
    const index = Number((account.array as BinArray).index);
    let data: Uint8Array | undefined;
    let updated: DlmmBinArray['bins'][number][] | undefined;
    for (const bin of bins) {
      if (binArrayIndexOf(bin.id) !== index) continue;
      data ??= account.record.data.slice();
      updated ??= (account.array as DlmmBinArray).bins.slice();
      writeBinAmounts(data, index, bin.id, bin.amountX, bin.amountY);
      const slot = bin.id - index * 70;
      updated[slot] = { ...updated[slot]!, amountX: bin.amountX, amountY: bin.amountY };
    }
    if (data === undefined || updated === undefined) continue;
    rememberBinArray(data, { ...(account.array as DlmmBinArray), bins: updated });
    const err = ctx.put(account.index, { ...account.record, data });
    if (err !== null) return err;
  }
  return null;
}
