/**
 * Mint accounts of the SPL Token program and of Token-2022: decoded with every bound checked, and
 * encoded (the simulator serves them).
 *
 * Base `Mint` (82 bytes, Pack layout, no discriminator): 0 mint_authority COption<Pubkey> (u32 tag
 * 0/1 + 32); 36 supply u64; 44 decimals u8; 45 is_initialized bool; 46 freeze_authority
 * COption<Pubkey>. An SPL Token mint is exactly that. A Token-2022 mint is that alone, or that,
 * zero padding to byte 165, account type 1 and TLV extensions (extensions.ts); of the extensions
 * only TransferFeeConfig is decoded, the others are listed by type and skipped.
 */
import { base58 } from '../../chain/index.js';
import { ErrorCode, TpError, invalidArgument } from '../../errors.js';
import { extensionEntries, findExtension, malformed, withExtensions, type AccountLabel, type ExtensionValue } from './extensions.js';
import {
  AccountType,
  ExtensionType,
  MAX_FEE_BASIS_POINTS,
  MINT_BASE_SIZE,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  TRANSFER_FEE_CONFIG_SIZE,
  TRANSFER_FEE_SIZE,
} from './token-programs.js';
import type { TransferFee, TransferFeeConfig } from './transfer-fee.js';

const MINT_AUTHORITY = 0;
const SUPPLY = 36;
const DECIMALS = 44;
const IS_INITIALIZED = 45;
const FREEZE_AUTHORITY = 46;

const FEE_CONFIG_AUTHORITY = 0;
const WITHDRAW_WITHHELD_AUTHORITY = 32;
const WITHHELD_AMOUNT = 64;
const OLDER_TRANSFER_FEE = 72;
const NEWER_TRANSFER_FEE = OLDER_TRANSFER_FEE + TRANSFER_FEE_SIZE;

/** A decoded mint of either token program. */
export interface DecodedMint {
  /** The mint's address, when known to the decoder's caller. */
  address?: string;
  /** The owner: SPL Token or Token-2022. */
  programId: string;
  mintAuthority: string | null;
  supply: bigint;
  decimals: number;
  freezeAuthority: string | null;
  /** Extension types present, in account order (Token-2022; empty for SPL Token and bare mints). */
  extensionTypes: readonly number[];
  /** The TransferFeeConfig extension; undefined when the mint has none (every SPL Token mint). */
  transferFeeConfig?: TransferFeeConfig;
}

/**
 * Decodes a mint account owned by `owner`.
 * Throws TpError: UnknownOwner (neither token program), AccountSize (an SPL Token mint not exactly
 * 82 bytes, a Token-2022 mint shorter than 82), AccountInvalid (not initialized, a bad option tag
 * or bool, a malformed extension area, a TransferFeeConfig of the wrong size or above 100 %).
 */
export function decodeMint(owner: string, data: Uint8Array, address?: string): DecodedMint {
  const label: AccountLabel = { account: 'Mint', address };
  if (owner !== TOKEN_PROGRAM_ID && owner !== TOKEN_2022_PROGRAM_ID) {
    throw new TpError(ErrorCode.UnknownOwner, `account owned by ${owner} is not a mint of either token program`, {
      context: { account: 'Mint', owner, address },
    });
  }
  const t22 = owner === TOKEN_2022_PROGRAM_ID;
  if (t22 ? data.length < MINT_BASE_SIZE : data.length !== MINT_BASE_SIZE) {
    throw new TpError(ErrorCode.AccountSize, `Mint account must be ${t22 ? 'at least ' : ''}${MINT_BASE_SIZE} bytes, got ${data.length}`, {
      context: { account: 'Mint', program: owner, expected: MINT_BASE_SIZE, actual: data.length, address },
    });
  }
  const initialized = data[IS_INITIALIZED]!;
  if (initialized === 0) throw invalid(owner, label, 'not initialized');
  if (initialized !== 1) throw invalid(owner, label, `is_initialized byte is ${initialized}`);
  const mint: DecodedMint = {
    programId: owner,
    mintAuthority: readOptionalKey(data, MINT_AUTHORITY, owner, label, 'mint_authority'),
    supply: readU64(data, SUPPLY),
    decimals: data[DECIMALS]!,
    freezeAuthority: readOptionalKey(data, FREEZE_AUTHORITY, owner, label, 'freeze_authority'),
    extensionTypes: [],
  };
  if (address !== undefined) mint.address = address;
  if (!t22) return mint;

  const entries = extensionEntries(data, MINT_BASE_SIZE, AccountType.Mint, label);
  mint.extensionTypes = entries.map((e) => e.type);
  const fee = findExtension(entries, ExtensionType.TransferFeeConfig);
  if (fee !== undefined) {
    if (fee.length !== TRANSFER_FEE_CONFIG_SIZE) {
      throw malformed(label, `TransferFeeConfig is ${fee.length} bytes, expected ${TRANSFER_FEE_CONFIG_SIZE}`);
    }
    mint.transferFeeConfig = decodeTransferFeeConfig(data, fee.offset, label);
  }
  return mint;
}

function decodeTransferFeeConfig(data: Uint8Array, at: number, label: AccountLabel): TransferFeeConfig {
  return {
    transferFeeConfigAuthority: readNonZeroKey(data, at + FEE_CONFIG_AUTHORITY),
    withdrawWithheldAuthority: readNonZeroKey(data, at + WITHDRAW_WITHHELD_AUTHORITY),
    withheldAmount: readU64(data, at + WITHHELD_AMOUNT),
    olderTransferFee: decodeTransferFee(data, at + OLDER_TRANSFER_FEE, label, 'older'),
    newerTransferFee: decodeTransferFee(data, at + NEWER_TRANSFER_FEE, label, 'newer'),
  };
}

function decodeTransferFee(data: Uint8Array, at: number, label: AccountLabel, which: string): TransferFee {
  const bps = data[at + 16]! | (data[at + 17]! << 8);
  // SetTransferFee refuses rates above 100 % (TransferFeeExceedsMaximum): such bytes are damaged.
  if (bps > MAX_FEE_BASIS_POINTS) throw malformed(label, `${which} transfer fee of ${bps} basis points is above ${MAX_FEE_BASIS_POINTS}`);
  return { epoch: readU64(data, at), maximumFee: readU64(data, at + 8), transferFeeBasisPoints: bps };
}

/** Fields of a mint to encode. */
export interface MintFields {
  /** Default SPL Token. A TransferFeeConfig needs Token-2022. */
  programId?: string;
  mintAuthority: string | null;
  supply: bigint;
  decimals: number;
  freezeAuthority: string | null;
  transferFeeConfig?: TransferFeeConfig;
}

/** A mint account's bytes: 82 bytes, or (with a TransferFeeConfig) the Token-2022 extended form. */
export function encodeMint(fields: MintFields): Uint8Array {
  const base = new Uint8Array(MINT_BASE_SIZE);
  writeOptionalKey(base, MINT_AUTHORITY, fields.mintAuthority);
  writeU64(base, SUPPLY, fields.supply);
  base[DECIMALS] = fields.decimals;
  base[IS_INITIALIZED] = 1;
  writeOptionalKey(base, FREEZE_AUTHORITY, fields.freezeAuthority);
  const extensions: ExtensionValue[] = [];
  if (fields.transferFeeConfig !== undefined) {
    if ((fields.programId ?? TOKEN_PROGRAM_ID) !== TOKEN_2022_PROGRAM_ID) throw invalidArgument('fields.programId', fields.programId ?? TOKEN_PROGRAM_ID, 'a TransferFeeConfig needs a Token-2022 mint');
    extensions.push({ type: ExtensionType.TransferFeeConfig, value: encodeTransferFeeConfig(fields.transferFeeConfig) });
  }
  return withExtensions(base, MINT_BASE_SIZE, AccountType.Mint, extensions);
}

export function encodeTransferFeeConfig(config: TransferFeeConfig): Uint8Array {
  const value = new Uint8Array(TRANSFER_FEE_CONFIG_SIZE);
  if (config.transferFeeConfigAuthority !== null) value.set(base58.decodePubkey(config.transferFeeConfigAuthority), FEE_CONFIG_AUTHORITY);
  if (config.withdrawWithheldAuthority !== null) value.set(base58.decodePubkey(config.withdrawWithheldAuthority), WITHDRAW_WITHHELD_AUTHORITY);
  writeU64(value, WITHHELD_AMOUNT, config.withheldAmount);
  for (const [at, fee] of [
    [OLDER_TRANSFER_FEE, config.olderTransferFee],
    [NEWER_TRANSFER_FEE, config.newerTransferFee],
  ] as const) {
    writeU64(value, at, fee.epoch);
    writeU64(value, at + 8, fee.maximumFee);
    value[at + 16] = fee.transferFeeBasisPoints & 0xff;
    value[at + 17] = fee.transferFeeBasisPoints >>> 8;
  }
  return value;
}

// ---- fields

function invalid(owner: string, label: AccountLabel, message: string): TpError {
  return new TpError(ErrorCode.AccountInvalid, `Mint account: ${message}`, { context: { account: 'Mint', program: owner, address: label.address } });
}

function readU64(data: Uint8Array, at: number): bigint {
  return new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(at, true);
}

function writeU64(data: Uint8Array, at: number, value: bigint): void {
  new DataView(data.buffer, data.byteOffset, data.byteLength).setBigUint64(at, value, true);
}

/** `COption<Pubkey>`: tag u32 0 (none) or 1 (some), then the key; any other tag is invalid. */
function readOptionalKey(data: Uint8Array, at: number, owner: string, label: AccountLabel, field: string): string | null {
  const tag = readU32(data, at);
  if (tag === 0) return null;
  if (tag === 1) return base58.encodeAt(data, at + 4, 32);
  throw invalid(owner, label, `${field} option tag is ${tag}`);
}

function writeOptionalKey(data: Uint8Array, at: number, key: string | null): void {
  if (key === null) return;
  data[at] = 1;
  data.set(base58.decodePubkey(key), at + 4);
}

/** `OptionalNonZeroPubkey`: all zeros is none. */
function readNonZeroKey(data: Uint8Array, at: number): string | null {
  for (let i = 0; i < 32; i++) if (data[at + i] !== 0) return base58.encodeAt(data, at, 32);
  return null;
}

function readU32(data: Uint8Array, at: number): number {
  return (data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16)) + data[at + 3]! * 0x1000000;
}
