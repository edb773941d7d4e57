/**
 * The TLV extension area of Token-2022 mints and token accounts: reading it with every bound
 * checked (malformed bytes are a TpError(AccountInvalid), never an out-of-range read), and writing
 * it (the simulator's accounts). Layout in token-programs.ts.
 */
import { ErrorCode, TpError, invalidArgument } from '../../errors.js';
import {
  ACCOUNT_TYPE_OFFSET,
  ExtensionType,
  MULTISIG_SIZE,
  TLV_HEADER_SIZE,
  TLV_START,
  TOKEN_2022_PROGRAM_ID,
  type AccountType,
} from './token-programs.js';

/** One TLV entry: its type and where its value lies in the account bytes. */
export interface ExtensionEntry {
  type: number;
  /** Offset of the value in the account data. */
  offset: number;
  length: number;
}

const NO_ENTRIES: readonly ExtensionEntry[] = Object.freeze([]);

/** Which account the bytes are meant to be, for error messages and context. */
export interface AccountLabel {
  /** `Mint` or `TokenAccount`. */
  account: string;
  address?: string | undefined;
}

export function malformed(label: AccountLabel, message: string, extra: { size?: number } = {}): TpError {
  return new TpError(ErrorCode.AccountInvalid, `${label.account} account: ${message}`, {
    context: { account: label.account, program: TOKEN_2022_PROGRAM_ID, address: label.address, ...extra },
  });
}

/**
 * The extension entries of a Token-2022 account whose base state is `baseSize` bytes (82 for a
 * mint, 165 for a token account), as the program reads them (`StateWithExtensions::unpack` and
 * `get_extension`):
 * - exactly the base size, or 355 bytes (a multisig): no extensions;
 * - otherwise the bytes from `baseSize` to 165 must be zero, byte 165 must be `accountType`, and
 *   the entries follow from 166; a type of 0, or fewer than two bytes left, ends them.
 * Throws TpError(AccountInvalid) for a short extension area, non-zero padding, another account
 * type, an entry header cut short, or a value running past the end. Types the engine does not know
 * are returned like any other (callers skip them).
 */
export function extensionEntries(data: Uint8Array, baseSize: number, accountType: AccountType, label: AccountLabel): readonly ExtensionEntry[] {
  const size = data.length;
  if (size === baseSize || size === MULTISIG_SIZE) return NO_ENTRIES;
  if (size < TLV_START) {
    throw malformed(label, `${size} bytes: extended accounts need at least ${TLV_START} (base, padding, account type)`, { size });
  }
  for (let i = baseSize; i < ACCOUNT_TYPE_OFFSET; i++) {
    if (data[i] !== 0) throw malformed(label, `padding byte ${i} is ${data[i]}, not 0`, { size });
  }
  const type = data[ACCOUNT_TYPE_OFFSET]!;
  if (type !== accountType) throw malformed(label, `account type byte is ${type}, expected ${accountType}`, { size });
  const entries: ExtensionEntry[] = [];
  let at = TLV_START;
  while (at + 2 <= size) {
    const extension = data[at]! | (data[at + 1]! << 8);
    if (extension === ExtensionType.Uninitialized) break;
    if (at + TLV_HEADER_SIZE > size) throw malformed(label, `extension ${extension} at ${at}: header cut short`, { size });
    const length = data[at + 2]! | (data[at + 3]! << 8);
    const offset = at + TLV_HEADER_SIZE;
    if (offset + length > size) {
      throw malformed(label, `extension ${extension} at ${at}: ${length} bytes run past the end (${size})`, { size });
    }
    entries.push({ type: extension, offset, length });
    at = offset + length;
  }
  return entries;
}

/** The first entry of `type` (the program reads the first one), or undefined. */
export function findExtension(entries: readonly ExtensionEntry[], type: number): ExtensionEntry | undefined {
  for (const entry of entries) if (entry.type === type) return entry;
  return undefined;
}

/** An extension to write: its type and value bytes. */
export interface ExtensionValue {
  type: number;
  value: Uint8Array;
}

/**
 * An extended account's bytes: `base` (its base state, `baseSize` bytes), zero padding to 165,
 * the account type, then the entries in order. With no entries, the base alone.
 */
export function withExtensions(base: Uint8Array, baseSize: number, accountType: AccountType, extensions: readonly ExtensionValue[]): Uint8Array {
  if (base.length !== baseSize) throw invalidArgument('base', base.length, `base state must be ${baseSize} bytes, got ${base.length}`);
  if (extensions.length === 0) return base.slice();
  let size = TLV_START;
  for (const e of extensions) size += TLV_HEADER_SIZE + e.value.length;
  // A multisig's size is never an extended account's: the program pads such an account by one type.
  if (size === MULTISIG_SIZE) size += 2;
  const data = new Uint8Array(size);
  data.set(base, 0);
  data[ACCOUNT_TYPE_OFFSET] = accountType;
  let at = TLV_START;
  for (const e of extensions) {
    if (e.value.length > 0xffff) throw invalidArgument('extensions.value', e.value.length, `extension ${e.type} value of ${e.value.length} bytes, more than 65535`);
    data[at] = e.type & 0xff;
    data[at + 1] = e.type >>> 8;
    data[at + 2] = e.value.length & 0xff;
    data[at + 3] = e.value.length >>> 8;
    data.set(e.value, at + TLV_HEADER_SIZE);
    at += TLV_HEADER_SIZE + e.value.length;
  }
  return data;
}
