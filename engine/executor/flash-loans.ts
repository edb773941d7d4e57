/**
 * The executor's flash loans (issue 27 item 3): an arbitrage whose opportunity says `flashLoan` is
 * sent as one transaction that borrows its input from the Kamino Lending reserve of the input mint,
 * swaps, and repays the input plus the reserve's fee (engine/lending). The wallet pays only the
 * transaction fees: it needs no balance of the input mint, only its token account, which the
 * transaction creates (CreateIdempotent) when it is missing.
 *
 * - The reserve is chosen by the input mint among the configured ones (`flashLoan.reserves`);
 *   none: the opportunity is skipped (`no_flash_loan_reserve`).
 * - The compute budget grows by `FLASH_LOAN_COMPUTE_UNITS` (borrow, repay and their token transfers).
 * - A loan not repaid (the swaps gave less than input + fee) fails the whole transaction on chain:
 *   nothing moves but the signature fee. The executor refuses it before that: the re-quoted profit
 *   is net of the fee (route-requote.ts).
 */
import { associatedTokenAddress, type InstructionInput } from '../chain/index.js';
import { flashBorrowInstruction, flashLoanFee, flashRepayInstruction, loadFlashLoanReserves, type FlashLoanReserve, type ReadAccounts } from '../lending/index.js';

/** Compute units a borrow and its repay add to the swap transaction. */
export const FLASH_LOAN_COMPUTE_UNITS = 80_000;

/** The borrow/repay pair around a route (buildSwapRouteTransaction's `loan`). */
export interface FlashLoanWrap {
  borrow: InstructionInput;
  repay: (borrowIndex: number) => InstructionInput;
  /** The wallet's token account the loan is lent to and repaid from. */
  tokenAccount: string;
  /** The reserve's fee for this amount. */
  fee: bigint;
}

export class FlashLoans {
  private readonly byMint = new Map<string, FlashLoanReserve>();

  constructor(reserves: readonly FlashLoanReserve[]) {
    for (const r of reserves) this.byMint.set(r.liquidityMint, r);
  }

  /** The reserves at `addresses` read from the chain (TP_ERR_CONFIG_INVALID naming `setting` when one is not usable). */
  static async load(read: ReadAccounts, addresses: readonly string[], setting = 'flashLoan.reserves'): Promise<FlashLoans> {
    return new FlashLoans(addresses.length === 0 ? [] : await loadFlashLoanReserves(read, addresses, setting));
  }

  get size(): number {
    return this.byMint.size;
  }

  /** The reserve lending `mint`, if one is configured. */
  reserveFor(mint: string): FlashLoanReserve | undefined {
    return this.byMint.get(mint);
  }

  /** Every configured reserve's accounts (for lookup tables). */
  reserves(): FlashLoanReserve[] {
    return [...this.byMint.values()];
  }

  /** Borrow `amount` of `reserve`'s mint to `owner`'s associated token account, repay it after the swaps. */
  static wrap(reserve: FlashLoanReserve, owner: string, amount: bigint): FlashLoanWrap {
    const tokenAccount = reserve.tokenProgram === undefined ? associatedTokenAddress(owner, reserve.liquidityMint) : associatedTokenAddress(owner, reserve.liquidityMint, reserve.tokenProgram);
    return {
      borrow: flashBorrowInstruction(reserve, owner, tokenAccount, amount),
      repay: (borrowIndex) => flashRepayInstruction(reserve, owner, tokenAccount, amount, borrowIndex),
      tokenAccount,
      fee: flashLoanFee(amount, reserve.feeSf),
    };
  }
}
