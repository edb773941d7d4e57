import { base58 } from '../chain/index.js';
import type { AccountRecord } from './chain-backend.js';

/**
 * SPL Token `Mint` (82 bytes) and `Account` (165 bytes) layouts (docs/wire-formats.md §4.5), as the
 * simulator writes and updates them. Pack layouts, no discriminator:
 *
 *   Mint:    0 mint_authority COption<Pubkey> (u32 tag + 32); 36 supply u64; 44 decimals u8;
 *            45 is_initialized bool; 46 freeze_authority COption<Pubkey>.
 *   Account: 0 mint; 32 owner; 64 amount u64; 72 delegate COption<Pubkey>; 108 state u8
 *            (1 initialized); 109 is_native COption<u64> (the rent-exempt reserve of a wrapped
 *            SOL account); 121 delegated_amount u64; 129 close_authority COption<Pubkey>.
 *
 * Token-2022 accounts are the same bases, extended (engine/dex token-2022): a mint padded to 165
 * bytes then account type 1 and its extensions, a token account followed by type 2 and its.
 */

export const MINT_SIZE = 82;
export const TOKEN_ACCOUNT_SIZE = 165;
/** Where an extended account's type byte sits (1 mint, 2 token account), and the multisig size. */
const ACCOUNT_TYPE_OFFSET = 165;
const ACCOUNT_TYPE_MINT = 1;
const ACCOUNT_TYPE_ACCOUNT = 2;
const MULTISIG_SIZE = 355;

const MINT_AUTHORITY = 0;
const MINT_SUPPLY = 36;
const MINT_DECIMALS = 44;
const MINT_INITIALIZED = 45;
const MINT_FREEZE_AUTHORITY = 46;

const ACCOUNT_MINT = 0;
const ACCOUNT_OWNER = 32;
export const TOKEN_AMOUNT_OFFSET = 64;
const ACCOUNT_STATE = 108;
const ACCOUNT_IS_NATIVE = 109;

export const AccountState = { Uninitialized: 0, Initialized: 1, Frozen: 2 } as const;

/** SPL Token instruction tags the simulator executes. */
export const TokenInstruction = { Transfer: 3, MintTo: 7, CloseAccount: 9, TransferChecked: 12, MintToChecked: 14, SyncNative: 17 } as const;

/** SPL Token `TokenError` codes, reported as `{Custom: n}` like the program does. */
export const TokenError = {
  InsufficientFunds: 1,
  MintMismatch: 3,
  OwnerMismatch: 4,
  /** MintTo on a mint without a mint authority. */
  FixedSupply: 5,
  /** MintTo into a wrapped SOL account. */
  NativeNotSupported: 10,
  /** CloseAccount of an account that is not wrapped SOL and still holds tokens. */
  NonNativeHasBalance: 11,
  InvalidState: 13,
  Overflow: 14,
  AccountFrozen: 17,
  MintDecimalsMismatch: 18,
  /** SyncNative of an account that is not wrapped SOL. */
  NonNativeNotSupported: 19,
  /** Token-2022: a plain Transfer out of an account that withholds transfer fees. */
  MintRequiredForTransfer: 31,
} as const;

export interface MintFields {
  mintAuthority: string | null;
  supply: bigint;
  decimals: number;
  freezeAuthority: string | null;
}

export function encodeMint(fields: MintFields): Uint8Array {
  const data = new Uint8Array(MINT_SIZE);
  const view = new DataView(data.buffer);
  writeOptionalKey(data, MINT_AUTHORITY, fields.mintAuthority);
  view.setBigUint64(MINT_SUPPLY, fields.supply, true);
  data[MINT_DECIMALS] = fields.decimals;
  data[MINT_INITIALIZED] = 1;
  writeOptionalKey(data, MINT_FREEZE_AUTHORITY, fields.freezeAuthority);
  return data;
}

/** A mint's mint authority (base58), or null when it has none (fixed supply). */
export function mintAuthority(data: Uint8Array): string | null {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  return view.getUint32(MINT_AUTHORITY, true) === 1 ? base58.encodeAt(data, MINT_AUTHORITY + 4, 32) : null;
}

export function mintSupply(data: Uint8Array): bigint {
  return new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(MINT_SUPPLY, true);
}

/** A copy of a mint record with `supply`. */
export function withMintSupply(record: AccountRecord, supply: bigint): AccountRecord {
  const data = record.data.slice();
  new DataView(data.buffer, data.byteOffset, data.byteLength).setBigUint64(MINT_SUPPLY, supply, true);
  return { ...record, data };
}

/** The decimals of an initialized mint (either program, extended or not). */
export function mintDecimals(data: Uint8Array): number | undefined {
  const shape = data.length === MINT_SIZE || (data.length > ACCOUNT_TYPE_OFFSET && data.length !== MULTISIG_SIZE && data[ACCOUNT_TYPE_OFFSET] === ACCOUNT_TYPE_MINT);
  return shape && data[MINT_INITIALIZED] === 1 ? data[MINT_DECIMALS] : undefined;
}

export interface TokenAccountFields {
  mint: string;
  owner: string;
  amount: bigint;
  /** Wrapped SOL: the rent-exempt reserve held on top of `amount`. */
  nativeReserve?: bigint;
}

export function encodeTokenAccount(fields: TokenAccountFields): Uint8Array {
  const data = new Uint8Array(TOKEN_ACCOUNT_SIZE);
  data.set(base58.decodePubkey(fields.mint), ACCOUNT_MINT);
  data.set(base58.decodePubkey(fields.owner), ACCOUNT_OWNER);
  const view = new DataView(data.buffer);
  view.setBigUint64(TOKEN_AMOUNT_OFFSET, fields.amount, true);
  data[ACCOUNT_STATE] = AccountState.Initialized;
  if (fields.nativeReserve !== undefined) {
    view.setUint32(ACCOUNT_IS_NATIVE, 1, true);
    view.setBigUint64(ACCOUNT_IS_NATIVE + 4, fields.nativeReserve, true);
  }
  return data;
}

/** Whether `data` is an initialized (or frozen) token account, classic or Token-2022 extended. */
export function isTokenAccount(data: Uint8Array): boolean {
  const shape =
    data.length === TOKEN_ACCOUNT_SIZE || (data.length > ACCOUNT_TYPE_OFFSET && data.length !== MULTISIG_SIZE && data[ACCOUNT_TYPE_OFFSET] === ACCOUNT_TYPE_ACCOUNT);
  return shape && data[ACCOUNT_STATE] !== AccountState.Uninitialized;
}

export function tokenAccountState(data: Uint8Array): number {
  return data[ACCOUNT_STATE]!;
}

export function tokenAmount(data: Uint8Array): bigint {
  return new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(TOKEN_AMOUNT_OFFSET, true);
}

export function setTokenAmount(data: Uint8Array, amount: bigint): void {
  new DataView(data.buffer, data.byteOffset, data.byteLength).setBigUint64(TOKEN_AMOUNT_OFFSET, amount, true);
}

/** A wrapped SOL account's rent-exempt reserve (`is_native`), or null for other accounts. */
export function nativeReserve(data: Uint8Array): bigint | null {
  if (data[ACCOUNT_IS_NATIVE] !== 1) return null;
  return new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(ACCOUNT_IS_NATIVE + 4, true);
}

/** Whether the account is a wrapped SOL account (`is_native` set). */
export function isNativeTokenAccount(data: Uint8Array): boolean {
  return data[ACCOUNT_IS_NATIVE] === 1;
}

/** Whether the 32 bytes at `offset` equal the base58 key's bytes. */
function keyEquals(data: Uint8Array, offset: number, key: Uint8Array): boolean {
  for (let i = 0; i < 32; i++) if (data[offset + i] !== key[i]) return false;
  return true;
}

export function tokenAccountMintIs(data: Uint8Array, mint: Uint8Array): boolean {
  return keyEquals(data, ACCOUNT_MINT, mint);
}

export function tokenAccountOwnerIs(data: Uint8Array, owner: Uint8Array): boolean {
  return keyEquals(data, ACCOUNT_OWNER, owner);
}

/** The mint of a token account, as bytes (a view). */
export function tokenAccountMintBytes(data: Uint8Array): Uint8Array {
  return data.subarray(ACCOUNT_MINT, ACCOUNT_MINT + 32);
}

export function tokenAccountMint(data: Uint8Array): string {
  return base58.encodeAt(data, ACCOUNT_MINT, 32);
}

export function tokenAccountOwner(data: Uint8Array): string {
  return base58.encodeAt(data, ACCOUNT_OWNER, 32);
}

function writeOptionalKey(data: Uint8Array, offset: number, key: string | null): void {
  if (key === null) return;
  new DataView(data.buffer, data.byteOffset, data.byteLength).setUint32(offset, 1, true);
  data.set(base58.decodePubkey(key), offset + 4);
}

/**
 * A copy of a token account record holding `amount`. A wrapped SOL account's lamports move with
 * its amount (lamports = rent reserve + amount), as SyncNative keeps them.
 */
export function withTokenAmount(record: AccountRecord, amount: bigint): AccountRecord {
  const data = record.data.slice();
  const before = tokenAmount(data);
  setTokenAmount(data, amount);
  const lamports = isNativeTokenAccount(data) ? record.lamports - before + amount : record.lamports;
  return { ...record, lamports, data };
}
