import { SYSVAR_INSTRUCTIONS_ID, base58 } from '../chain/index.js';
import { FLASH_BORROW_DISCRIMINATOR, FLASH_REPAY_DISCRIMINATOR, KlendError, decodeReserve, FLASH_LOANS_DISABLED_SF, flashLoanFee, lendingMarketAuthority } from '../lending/index.js';
import type { InvokeContext, ProgramHandler, SysvarInstruction } from './invoke-context.js';
import { TokenError, isTokenAccount, tokenAccountMint, tokenAccountOwnerIs, tokenAmount } from './spl-token.js';
import { moveTokens } from './token-transfer.js';
import { IxError, type InstructionErrorValue } from './tx-errors.js';

/**
 * The flash-loan part of Kamino Lending (klend) as the simulator runs it: the two instructions of
 * engine/lending, with the program's checks in its order (lending_market/flash_ixs.rs) and its
 * transfers, so a transaction that borrows and does not repay fails whole, as on mainnet:
 *
 * - borrow: the accounts are the reserve's (market, mint, supply vault, fee vault, the market
 *   authority PDA, the instructions sysvar); no other borrow later in the transaction
 *   (MultipleFlashBorrows); exactly one repay later, of the same amount, naming this borrow's
 *   index, with the same twelve accounts (else NoFlashRepayFound / InvalidFlashRepay); then the
 *   supply vault lends `amount` to the user's account.
 * - repay: the borrow at the index it names is a borrow of this program, of this reserve and
 *   amount (InvalidFlashRepay); the user's account pays `amount` back to the supply vault and the
 *   fee to the fee vault (the token program's errors when it holds too little: the whole
 *   transaction, swaps included, is undone).
 *
 * The simulator's reserves carry the klend Reserve layout's discriminator, lending market and
 * liquidity accounts, available amount and flash-loan fee at their offsets (engine/lending
 * ReserveOffset); the rest of the account (interest, limits, oracles) is zero and unused. The fee is
 * read from the reserve as klend reads it (config.fees.flash_loan_fee_sf; all ones: disabled).
 */

const BORROW_DATA = 16;
const REPAY_DATA = 17;
const ACCOUNTS = 12;

function custom(code: number): InstructionErrorValue {
  return { Custom: code };
}

function startsWith(data: Uint8Array, prefix: Uint8Array): boolean {
  if (data.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (data[i] !== prefix[i]) return false;
  return true;
}

function u64At(data: Uint8Array, at: number): bigint {
  return new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(at, true);
}

function sameAccounts(a: SysvarInstruction, b: SysvarInstruction): boolean {
  return a.accounts.length === b.accounts.length && a.accounts.every((k, i) => k === b.accounts[i]);
}

export function createFlashLoanProgram(): ProgramHandler {
  return (ctx) => {
    ctx.consume(20_000);
    const data = ctx.data;
    const borrow = startsWith(data, FLASH_BORROW_DISCRIMINATOR) && data.length === BORROW_DATA;
    const repay = startsWith(data, FLASH_REPAY_DISCRIMINATOR) && data.length === REPAY_DATA;
    if (!borrow && !repay) return IxError.InvalidInstructionData;
    if (ctx.accountCount < ACCOUNTS) return IxError.NotEnoughAccountKeys;
    const checked = checkReserve(ctx);
    if (typeof checked !== 'bigint') return checked;
    const amount = u64At(data, 8);
    return borrow ? flashBorrow(ctx, amount) : flashRepay(ctx, amount, data[16]!, checked);
  };
}

/** The accounts every flash instruction names, checked against the reserve; its fee fraction. */
function checkReserve(ctx: InvokeContext): bigint | InstructionErrorValue {
  const [, authority, market, , mint, supply, , feeVault] = ctx.keys;
  if (!ctx.isSigner(0)) return IxError.MissingRequiredSignature;
  const reserveAccount = ctx.account(3);
  if (reserveAccount === null || reserveAccount.owner !== ctx.programId) return IxError.InvalidAccountOwner;
  let reserve;
  try {
    reserve = decodeReserve(reserveAccount.data);
  } catch {
    return IxError.InvalidAccountData;
  }
  if (reserve.lendingMarket !== market || reserve.liquidityMint !== mint || reserve.supplyVault !== supply || reserve.feeVault !== feeVault) return IxError.InvalidAccountData;
  if (authority !== lendingMarketAuthority(ctx.programId, market!)) return IxError.InvalidSeeds;
  if (ctx.keys[10] !== SYSVAR_INSTRUCTIONS_ID) return IxError.InvalidArgument;
  const userAccount = ctx.account(6);
  if (userAccount === null || !isTokenAccount(userAccount.data) || tokenAccountMint(userAccount.data) !== mint) return { Custom: TokenError.MintMismatch };
  if (!ctx.isWritable(3) || !ctx.isWritable(5) || !ctx.isWritable(6) || !ctx.isWritable(7)) return IxError.InvalidArgument;
  if (reserve.feeSf === FLASH_LOANS_DISABLED_SF) return custom(KlendError.FlashLoansDisabled);
  return reserve.feeSf;
}

function flashBorrow(ctx: InvokeContext, amount: bigint): InstructionErrorValue | null {
  const all = ctx.sysvar.instructions();
  const here = ctx.sysvar.current;
  const self = all[here]!;
  let repays = 0;
  for (let i = here + 1; i < all.length; i++) {
    const ix = all[i]!;
    if (ix.programId !== ctx.programId) continue;
    if (startsWith(ix.data, FLASH_BORROW_DISCRIMINATOR)) return custom(KlendError.MultipleFlashBorrows);
    if (!startsWith(ix.data, FLASH_REPAY_DISCRIMINATOR)) continue;
    if (++repays > 1) return custom(KlendError.MultipleFlashBorrows);
    if (ix.data.length !== REPAY_DATA || u64At(ix.data, 8) !== amount || ix.data[16] !== here || !sameAccounts(self, ix)) return custom(KlendError.InvalidFlashRepay);
  }
  if (repays === 0) return custom(KlendError.NoFlashRepayFound);
  ctx.log(`Instruction: FlashBorrowReserveLiquidity (${amount})`);
  // The market authority signs for the supply vault (invoke_signed in the program).
  const supply = ctx.account(5);
  if (supply === null || !tokenAccountOwnerIs(supply.data, base58.decodePubkey(ctx.keys[1]!))) return IxError.InvalidAccountData;
  if (tokenAmount(supply.data) < amount) return { Custom: TokenError.InsufficientFunds };
  return moveTokens(ctx, 5, 6, amount, 0n);
}

function flashRepay(ctx: InvokeContext, amount: bigint, borrowIndex: number, feeSf: bigint): InstructionErrorValue | null {
  const all = ctx.sysvar.instructions();
  const here = ctx.sysvar.current;
  if (borrowIndex >= here) return custom(KlendError.InvalidFlashRepay);
  const borrow = all[borrowIndex]!;
  if (borrow.programId !== ctx.programId || !startsWith(borrow.data, FLASH_BORROW_DISCRIMINATOR)) return custom(KlendError.InvalidFlashRepay);
  if (borrow.accounts[3] !== ctx.keys[3] || u64At(borrow.data, 8) !== amount) return custom(KlendError.InvalidFlashRepay);
  ctx.log(`Instruction: FlashRepayReserveLiquidity (${amount})`);
  // The user pays back the amount to the supply vault, then the fee to the fee vault.
  const user = ctx.account(6)!;
  if (!tokenAccountOwnerIs(user.data, base58.decodePubkey(ctx.keys[0]!))) return { Custom: TokenError.OwnerMismatch };
  const fee = flashLoanFee(amount, feeSf);
  let err = moveTokens(ctx, 6, 5, amount, 0n);
  if (err !== null) return err;
  if (fee > 0n) err = moveTokens(ctx, 6, 7, fee, 0n);
  return err;
}
