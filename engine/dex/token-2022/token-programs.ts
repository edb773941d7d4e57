/**
 * The two token programs and the shape of their accounts with extensions (a leaf of engine/dex).
 *
 * Token-2022 stores extensions after a base state padded to the token account's 165 bytes: a mint
 * keeps its 82-byte base, zeros up to byte 165, then one account-type byte (1 mint, 2 token
 * account), then TLV entries: type u16 LE, length u16 LE, value. A token account's base is the full
 * 165 bytes, so its type byte follows at once. An account of exactly 355 bytes is a multisig and
 * never carries extensions. A type of 0 ends the entries; fewer than two bytes left end them too.
 * (token-2022 interface/src/extension/mod.rs: `BASE_ACCOUNT_LENGTH`, `type_and_tlv_indices`,
 * `get_extension_indices`, `ExtensionType`, `AccountType`.)
 */

import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '../../chain/index.js';

export { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID };

/** Base sizes: `Mint::LEN`, `Account::LEN`, `Multisig::LEN`. */
export const MINT_BASE_SIZE = 82;
export const TOKEN_ACCOUNT_BASE_SIZE = 165;
export const MULTISIG_SIZE = 355;
/** Where the account-type byte of an extended mint or account sits, and where its TLV entries start. */
export const ACCOUNT_TYPE_OFFSET = TOKEN_ACCOUNT_BASE_SIZE;
export const TLV_START = ACCOUNT_TYPE_OFFSET + 1;
/** Type u16 + length u16 before each value. */
export const TLV_HEADER_SIZE = 4;

/** `AccountType`: the byte after the padded base. */
export const AccountType = { Uninitialized: 0, Mint: 1, Account: 2 } as const;
export type AccountType = (typeof AccountType)[keyof typeof AccountType];

/** `ExtensionType` numbers the engine reads or writes (the program knows more; others are skipped). */
export const ExtensionType = {
  Uninitialized: 0,
  TransferFeeConfig: 1,
  TransferFeeAmount: 2,
  MintCloseAuthority: 3,
  ImmutableOwner: 7,
} as const;
export type ExtensionType = (typeof ExtensionType)[keyof typeof ExtensionType];

/**
 * `TransferFeeConfig` value: 0 transfer_fee_config_authority (32, zeros = none); 32
 * withdraw_withheld_authority (32); 64 withheld_amount u64; 72 older TransferFee; 90 newer
 * TransferFee. `TransferFee`: +0 epoch u64; +8 maximum_fee u64; +16 transfer_fee_basis_points u16.
 */
export const TRANSFER_FEE_CONFIG_SIZE = 108;
export const TRANSFER_FEE_SIZE = 18;
/** `TransferFeeAmount` value: withheld_amount u64. */
export const TRANSFER_FEE_AMOUNT_SIZE = 8;

/** 100 %: the most a transfer fee may be (`MAX_FEE_BASIS_POINTS`). */
export const MAX_FEE_BASIS_POINTS = 10_000;

/** Whether `owner` is one of the two token programs. */
export function isTokenProgram(owner: string): boolean {
  return owner === TOKEN_PROGRAM_ID || owner === TOKEN_2022_PROGRAM_ID;
}
