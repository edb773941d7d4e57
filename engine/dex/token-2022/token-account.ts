/**
 * Token-2022 token accounts with extensions: the 165-byte base (the SPL Token `Account` layout:
 * 0 mint, 32 owner, 64 amount u64, 108 state), account type 2 at 165, then TLV entries. An account
 * of a mint with a transfer fee carries TransferFeeAmount (the fees withheld on transfers into it);
 * associated token accounts also carry ImmutableOwner (no value).
 */
import { base58 } from '../../chain/index.js';
import { extensionEntries, findExtension, malformed, withExtensions, type ExtensionValue } from './extensions.js';
import { AccountType, ExtensionType, TOKEN_ACCOUNT_BASE_SIZE, TRANSFER_FEE_AMOUNT_SIZE } from './token-programs.js';

const MINT = 0;
const OWNER = 32;
const AMOUNT = 64;
const STATE = 108;
const STATE_INITIALIZED = 1;

/** Fields of a Token-2022 token account to encode. */
export interface ExtendedTokenAccountFields {
  mint: string;
  owner: string;
  amount: bigint;
  /** Writes a TransferFeeAmount extension holding this (accounts of a mint with a transfer fee). */
  withheldAmount?: bigint;
  /** Writes the ImmutableOwner extension (associated token accounts). */
  immutableOwner?: boolean;
}

/** An initialized Token-2022 token account's bytes (TransferFeeAmount first, then ImmutableOwner). */
export function encodeExtendedTokenAccount(fields: ExtendedTokenAccountFields): Uint8Array {
  const base = new Uint8Array(TOKEN_ACCOUNT_BASE_SIZE);
  base.set(base58.decodePubkey(fields.mint), MINT);
  base.set(base58.decodePubkey(fields.owner), OWNER);
  new DataView(base.buffer).setBigUint64(AMOUNT, fields.amount, true);
  base[STATE] = STATE_INITIALIZED;
  const extensions: ExtensionValue[] = [];
  if (fields.withheldAmount !== undefined) {
    const value = new Uint8Array(TRANSFER_FEE_AMOUNT_SIZE);
    new DataView(value.buffer).setBigUint64(0, fields.withheldAmount, true);
    extensions.push({ type: ExtensionType.TransferFeeAmount, value });
  }
  if (fields.immutableOwner === true) extensions.push({ type: ExtensionType.ImmutableOwner, value: new Uint8Array(0) });
  return withExtensions(base, TOKEN_ACCOUNT_BASE_SIZE, AccountType.Account, extensions);
}

/**
 * Where the withheld amount (TransferFeeAmount, u64) of a token account lies in its bytes;
 * undefined when it has no such extension (any SPL Token account, and Token-2022 accounts of
 * mints without a fee). Throws TpError(AccountInvalid) for a malformed extension area or a
 * TransferFeeAmount that is not 8 bytes.
 */
export function withheldAmountOffset(data: Uint8Array, address?: string): number | undefined {
  const label = { account: 'TokenAccount', address };
  const entry = findExtension(extensionEntries(data, TOKEN_ACCOUNT_BASE_SIZE, AccountType.Account, label), ExtensionType.TransferFeeAmount);
  if (entry === undefined) return undefined;
  if (entry.length !== TRANSFER_FEE_AMOUNT_SIZE) throw malformed(label, `TransferFeeAmount is ${entry.length} bytes, expected ${TRANSFER_FEE_AMOUNT_SIZE}`);
  return entry.offset;
}

/** The fees withheld in a token account, undefined when it has no TransferFeeAmount. Throws as withheldAmountOffset. */
export function withheldAmount(data: Uint8Array, address?: string): bigint | undefined {
  const at = withheldAmountOffset(data, address);
  return at === undefined ? undefined : new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(at, true);
}
