/**
 * engine/chain: the wire formats (ShredStream entry batches, Solana transactions, base58).
 * What the rest of the engine may use; everything else in the folder is internal.
 */
export * from './parse-layout.js';
export { parseEntriesInto } from './entry-parser.js';
export { availableParsers, type ParserImplementation } from './parser-implementations.js';
export { EntryBatchIndex, type EntryBatchCapacity } from './entry-batch-index.js';
export {
  TransactionView,
  decodeEntryBatch,
  type AddressTableLookup,
  type CompiledInstruction,
  type MessageHeader,
  type TransactionRecord,
  type TransactionVersion,
} from './transaction-view.js';
export * as base58 from './base58.js';
export { decodePubkey } from './base58.js';
export { KeySet } from './key-set.js';
export { encodeEntries, type EntryInput } from './entry-encoder.js';
export {
  readCompactU16,
  writeCompactU16,
  encodeCompactU16,
  decodeCompactU16,
  compactU16Size,
  COMPACT_U16_TRUNCATED,
  COMPACT_U16_INVALID,
} from './compact-u16.js';
export {
  buildTransaction,
  compileMessage,
  messageSize,
  serializeMessage,
  assembleTransaction,
  generateKeypair,
  keypairFromSeed,
  keypairSeed,
  signBytes,
  verifySignature,
  compareAddresses,
  MAX_TRANSACTION_BYTES,
  type Keypair,
  type PubkeyInput,
  type AccountMetaInput,
  type InstructionInput,
  type LookupTableInput,
  type TransactionInput,
  type CompiledMessage,
} from './transaction-builder.js';
export { findProgramAddress, createProgramAddress, isOnCurve, type Seed } from './pda.js';
export { isPubkey } from './base58.js';
export { firstSignatureBytes } from './first-signature.js';
export { readInstructions, readLookups } from './message-sections.js';
export { encodeBase58Fast } from './native-base58.js';
export { bindNativeRemoteIPv4, type RemoteIPv4Fn } from './native-remote-address.js';
export { cHeapTrimAvailable, trimCHeap } from './native-malloc-trim.js';
export { parseEntries } from './native-parser.js';
export * from './program-addresses.js';
export {
  ComputeBudgetTag,
  MAX_COMPUTE_UNIT_LIMIT,
  decodeComputeBudgetInstruction,
  prioritizationFeeLamports,
  setComputeUnitLimitInstruction,
  setComputeUnitPriceInstruction,
  type ComputeBudgetInstruction,
} from './compute-budget.js';
export {
  AssociatedTokenInstruction,
  associatedTokenAddress,
  createAssociatedTokenIdempotentInstruction,
  createAssociatedTokenInstruction,
  type CreateAssociatedTokenInput,
} from './associated-token.js';
export { TokenInstructionTag, closeAccountInstruction, mintToCheckedInstruction, syncNativeInstruction, systemTransferInstruction, tokenTransferInstruction } from './token-instructions.js';
export {
  buildFittedTransaction,
  signedTransactionSize,
  type FittedTransaction,
  type FittedTransactionInput,
} from './fitted-transaction.js';
export { LOOKUP_TABLE_MAX_ADDRESSES, LOOKUP_TABLE_META_SIZE, LookupTableError, decodeLookupTable, type LookupTable, type LookupTableErrorKind } from './lookup-table-account.js';
export type { Commitment } from './commitment.js';
