/**
 * compact-u16 (Solana `short_vec` length): 1 to 3 bytes, 7 bits each, low bits first, 0x80 = more
 * follows. Only the minimal form is valid, the third byte must not set 0x80, and the value must
 * not exceed 0xffff (solana sdk/program/src/short_vec.rs).
 */
import { ErrorCode, TpError, invalidArgument } from '../errors.js';

/** readCompactU16 result: the read ran past `end`. */
export const COMPACT_U16_TRUNCATED = -1;
/** readCompactU16 result: non-minimal, longer than 3 bytes, or above 0xffff. */
export const COMPACT_U16_INVALID = -2;
export const COMPACT_U16_MAX = 0xffff;

/**
 * Reads the compact-u16 at `offset`, reading no byte at or past `end`. Returns
 * `value | size << 16` (size 1..3), or COMPACT_U16_TRUNCATED / COMPACT_U16_INVALID.
 * Allocation-free; the entry parser calls it on its hot path.
 */
export function readCompactU16(bytes: Uint8Array, offset: number, end: number): number {
  if (offset >= end) return COMPACT_U16_TRUNCATED;
  const b0 = bytes[offset]!;
  if (b0 < 0x80) return b0 | 0x10000;
  if (offset + 1 >= end) return COMPACT_U16_TRUNCATED;
  const b1 = bytes[offset + 1]!;
  // A zero continuation byte means a shorter encoding existed (alias, e.g. `80 00`).
  if (b1 === 0) return COMPACT_U16_INVALID;
  if (b1 < 0x80) return (b0 & 0x7f) | (b1 << 7) | 0x20000;
  if (offset + 2 >= end) return COMPACT_U16_TRUNCATED;
  const b2 = bytes[offset + 2]!;
  // b2 === 0: alias; b2 >= 0x80: a fourth byte; b2 > 3: above 0xffff.
  if (b2 === 0 || b2 > 3) return COMPACT_U16_INVALID;
  return (b0 & 0x7f) | ((b1 & 0x7f) << 7) | (b2 << 14) | 0x30000;
}

/** Bytes needed to encode `value` (0..0xffff). */
export function compactU16Size(value: number): number {
  return value < 0x80 ? 1 : value < 0x4000 ? 2 : 3;
}

/** Writes `value` at `offset`, returns the offset after it. Throws TpError(ArgumentInvalid) outside 0..0xffff. */
export function writeCompactU16(out: Uint8Array, offset: number, value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > COMPACT_U16_MAX) {
    throw invalidArgument('value', value, `compact-u16 value out of range: ${value}`);
  }
  if (value < 0x80) {
    out[offset] = value;
    return offset + 1;
  }
  out[offset] = (value & 0x7f) | 0x80;
  if (value < 0x4000) {
    out[offset + 1] = value >>> 7;
    return offset + 2;
  }
  out[offset + 1] = ((value >>> 7) & 0x7f) | 0x80;
  out[offset + 2] = value >>> 14;
  return offset + 3;
}

export function encodeCompactU16(value: number): Uint8Array {
  const out = new Uint8Array(compactU16Size(value));
  writeCompactU16(out, 0, value);
  return out;
}

/**
 * Decodes the compact-u16 at `offset`. Throws TpError(EntryMalformed) when it is truncated or
 * not a valid minimal encoding.
 */
export function decodeCompactU16(bytes: Uint8Array, offset = 0): { value: number; size: number } {
  const r = readCompactU16(bytes, offset, bytes.length);
  if (r < 0) {
    throw new TpError(
      ErrorCode.EntryMalformed,
      r === COMPACT_U16_TRUNCATED ? 'truncated compact-u16' : 'invalid compact-u16',
      { context: { offset } },
    );
  }
  return { value: r & 0xffff, size: r >>> 16 };
}
