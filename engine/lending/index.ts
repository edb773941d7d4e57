/**
 * engine/lending: flash loans of a real Solana lending protocol (Kamino Lending): the borrow and
 * repay instructions, a reserve's accounts, fee and liquidity, the configured reserves read from the chain. The executor wraps an arbitrage in
 * them; the simulator executes them.
 */
export {
  FLASH_BORROW_DISCRIMINATOR,
  FLASH_REPAY_DISCRIMINATOR,
  KLEND_PROGRAM_ID,
  KlendError,
  LENDING_MARKET_DISCRIMINATOR,
  RESERVE_DISCRIMINATOR,
  FLASH_LOANS_DISABLED_SF,
  LENDING_MARKET_ACCOUNT_SIZE,
  RESERVE_ACCOUNT_SIZE,
  ReserveOffset,
  decodeReserve,
  feeSfOfBps,
  flashBorrowInstruction,
  flashLoanFee,
  flashRepayInstruction,
  lendingMarketAuthority,
  type DecodedReserve,
  type FlashLoanReserve,
} from './kamino-flash-loan.js';
export { loadFlashLoanReserves, readAccountsOf, type LoadedReserve, type ReadAccounts, type ReserveAccount } from './flash-loan-reserves.js';
