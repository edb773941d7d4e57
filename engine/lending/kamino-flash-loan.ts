import { createHash } from 'node:crypto';

import { SYSVAR_INSTRUCTIONS_ID, TOKEN_PROGRAM_ID, base58, findProgramAddress, type InstructionInput } from '../chain/index.js';
import { ErrorCode, TpError, invalidArgument } from '../errors.js';

/**
 * Flash loans of Kamino Lending (klend, program `KLend2g3cP87fffoy8q1mQqGKjrxjC8boSyAYavgmjD`):
 * `flash_borrow_reserve_liquidity` lends a reserve's liquidity within one transaction and
 * `flash_repay_reserve_liquidity` pays it back with the reserve's flash-loan fee, later in the same
 * transaction. Read from Kamino-Finance/klend (programs/klend/src/handlers/handler_flash_borrow_
 * reserve_liquidity.rs, handler_flash_repay_reserve_liquidity.rs, lending_market/flash_ixs.rs,
 * state/reserve.rs; release 1.16.0). Why this protocol: it is Solana's largest lender with an open
 * Anchor program, the pair is two plain instructions (no obligation, no account to open), and the
 * program itself refuses a borrow without its repay later in the transaction.
 *
 * Instructions (Anchor: data = sha256("global:<name>")[0..8] ‖ Borsh args):
 *   flash_borrow_reserve_liquidity(liquidity_amount: u64)
 *   flash_repay_reserve_liquidity(liquidity_amount: u64, borrow_instruction_index: u8)
 * Accounts, the same twelve for both (the program checks they match pairwise):
 *   0 user_transfer_authority signer   ·  1 lending_market_authority (PDA ["lma", market])
 *   2 lending_market                    ·  3 reserve (w)
 *   4 reserve_liquidity_mint            ·  5 reserve liquidity supply vault (w)
 *   6 the user's token account (w)      ·  7 reserve_liquidity_fee_receiver (w)
 *   8 referrer_token_state, 9 referrer_account: optional (the program id stands for none, Anchor's rule)
 *   10 the instructions sysvar          ·  11 the token program
 * Borrow moves supply vault → user; repay moves user → supply vault the amount (and a referrer's
 * part, none here) and user → fee receiver the fee.
 *
 * The program's checks: the repay names the borrow's index, its amount and the same accounts;
 * one borrow and one repay per transaction; neither by CPI. Errors (Anchor custom codes):
 * FlashBorrowCpi 6031, NoFlashRepayFound 6032, InvalidFlashRepay 6033, FlashRepayCpi 6034,
 * MultipleFlashBorrows 6035, FlashLoansDisabled 6036.
 *
 * Fee: `config.fees.flash_loan_fee_sf` is a U68F60 fraction (value × 2^60): fee = the amount times
 * it, rounded, at least 1 atom (ReserveFees::calculate_flash_loan_fees, FeeCalculation::Exclusive).
 */

export const KLEND_PROGRAM_ID = 'KLend2g3cP87fffoy8q1mQqGKjrxjC8boSyAYavgmjD';

function anchorDiscriminator(name: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(name).digest().subarray(0, 8));
}

export const FLASH_BORROW_DISCRIMINATOR = anchorDiscriminator('global:flash_borrow_reserve_liquidity');
export const FLASH_REPAY_DISCRIMINATOR = anchorDiscriminator('global:flash_repay_reserve_liquidity');
export const RESERVE_DISCRIMINATOR = anchorDiscriminator('account:Reserve');
export const LENDING_MARKET_DISCRIMINATOR = anchorDiscriminator('account:LendingMarket');

export const KlendError = {
  FlashBorrowCpi: 6031,
  NoFlashRepayFound: 6032,
  InvalidFlashRepay: 6033,
  FlashRepayCpi: 6034,
  MultipleFlashBorrows: 6035,
  FlashLoansDisabled: 6036,
} as const;

/**
 * Offsets in a Reserve account (8-byte discriminator, then the zero-copy struct, 8-byte aligned):
 * version u64, LastUpdate (16), lending_market, farm_collateral, farm_debt, then ReserveLiquidity at
 * 128 (mint, supply vault, fee vault, total_available_amount u64, …, 1,232 bytes), its padding
 * (1,200), ReserveCollateral (1,096) and its padding (1,200), then ReserveConfig at 4,856, whose
 * `fees` (origination_fee_sf, flash_loan_fee_sf) start 40 bytes in. Account size: 8 + RESERVE_SIZE
 * (8,616, klend utils/consts.rs).
 */
export const ReserveOffset = { lendingMarket: 32, liquidityMint: 128, supplyVault: 160, feeVault: 192, availableAmount: 224, flashLoanFeeSf: 4_904 } as const;
export const RESERVE_ACCOUNT_SIZE = 8 + 8_616;
export const LENDING_MARKET_ACCOUNT_SIZE = 8 + 4_656;
/** `flash_loan_fee_sf` of a reserve whose flash loans are disabled. */
export const FLASH_LOANS_DISABLED_SF = (1n << 64n) - 1n;

/** A reserve as a flash loan needs it. */
export interface FlashLoanReserve {
  programId: string;
  lendingMarket: string;
  reserve: string;
  liquidityMint: string;
  supplyVault: string;
  feeVault: string;
  /** The mint's token program. */
  tokenProgram?: string;
  /** `flash_loan_fee_sf`: the fee fraction × 2^60. */
  feeSf: bigint;
}

/** The lending market authority PDA (seeds ["lma", market]). */
export function lendingMarketAuthority(programId: string, lendingMarket: string): string {
  return findProgramAddress([new TextEncoder().encode('lma'), base58.decodePubkey(lendingMarket)], programId).address;
}

/** What a flash loan reads of a Reserve account. */
export interface DecodedReserve {
  lendingMarket: string;
  liquidityMint: string;
  supplyVault: string;
  feeVault: string;
  /** `total_available_amount`: what the reserve can lend now. */
  availableAmount: bigint;
  /** `config.fees.flash_loan_fee_sf`; FLASH_LOANS_DISABLED_SF when flash loans are off. */
  feeSf: bigint;
}

/** The fields of a Reserve account a flash loan needs. TpError AccountSize or AccountDiscriminator when it is not one. */
export function decodeReserve(data: Uint8Array): DecodedReserve {
  if (data.length < RESERVE_ACCOUNT_SIZE) {
    throw new TpError(ErrorCode.AccountSize, `a Reserve account is ${RESERVE_ACCOUNT_SIZE} bytes; got ${data.length}`, {
      context: { account: 'Reserve', expected: RESERVE_ACCOUNT_SIZE, actual: data.length },
    });
  }
  for (let i = 0; i < 8; i++) {
    if (data[i] !== RESERVE_DISCRIMINATOR[i]) throw new TpError(ErrorCode.AccountDiscriminator, 'not a klend Reserve account (discriminator)', { context: { account: 'Reserve' } });
  }
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  return {
    lendingMarket: base58.encodeAt(data, ReserveOffset.lendingMarket, 32),
    liquidityMint: base58.encodeAt(data, ReserveOffset.liquidityMint, 32),
    supplyVault: base58.encodeAt(data, ReserveOffset.supplyVault, 32),
    feeVault: base58.encodeAt(data, ReserveOffset.feeVault, 32),
    availableAmount: view.getBigUint64(ReserveOffset.availableAmount, true),
    feeSf: view.getBigUint64(ReserveOffset.flashLoanFeeSf, true),
  };
}

const FRACTION_BITS = 60n;
const HALF = 1n << (FRACTION_BITS - 1n);

/** The fee fraction `bps` / 10,000 as `flash_loan_fee_sf` (rounded to the nearest 2^-60). */
export function feeSfOfBps(bps: number): bigint {
  return (BigInt(Math.round(bps * 1_000_000)) * (1n << FRACTION_BITS) + 5_000_000_000n) / 10_000_000_000n;
}

/** The fee of borrowing `amount`: amount × fee_sf / 2^60, rounded, at least 1 (0 when the fee is 0). */
export function flashLoanFee(amount: bigint, feeSf: bigint): bigint {
  if (feeSf === 0n || amount === 0n) return 0n;
  const fee = (amount * feeSf + HALF) >> FRACTION_BITS;
  return fee < 1n ? 1n : fee;
}

function accounts(reserve: FlashLoanReserve, user: string, userTokenAccount: string): InstructionInput['accounts'] {
  const { programId } = reserve;
  return [
    { pubkey: user, isSigner: true, isWritable: false },
    { pubkey: lendingMarketAuthority(programId, reserve.lendingMarket), isSigner: false, isWritable: false },
    { pubkey: reserve.lendingMarket, isSigner: false, isWritable: false },
    { pubkey: reserve.reserve, isSigner: false, isWritable: true },
    { pubkey: reserve.liquidityMint, isSigner: false, isWritable: false },
    { pubkey: reserve.supplyVault, isSigner: false, isWritable: true },
    { pubkey: userTokenAccount, isSigner: false, isWritable: true },
    { pubkey: reserve.feeVault, isSigner: false, isWritable: true },
    { pubkey: programId, isSigner: false, isWritable: false },
    { pubkey: programId, isSigner: false, isWritable: false },
    { pubkey: SYSVAR_INSTRUCTIONS_ID, isSigner: false, isWritable: false },
    { pubkey: reserve.tokenProgram ?? TOKEN_PROGRAM_ID, isSigner: false, isWritable: false },
  ];
}

function u64(value: bigint): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, value, true);
  return b;
}

export function flashBorrowInstruction(reserve: FlashLoanReserve, user: string, userTokenAccount: string, amount: bigint): InstructionInput {
  const data = new Uint8Array(16);
  data.set(FLASH_BORROW_DISCRIMINATOR, 0);
  data.set(u64(amount), 8);
  return { programId: reserve.programId, accounts: accounts(reserve, user, userTokenAccount), data };
}

/** `borrowIndex`: the position of the borrow among the transaction's instructions. */
export function flashRepayInstruction(reserve: FlashLoanReserve, user: string, userTokenAccount: string, amount: bigint, borrowIndex: number): InstructionInput {
  if (!Number.isInteger(borrowIndex) || borrowIndex < 0 || borrowIndex > 255) throw invalidArgument('borrowIndex', borrowIndex, `borrow instruction index ${borrowIndex} is not a u8`);
  const data = new Uint8Array(17);
  data.set(FLASH_REPAY_DISCRIMINATOR, 0);
  data.set(u64(amount), 8);
  data[16] = borrowIndex;
  return { programId: reserve.programId, accounts: accounts(reserve, user, userTokenAccount), data };
}
