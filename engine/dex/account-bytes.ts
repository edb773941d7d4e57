/**
 * Little-endian field access for pool accounts, and the checks every decoder starts with.
 *
 * Readers take the account bytes and an absolute offset; the decoders check the account size once
 * up front, so single reads do not re-check bounds. Writers are for the encoders (the simulator
 * writes accounts with them). Pubkeys are read and written as base58 text.
 */
import { base58 } from '../chain/index.js';
import { ErrorCode, TpError } from '../errors.js';
import type { Dex } from './types.js';

export const PUBKEY_BYTES = 32;
export const DISCRIMINATOR_BYTES = 8;

const U64_MASK = (1n << 64n) - 1n;
const U128_MASK = (1n << 128n) - 1n;
const I128_SIGN = 1n << 127n;
const TWO_128 = 1n << 128n;

export function readU8(data: Uint8Array, offset: number): number {
  return data[offset]!;
}

export function readU16(data: Uint8Array, offset: number): number {
  return data[offset]! | (data[offset + 1]! << 8);
}

export function readU32(data: Uint8Array, offset: number): number {
  return (data[offset]! | (data[offset + 1]! << 8) | (data[offset + 2]! << 16)) + data[offset + 3]! * 0x1000000;
}

export function readI32(data: Uint8Array, offset: number): number {
  return data[offset]! | (data[offset + 1]! << 8) | (data[offset + 2]! << 16) | (data[offset + 3]! << 24);
}

export function readU64(data: Uint8Array, offset: number): bigint {
  return (BigInt(readU32(data, offset + 4)) << 32n) | BigInt(readU32(data, offset));
}

export function readI64(data: Uint8Array, offset: number): bigint {
  return BigInt.asIntN(64, readU64(data, offset));
}

export function readU128(data: Uint8Array, offset: number): bigint {
  return (readU64(data, offset + 8) << 64n) | readU64(data, offset);
}

export function readI128(data: Uint8Array, offset: number): bigint {
  const u = readU128(data, offset);
  return u >= I128_SIGN ? u - TWO_128 : u;
}

export function readPubkey(data: Uint8Array, offset: number): string {
  return base58.encodeAt(data, offset, PUBKEY_BYTES);
}

export function writeU8(data: Uint8Array, offset: number, value: number): void {
  data[offset] = value & 0xff;
}

export function writeU16(data: Uint8Array, offset: number, value: number): void {
  data[offset] = value & 0xff;
  data[offset + 1] = (value >>> 8) & 0xff;
}

export function writeU32(data: Uint8Array, offset: number, value: number): void {
  data[offset] = value & 0xff;
  data[offset + 1] = (value >>> 8) & 0xff;
  data[offset + 2] = (value >>> 16) & 0xff;
  data[offset + 3] = (value >>> 24) & 0xff;
}

export const writeI32 = writeU32;

export function writeU64(data: Uint8Array, offset: number, value: bigint): void {
  const v = value & U64_MASK; // two's complement for negative i64 values
  writeU32(data, offset, Number(v & 0xffffffffn));
  writeU32(data, offset + 4, Number(v >> 32n));
}

export const writeI64 = writeU64;

export function writeU128(data: Uint8Array, offset: number, value: bigint): void {
  const v = value & U128_MASK; // two's complement for negative i128 values
  writeU64(data, offset, v & U64_MASK);
  writeU64(data, offset + 8, v >> 64n);
}

export const writeI128 = writeU128;

export function writePubkey(data: Uint8Array, offset: number, key: string): void {
  data.set(base58.decodePubkey(key), offset);
}

/** The 8-byte Anchor discriminator as a hex string, e.g. `3f95d10ce1806309`. */
export function discriminatorHex(data: Uint8Array): string {
  let hex = '';
  for (let i = 0; i < DISCRIMINATOR_BYTES && i < data.length; i++) {
    hex += data[i]!.toString(16).padStart(2, '0');
  }
  return hex;
}

export function hexBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function hasDiscriminator(data: Uint8Array, discriminator: Uint8Array): boolean {
  if (data.length < discriminator.length) return false;
  for (let i = 0; i < discriminator.length; i++) {
    if (data[i] !== discriminator[i]) return false;
  }
  return true;
}

/** Throws TpError(AccountSize) unless `data` is exactly `size` bytes long. */
export function expectSize(data: Uint8Array, size: number, dex: Dex, account: string, address?: string): void {
  if (data.length !== size) {
    throw new TpError(ErrorCode.AccountSize, `${account} account must be ${size} bytes, got ${data.length}`, {
      context: { dex, account, expected: size, actual: data.length, address },
    });
  }
}

/** Throws TpError(AccountDiscriminator) unless `data` starts with `discriminator`. */
export function expectDiscriminator(
  data: Uint8Array,
  discriminator: Uint8Array,
  dex: Dex,
  account: string,
  address?: string,
): void {
  if (!hasDiscriminator(data, discriminator)) {
    throw new TpError(
      ErrorCode.AccountDiscriminator,
      `${account} account has discriminator ${discriminatorHex(data)}, expected ${discriminatorHex(discriminator)}`,
      { context: { dex, account, address } },
    );
  }
}

export function invalidAccount(dex: Dex, account: string, message: string, address?: string): TpError {
  return new TpError(ErrorCode.AccountInvalid, `${account} account: ${message}`, {
    context: { dex, account, address },
  });
}
