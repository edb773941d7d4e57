import {
  AMM_ACCOUNT_SIZE,
  AmmInfoOffset,
  AmmStatus,
  AmmV4Error,
  AmmV4Instruction,
  Dex,
  SwapMode,
  ammSwapEnabled,
  ammV4Authority,
  decodeAmmV4SwapData,
  quoteConstantProduct,
  type AmmPool,
} from '../../dex/index.js';
import { TOKEN_PROGRAM_ID } from '../known-accounts.js';
import type { InvokeContext } from '../invoke-context.js';
import { IxError, type InstructionErrorValue } from '../tx-errors.js';
import { keyAt, readTokenAccount, transferTokens } from './program-support.js';

/**
 * Raydium AMM v4's swaps as the program runs them (raydium-amm program/src/processor.rs
 * process_swap_base_in / _out / _v2), over the simulator's dexa_amm pools, real 752-byte AmmInfo
 * accounts (amm-info.ts):
 *
 * accounts (count: 17 or 18 for V1, 8 or more for V2), AmmInfo owner and size, distinct mints,
 * the owner's signature, the SPL Token program, the authority from the nonce, the two vaults, user
 * accounts that are not vaults, token accounts owned by SPL Token, a status that allows swaps (7
 * after pool_open_time), the direction from the user accounts' mints; then the constant product
 * on the vault amounts less need_take_pnl with AmmInfo's swap fee (the engine's
 * quoteConstantProduct), the threshold, the two transfers (user → vault signed by the owner,
 * vault → user signed by the authority), and AmmInfo's recent_epoch (and status, WaitingTrade →
 * SwapOnly) written back, as the V2 handlers write them; AmmInfo holds no reserves.
 * Errors are AmmError codes (`{Custom: n}`); each swap logs its `ray_log` line.
 */

const SWAP_UNITS = 22_000;
const POOL = 1;
const DIRECTION_PC2COIN = 1n;
const DIRECTION_COIN2PC = 2n;
const LOG_SWAP_BASE_IN = 3;
const LOG_SWAP_BASE_OUT = 4;

function fail(code: number): InstructionErrorValue {
  return { Custom: code };
}

/** bincode of the program's SwapBaseInLog / SwapBaseOutLog: u8 type, then seven u64. */
function rayLog(ctx: InvokeContext, type: number, values: readonly bigint[]): void {
  if (!ctx.collectingLogs) return;
  const bytes = new Uint8Array(1 + 8 * values.length);
  const view = new DataView(bytes.buffer);
  bytes[0] = type;
  values.forEach((v, i) => view.setBigUint64(1 + 8 * i, v, true));
  ctx.log(`ray_log: ${Buffer.from(bytes).toString('base64')}`);
}

/** Runs a real AMM v4 swap; undefined when the data is not one (the caller tries other formats). */
export function raydiumAmmV4Swap(ctx: InvokeContext): InstructionErrorValue | null | undefined {
  const swap = decodeAmmV4SwapData(ctx.data);
  if (swap === null) return undefined;
  const v2 = swap.tag === AmmV4Instruction.SwapBaseInV2 || swap.tag === AmmV4Instruction.SwapBaseOutV2;
  const exactIn = swap.tag === AmmV4Instruction.SwapBaseIn || swap.tag === AmmV4Instruction.SwapBaseInV2;
  ctx.consume(SWAP_UNITS);

  // Account positions.
  let coinVault: number;
  let source: number;
  if (v2) {
    if (ctx.accountCount < 8) return IxError.NotEnoughAccountKeys;
    coinVault = 3;
    source = 5;
  } else {
    if (ctx.accountCount !== 17 && ctx.accountCount !== 18) return fail(AmmV4Error.WrongAccountsNumber);
    const shift = ctx.accountCount === 18 ? 1 : 0;
    coinVault = 4 + shift;
    source = 14 + shift;
  }
  const pcVault = coinVault + 1;
  const destination = source + 1;
  const owner = source + 2;

  // AmmInfo::load_mut_checked
  const ammRecord = ctx.account(POOL);
  if (ammRecord === null || ammRecord.owner !== ctx.programId) return fail(AmmV4Error.InvalidAmmAccountOwner);
  if (ammRecord.data.length !== AMM_ACCOUNT_SIZE) return fail(AmmV4Error.ExpectedAccount);
  const data = ammRecord.data;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const status = view.getBigUint64(0, true);
  if (status === AmmStatus.Uninitialized) return fail(AmmV4Error.InvalidStatus);
  const coinMint = keyAt(data, AmmInfoOffset.coinMint);
  const pcMint = keyAt(data, AmmInfoOffset.pcMint);
  if (coinMint === pcMint) return fail(AmmV4Error.NotAllowed);
  if (!ctx.isSigner(owner)) return fail(AmmV4Error.InvalidSignAccount);
  if (ctx.keys[0] !== TOKEN_PROGRAM_ID) return fail(AmmV4Error.InvalidSplTokenProgram);
  const authority = ammV4Authority(ctx.programId, Number(view.getBigUint64(AmmInfoOffset.nonce, true) & 0xffn));
  if (authority === undefined || ctx.keys[2] !== authority) return fail(AmmV4Error.InvalidProgramAddress);
  const coinVaultKey = keyAt(data, AmmInfoOffset.coinVault);
  const pcVaultKey = keyAt(data, AmmInfoOffset.pcVault);
  if (ctx.keys[coinVault] !== coinVaultKey) return fail(AmmV4Error.InvalidCoinVault);
  if (ctx.keys[pcVault] !== pcVaultKey) return fail(AmmV4Error.InvalidPCVault);
  for (const user of [source, destination]) {
    if (ctx.keys[user] === coinVaultKey || ctx.keys[user] === pcVaultKey) return fail(AmmV4Error.InvalidUserToken);
  }
  // unpack_token_account: owned by SPL Token, then the Pack layout.
  const accounts = [coinVault, pcVault, source, destination].map((i) => {
    const record = ctx.account(i);
    if (record === null || record.owner !== TOKEN_PROGRAM_ID) return AmmV4Error.InvalidSplTokenProgram;
    return readTokenAccount(ctx, i) ?? AmmV4Error.ExpectedAccount;
  });
  for (const a of accounts) if (typeof a === 'number') return fail(a);
  const [coin, pc, user, out] = accounts as Exclude<(typeof accounts)[number], number>[];

  if (!ammSwapEnabled(status)) return fail(AmmV4Error.InvalidStatus);
  let newStatus = status;
  if (status === AmmStatus.WaitingTrade) {
    if (ctx.blockTime < view.getBigUint64(224, true)) return fail(AmmV4Error.InvalidStatus);
    newStatus = AmmStatus.SwapOnly;
  }
  const coinTotal = coin!.amount - view.getBigUint64(AmmInfoOffset.needTakePnlCoin, true);
  const pcTotal = pc!.amount - view.getBigUint64(AmmInfoOffset.needTakePnlPc, true);
  if (coinTotal < 0n || pcTotal < 0n) return fail(46); // CheckedSubOverflow

  let coin2pc: boolean;
  if (user!.mint === coin!.mint && out!.mint === pc!.mint) coin2pc = true;
  else if (user!.mint === pc!.mint && out!.mint === coin!.mint) coin2pc = false;
  else return fail(AmmV4Error.InvalidUserToken);
  const direction = coin2pc ? DIRECTION_COIN2PC : DIRECTION_PC2COIN;

  // The engine's constant product on what the program reads.
  const pool: AmmPool = {
    dex: Dex.Amm,
    tokenA: coinMint,
    tokenB: pcMint,
    status: AmmStatus.SwapOnly,
    reserveA: coinTotal,
    reserveB: pcTotal,
    feeNumerator: view.getBigUint64(AmmInfoOffset.swapFeeNumerator, true),
    feeDenominator: view.getBigUint64(AmmInfoOffset.swapFeeDenominator, true),
  };
  if (pool.feeDenominator === 0n || pool.feeNumerator >= pool.feeDenominator) return fail(AmmV4Error.InvalidInput);
  const outReserve = coin2pc ? pcTotal : coinTotal;
  let amountIn: bigint;
  let amountOut: bigint;
  if (exactIn) {
    const [amount, minimumOut] = [swap.first, swap.second];
    if (user!.amount < amount) {
      rayLog(ctx, LOG_SWAP_BASE_IN, [amount, minimumOut, direction, user!.amount, coinTotal, pcTotal, 0n]);
      return fail(AmmV4Error.InsufficientFunds);
    }
    const quote = quoteConstantProduct(pool, { aToB: coin2pc, mode: SwapMode.ExactIn, amount });
    amountOut = quote.ok ? quote.amountOut : 0n;
    rayLog(ctx, LOG_SWAP_BASE_IN, [amount, minimumOut, direction, user!.amount, coinTotal, pcTotal, amountOut]);
    if (amountOut < minimumOut) return fail(AmmV4Error.ExceededSlippage);
    if (amountOut === 0n || amount === 0n) return fail(AmmV4Error.InvalidInput);
    if (amountOut >= outReserve) return fail(AmmV4Error.InsufficientFunds);
    amountIn = amount;
  } else {
    const [maxIn, amount] = [swap.first, swap.second];
    if (amount >= outReserve) {
      rayLog(ctx, LOG_SWAP_BASE_OUT, [maxIn, amount, direction, user!.amount, coinTotal, pcTotal, 0n]);
      return fail(AmmV4Error.InsufficientFunds);
    }
    const quote = quoteConstantProduct(pool, { aToB: coin2pc, mode: SwapMode.ExactOut, amount });
    amountIn = quote.ok ? quote.amountIn : 0n;
    rayLog(ctx, LOG_SWAP_BASE_OUT, [maxIn, amount, direction, user!.amount, coinTotal, pcTotal, amountIn]);
    if (user!.amount < amountIn) return fail(AmmV4Error.InsufficientFunds);
    if (maxIn < amountIn) return fail(AmmV4Error.ExceededSlippage);
    if (amountIn === 0n || amount === 0n) return fail(AmmV4Error.InvalidInput);
    amountOut = amount;
  }

  const [vaultIn, vaultOut] = coin2pc ? [coinVault, pcVault] : [pcVault, coinVault];
  const err = transferTokens(ctx, source, vaultIn, ctx.keys[owner]!, amountIn) ?? transferTokens(ctx, vaultOut, destination, authority, amountOut);
  if (err !== null) return err;

  // What the V2 handlers write back: recent_epoch, and the status once the pool opened.
  const written = data.slice();
  const writtenView = new DataView(written.buffer);
  writtenView.setBigUint64(AmmInfoOffset.recentEpoch, ctx.epoch, true);
  if (newStatus !== status) writtenView.setBigUint64(AmmInfoOffset.status, newStatus, true);
  return ctx.put(POOL, { ...ammRecord, data: written });
}
