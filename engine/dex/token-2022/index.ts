/**
 * Token-2022 and SPL Token mints, the transfer-fee extension, and swap quotes that pay it. The
 * rest of the engine uses these through engine/dex/index.ts.
 */
export {
  AccountType,
  ExtensionType,
  MAX_FEE_BASIS_POINTS,
  MINT_BASE_SIZE,
  MULTISIG_SIZE,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_ACCOUNT_BASE_SIZE,
  TOKEN_PROGRAM_ID,
  TRANSFER_FEE_AMOUNT_SIZE,
  TRANSFER_FEE_CONFIG_SIZE,
  isTokenProgram,
} from './token-programs.js';
export { extensionEntries, findExtension, withExtensions, type ExtensionEntry, type ExtensionValue } from './extensions.js';
export { decodeMint, encodeMint, encodeTransferFeeConfig, type DecodedMint, type MintFields } from './mint.js';
export { encodeExtendedTokenAccount, withheldAmount, withheldAmountOffset, type ExtendedTokenAccountFields } from './token-account.js';
export {
  calculateEpochFee,
  calculateFee,
  calculateInverseEpochFee,
  calculateInverseFee,
  calculatePostFeeAmount,
  calculatePreFeeAmount,
  epochFee,
  type TransferFee,
  type TransferFeeConfig,
} from './transfer-fee.js';
export { hasTransferFees, quoteWithTransferFees, type PoolTransferFees } from './transfer-fee-quote.js';
