import { readCompactU16 } from './compact-u16.js';
import { PUBKEY_BYTES } from './parse-layout.js';

/**
 * Walks over the variable-length sections of a message that the parser has already validated
 * (its records give where they start and how many there are): compiled instructions and
 * address-table lookups, as views into the bytes. For inspection and the simulator's runtime; the
 * hot path reads records, not these.
 */

export interface InstructionView {
  programIdIndex: number;
  accounts: Uint8Array;
  data: Uint8Array;
}

export interface LookupView {
  /** Offset of the lookup table's 32-byte address. */
  tableOffset: number;
  writableIndexes: Uint8Array;
  readonlyIndexes: Uint8Array;
}

/** `count` instructions from `offset` (TX_IX_OFFSET). */
export function readInstructions(bytes: Uint8Array, offset: number, count: number): InstructionView[] {
  const out: InstructionView[] = [];
  let p = offset;
  for (let i = 0; i < count; i++) {
    const programIdIndex = bytes[p++]!;
    const a = readCompactU16(bytes, p, bytes.length);
    p += a >>> 16;
    const accounts = bytes.subarray(p, p + (a & 0xffff));
    p += a & 0xffff;
    const d = readCompactU16(bytes, p, bytes.length);
    p += d >>> 16;
    const data = bytes.subarray(p, p + (d & 0xffff));
    p += d & 0xffff;
    out.push({ programIdIndex, accounts, data });
  }
  return out;
}

/** `count` address-table lookups from `offset` (TX_LOOKUP_OFFSET). */
export function readLookups(bytes: Uint8Array, offset: number, count: number): LookupView[] {
  const out: LookupView[] = [];
  let p = offset;
  for (let l = 0; l < count; l++) {
    const tableOffset = p;
    p += PUBKEY_BYTES;
    const w = readCompactU16(bytes, p, bytes.length);
    p += w >>> 16;
    const writableIndexes = bytes.subarray(p, p + (w & 0xffff));
    p += w & 0xffff;
    const r = readCompactU16(bytes, p, bytes.length);
    p += r >>> 16;
    const readonlyIndexes = bytes.subarray(p, p + (r & 0xffff));
    p += r & 0xffff;
    out.push({ tableOffset, writableIndexes, readonlyIndexes });
  }
  return out;
}
