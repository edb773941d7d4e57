import type { AccountMetaInput, InstructionInput } from '../chain/index.js';
import {
  Dex,
  SwapFailure,
  SwapMode,
  binArrayIndexOf,
  quoteDlmmWithBins,
  quoteSwap,
  withAmmConfig,
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
import { ammVaultBytes } from './amm-vaults.js';
import type { AccountRecord } from './chain-backend.js';
import { decodeAmmConfigOf, decodeBinArrayOf, decodePoolOf, decodeTickArrayOf, rememberBinArray, rememberPool } from './decoded-accounts.js';
import type { InvokeContext, ProgramHandler } from './invoke-context.js';
import type { SimPoolInfo } from './pool-genesis.js';
import { pubkeyBytes } from './key-cache.js';
import { TOKEN_PROGRAM_ID } from './known-accounts.js';
import {
  writeAmmReserves,
  writeBinAmounts,
  writeClmmPrice,
  writeLbPairState,
  writeWhirlpoolPrice,
  type ClPriceState,
} from './pool-state-writes.js';
import { TokenError, isTokenAccount, tokenAccountMintIs, tokenAccountOwnerIs, tokenAmount, withTokenAmount } from './spl-token.js';
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
 * Data (19 bytes, little-endian):
 *   0  u8   tag = 9 (swap)
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
 *   Custom 6005 SwapRefused           the pool cannot do this swap (no liquidity, zero output, disabled)
 *   Custom 2000 ConstraintMut         pool, vaults or trader token accounts not writable (Anchor's code)
 *   Custom 1    (SPL Token InsufficientFunds) the trader's input account holds less than the input
 *   InvalidInstructionData, NotEnoughAccountKeys, MissingRequiredSignature, IncorrectProgramId
 */

export const SWAP_INSTRUCTION_TAG = 9;
export const SWAP_DATA_SIZE = 19;
/** Accounts before the kind-specific ones. */
export const SWAP_FIXED_ACCOUNTS = 7;

export const SwapProgramError = {
  InvalidPool: 6000,
  SlippageExceeded: 6001,
  InvalidVault: 6002,
  InvalidTokenAccount: 6003,
  MissingSwapAccounts: 6004,
  SwapRefused: 6005,
  ConstraintMut: 2000,
} as const;

export interface SwapInstructionData {
  amount: bigint;
  otherAmountThreshold: bigint;
  aToB: boolean;
  exactIn: boolean;
}

export function encodeSwapData(args: SwapInstructionData): Uint8Array {
  const data = new Uint8Array(SWAP_DATA_SIZE);
  const view = new DataView(data.buffer);
  data[0] = SWAP_INSTRUCTION_TAG;
  view.setBigUint64(1, args.amount, true);
  view.setBigUint64(9, args.otherAmountThreshold, true);
  data[17] = args.aToB ? 1 : 0;
  data[18] = args.exactIn ? 1 : 0;
  return data;
}

export function decodeSwapData(data: Uint8Array): SwapInstructionData | null {
  if (data.length !== SWAP_DATA_SIZE || data[0] !== SWAP_INSTRUCTION_TAG || data[17]! > 1 || data[18]! > 1) return null;
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
    { pubkey: TOKEN_PROGRAM_ID, isSigner: false, isWritable: false },
  ];
  if (accounts.ammConfig !== undefined) metas.push({ pubkey: accounts.ammConfig, isSigner: false, isWritable: false });
  for (const key of accounts.extra) metas.push({ pubkey: key, isSigner: false, isWritable: true });
  return { programId: accounts.programId, accounts: metas, data: encodeSwapData(args) };
}

const ACCOUNT = { trader: 0, pool: 1, vaultA: 2, vaultB: 3, traderA: 4, traderB: 5, tokenProgram: 6 } as const;

/** The handler of `dex`'s program. */
export function createSwapProgram(dex: Dex): ProgramHandler {
  return (ctx) => executeSwap(dex, ctx);
}

function custom(code: number): InstructionErrorValue {
  return { Custom: code };
}

function executeSwap(dex: Dex, ctx: InvokeContext): InstructionErrorValue | null {
  const args = decodeSwapData(ctx.data);
  if (args === null) return IxError.InvalidInstructionData;
  if (ctx.accountCount < SWAP_FIXED_ACCOUNTS) return IxError.NotEnoughAccountKeys;
  if (!ctx.isSigner(ACCOUNT.trader)) return IxError.MissingRequiredSignature;
  if (ctx.keys[ACCOUNT.tokenProgram] !== TOKEN_PROGRAM_ID) return IxError.IncorrectProgramId;
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

  // Vaults and trader accounts.
  const [vaultA, vaultB] = vaultsOf(pool, poolRecord.data);
  if (!keyIs(ctx.keys[ACCOUNT.vaultA]!, vaultA) || !keyIs(ctx.keys[ACCOUNT.vaultB]!, vaultB)) return custom(SwapProgramError.InvalidVault);
  const trader = pubkeyBytes(ctx.keys[ACCOUNT.trader]!);
  const mintA = pubkeyBytes(pool.tokenA);
  const mintB = pubkeyBytes(pool.tokenB);
  const traderA = ctx.account(ACCOUNT.traderA);
  const traderB = ctx.account(ACCOUNT.traderB);
  for (const [record, mint] of [[traderA, mintA], [traderB, mintB]] as const) {
    if (record === null || record.owner !== TOKEN_PROGRAM_ID || !isTokenAccount(record.data) || !tokenAccountMintIs(record.data, mint) || !tokenAccountOwnerIs(record.data, trader)) {
      return custom(SwapProgramError.InvalidTokenAccount);
    }
  }

  // The kind's extra accounts.
  const extra = swapContextOf(dex, pool, ctx);
  if (typeof extra === 'number') return custom(extra);
  pool = extra.pool;
  const ctxSwap = extra.context;

  const request = { aToB: args.aToB, mode: args.exactIn ? SwapMode.ExactIn : SwapMode.ExactOut, amount: args.amount };
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
  if (args.exactIn ? quote.amountOut < args.otherAmountThreshold : quote.amountIn > args.otherAmountThreshold) {
    ctx.log(`slippage: ${args.exactIn ? `out ${quote.amountOut} < minimum` : `in ${quote.amountIn} > maximum`} ${args.otherAmountThreshold}`);
    return custom(SwapProgramError.SlippageExceeded);
  }

  // Token movements, as the program's two CPIs to the token program would make them.
  const [traderIn, traderOut, vaultIn, vaultOut] = args.aToB
    ? [ACCOUNT.traderA, ACCOUNT.traderB, ACCOUNT.vaultA, ACCOUNT.vaultB]
    : [ACCOUNT.traderB, ACCOUNT.traderA, ACCOUNT.vaultB, ACCOUNT.vaultA];
  const err =
    moveTokens(ctx, traderIn, vaultIn, quote.amountIn) ?? moveTokens(ctx, vaultOut, traderOut, quote.amountOut);
  if (err !== null) return err;

  // The new pool state.
  const written = writePoolState(poolRecord, decoded, args.aToB, quote, dlmm, ctx, extra.arrays);
  if (written !== null) return written;
  if (ctx.collectingLogs) ctx.log(`swap: in ${quote.amountIn} out ${quote.amountOut} fee ${quote.fee}`);
  return null;
}

function keyIs(key: string, expected: string | Uint8Array): boolean {
  if (typeof expected === 'string') return key === expected;
  const bytes = pubkeyBytes(key);
  for (let i = 0; i < 32; i++) if (bytes[i] !== expected[i]) return false;
  return true;
}

function vaultsOf(pool: DecodedPool, data: Uint8Array): [string | Uint8Array, string | Uint8Array] {
  switch (pool.dex) {
    case Dex.Amm:
      return ammVaultBytes(data);
    case Dex.Dlmm:
      return [pool.reserveX, pool.reserveY];
    default:
      return [pool.vaultA, pool.vaultB];
  }
}

/** Moves `amount` between two token accounts of the instruction (source must hold it). */
function moveTokens(ctx: InvokeContext, from: number, to: number, amount: bigint): InstructionErrorValue | null {
  const source = ctx.account(from)!;
  const have = tokenAmount(source.data);
  if (have < amount) return custom(TokenError.InsufficientFunds);
  let err = ctx.put(from, withTokenAmount(source, have - amount));
  if (err !== null) return err;
  const destination = ctx.account(to)!;
  err = ctx.put(to, withTokenAmount(destination, tokenAmount(destination.data) + amount));
  return err;
}

interface ArrayAccount {
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
): { pool: DecodedPool; context: SwapContext; arrays: ArrayAccount[] } | number {
  const arrays: ArrayAccount[] = [];
  let first = SWAP_FIXED_ACCOUNTS;
  if (dex === Dex.Amm) return { pool, context: { nowSeconds: ctx.blockTime }, arrays };
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

/** Writes the changed fields of the pool (as decoded, without an AmmConfig's fee) and its bins. */
function writePoolState(
  record: AccountRecord,
  pool: DecodedPool,
  aToB: boolean,
  quote: SwapQuote,
  dlmm: ReturnType<typeof quoteDlmmWithBins> | undefined,
  ctx: InvokeContext,
  arrays: readonly ArrayAccount[],
): InstructionErrorValue | null {
  const data = record.data.slice();
  let after: DecodedPool;
  switch (pool.dex) {
    case Dex.Amm: {
      const reserveA = aToB ? pool.reserveA + quote.amountIn : pool.reserveA - quote.amountOut;
      const reserveB = aToB ? pool.reserveB - quote.amountOut : pool.reserveB + quote.amountIn;
      writeAmmReserves(data, reserveA, reserveB);
      after = { ...pool, reserveA, reserveB };
      break;
    }
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
  return ctx.put(ACCOUNT.pool, { ...record, data });
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
