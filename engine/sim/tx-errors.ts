/**
 * Solana `TransactionError` and `InstructionError` values as nodes serialize them to JSON (unit
 * variants as strings, `{InstructionError: [index, {Custom: n}]}`, ...) and as they print them
 * (the `Display` texts that preflight failures and program logs carry). Leaf module.
 * Source: solana-sdk transaction-error and instruction-error crates.
 */

export type InstructionErrorValue = string | { Custom: number };

export type TransactionErrorValue =
  | string
  | { InstructionError: [number, InstructionErrorValue] }
  | { InsufficientFundsForRent: { account_index: number } }
  | { DuplicateInstruction: number };

export const TxError = {
  AccountLoadedTwice: 'AccountLoadedTwice',
  AccountNotFound: 'AccountNotFound',
  ProgramAccountNotFound: 'ProgramAccountNotFound',
  InsufficientFundsForFee: 'InsufficientFundsForFee',
  InvalidAccountForFee: 'InvalidAccountForFee',
  AlreadyProcessed: 'AlreadyProcessed',
  BlockhashNotFound: 'BlockhashNotFound',
  SignatureFailure: 'SignatureFailure',
  InvalidProgramForExecution: 'InvalidProgramForExecution',
  AddressLookupTableNotFound: 'AddressLookupTableNotFound',
  InvalidAddressLookupTableOwner: 'InvalidAddressLookupTableOwner',
  InvalidAddressLookupTableData: 'InvalidAddressLookupTableData',
  InvalidAddressLookupTableIndex: 'InvalidAddressLookupTableIndex',
} as const;

export const IxError = {
  InvalidArgument: 'InvalidArgument',
  InvalidInstructionData: 'InvalidInstructionData',
  InvalidAccountData: 'InvalidAccountData',
  InsufficientFunds: 'InsufficientFunds',
  MissingRequiredSignature: 'MissingRequiredSignature',
  NotEnoughAccountKeys: 'NotEnoughAccountKeys',
  UnsupportedProgramId: 'UnsupportedProgramId',
  ComputationalBudgetExceeded: 'ComputationalBudgetExceeded',
  ReadonlyLamportChange: 'ReadonlyLamportChange',
  ReadonlyDataModified: 'ReadonlyDataModified',
  InvalidAccountOwner: 'InvalidAccountOwner',
  IncorrectProgramId: 'IncorrectProgramId',
  InvalidSeeds: 'InvalidSeeds',
  IllegalOwner: 'IllegalOwner',
} as const;

const TX_TEXT: Record<string, string> = {
  AccountLoadedTwice: 'Account loaded twice',
  AccountNotFound: 'Attempt to debit an account but found no record of a prior credit.',
  ProgramAccountNotFound: 'Attempt to load a program that does not exist',
  InsufficientFundsForFee: 'Insufficient funds for fee',
  InvalidAccountForFee: 'This account may not be used to pay transaction fees',
  AlreadyProcessed: 'This transaction has already been processed',
  BlockhashNotFound: 'Blockhash not found',
  SignatureFailure: 'Transaction did not pass signature verification',
  InvalidProgramForExecution: 'This program may not be used for executing instructions',
  AddressLookupTableNotFound: "Transaction loads an address table account that doesn't exist",
  InvalidAddressLookupTableOwner: 'Transaction loads an address table account with an invalid owner',
  InvalidAddressLookupTableData: 'Transaction loads an address table account with invalid data',
  InvalidAddressLookupTableIndex: 'Transaction address table lookup uses an invalid index',
  SanitizeFailure: 'Transaction failed to sanitize accounts offsets correctly',
};

const IX_TEXT: Record<string, string> = {
  InvalidArgument: 'invalid program argument',
  InvalidInstructionData: 'invalid instruction data',
  InvalidAccountData: 'invalid account data for instruction',
  InsufficientFunds: 'insufficient funds for instruction',
  MissingRequiredSignature: 'missing required signature for instruction',
  NotEnoughAccountKeys: 'insufficient account keys for instruction',
  UnsupportedProgramId: 'Unsupported program id',
  ComputationalBudgetExceeded: 'Computational budget exceeded',
  ReadonlyLamportChange: 'instruction changed the balance of a read-only account',
  ReadonlyDataModified: 'instruction modified data of a read-only account',
  InvalidAccountOwner: 'Invalid account owner',
  IncorrectProgramId: 'incorrect program id for instruction',
  InvalidSeeds: 'Provided seeds do not result in a valid address',
  IllegalOwner: 'Provided owner is not allowed',
};

/** `InstructionError` Display, e.g. `custom program error: 0x1771`. */
export function instructionErrorText(err: InstructionErrorValue): string {
  if (typeof err === 'object') return `custom program error: 0x${err.Custom.toString(16)}`;
  return IX_TEXT[err] ?? err;
}

/** `TransactionError` Display, e.g. `Error processing Instruction 0: custom program error: 0x1771`. */
export function transactionErrorText(err: TransactionErrorValue): string {
  if (typeof err === 'string') return TX_TEXT[err] ?? err;
  if ('InstructionError' in err) return `Error processing Instruction ${err.InstructionError[0]}: ${instructionErrorText(err.InstructionError[1])}`;
  if ('InsufficientFundsForRent' in err) {
    return `Transaction results in an account (${err.InsufficientFundsForRent.account_index}) with insufficient funds for rent`;
  }
  return `Transaction contains a duplicate instruction (${err.DuplicateInstruction}) that is not allowed`;
}

export function instructionError(index: number, err: InstructionErrorValue): TransactionErrorValue {
  return { InstructionError: [index, err] };
}
