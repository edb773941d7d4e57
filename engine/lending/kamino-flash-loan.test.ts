import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';

import { SYSVAR_INSTRUCTIONS_ID, TOKEN_PROGRAM_ID } from '../chain/index.js';
import { ErrorCode } from '../errors.js';
import {
  FLASH_BORROW_DISCRIMINATOR,
  FLASH_REPAY_DISCRIMINATOR,
  KLEND_PROGRAM_ID,
  RESERVE_ACCOUNT_SIZE,
  decodeReserve,
  feeSfOfBps,
  flashBorrowInstruction,
  flashLoanFee,
  flashRepayInstruction,
  lendingMarketAuthority,
  type FlashLoanReserve,
} from './kamino-flash-loan.js';

/**
 * The flash-loan instructions against klend's published interface: the discriminators and account
 * lists as an independent decoder documents them (sevenlabs-hq/carbon
 * decoders/kamino-lending-decoder/README.md at 6bbf3b26: FlashBorrowReserveLiquidity
 * 0x87e734a70734d4c1, FlashRepayReserveLiquidity 0xb97500cb60f5b4ba, twelve accounts each), which
 * agree with Kamino-Finance/klend's handlers.
 */

const KEYS = Array.from({ length: 8 }, (_, i) => bs58.encode(new Uint8Array(32).fill(i + 1)));
const reserve: FlashLoanReserve = { programId: KLEND_PROGRAM_ID, lendingMarket: KEYS[0]!, reserve: KEYS[1]!, liquidityMint: KEYS[2]!, supplyVault: KEYS[3]!, feeVault: KEYS[4]!, feeSf: feeSfOfBps(5) };
const user = KEYS[5]!;
const account = KEYS[6]!;

describe('klend flash loan instructions', () => {
  it('carry the Anchor discriminators of the published interface', () => {
    expect(Buffer.from(FLASH_BORROW_DISCRIMINATOR).toString('hex')).toBe('87e734a70734d4c1');
    expect(Buffer.from(FLASH_REPAY_DISCRIMINATOR).toString('hex')).toBe('b97500cb60f5b4ba');
  });

  it('encode the amount and the borrow index, and name the twelve accounts in order', () => {
    const borrow = flashBorrowInstruction(reserve, user, account, 1_234_567n);
    const repay = flashRepayInstruction(reserve, user, account, 1_234_567n, 3);
    expect(Buffer.from(borrow.data!).toString('hex')).toBe('87e734a70734d4c1' + '87d6120000000000');
    expect(Buffer.from(repay.data!).toString('hex')).toBe('b97500cb60f5b4ba' + '87d6120000000000' + '03');
    // user_transfer_authority, lending_market_authority, lending_market, reserve, reserve_liquidity_mint,
    // reserve liquidity (source / destination), user liquidity, fee receiver, referrer_token_state (none),
    // referrer_account (none), sysvar_info, token_program.
    const expected = [
      [user, true, false],
      [lendingMarketAuthority(KLEND_PROGRAM_ID, reserve.lendingMarket), false, false],
      [reserve.lendingMarket, false, false],
      [reserve.reserve, false, true],
      [reserve.liquidityMint, false, false],
      [reserve.supplyVault, false, true],
      [account, false, true],
      [reserve.feeVault, false, true],
      [KLEND_PROGRAM_ID, false, false],
      [KLEND_PROGRAM_ID, false, false],
      [SYSVAR_INSTRUCTIONS_ID, false, false],
      [TOKEN_PROGRAM_ID, false, false],
    ];
    for (const ix of [borrow, repay]) expect(ix.accounts.map((a) => [a.pubkey, a.isSigner, a.isWritable])).toEqual(expected);
    expect(() => flashRepayInstruction(reserve, user, account, 1n, 256)).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'borrowIndex', value: 256 } }));
  });

  it('charges the reserve fee of spec 03 (0.05 %), rounded, at least one atom', () => {
    expect(flashLoanFee(1_000_000_000n, feeSfOfBps(5))).toBe(500_000n);
    expect(flashLoanFee(1_000n, feeSfOfBps(5))).toBe(1n); // 0.5 rounds up to the minimum of 1
    expect(flashLoanFee(3_001n, feeSfOfBps(5))).toBe(2n); // 1.5005 rounds to 2
    expect(flashLoanFee(2_999n, feeSfOfBps(5))).toBe(1n); // 1.4995 rounds to 1
    expect(flashLoanFee(123n, 0n)).toBe(0n);
  });
});

describe('decodeReserve', () => {
  it('refuses bytes that are not a Reserve account, with the code and what was wrong', () => {
    expect(() => decodeReserve(new Uint8Array(100))).toThrow(
      expect.objectContaining({ code: ErrorCode.AccountSize, context: { account: 'Reserve', expected: RESERVE_ACCOUNT_SIZE, actual: 100 } }),
    );
    expect(() => decodeReserve(new Uint8Array(RESERVE_ACCOUNT_SIZE))).toThrow(expect.objectContaining({ code: ErrorCode.AccountDiscriminator, context: { account: 'Reserve' } }));
  });
});
