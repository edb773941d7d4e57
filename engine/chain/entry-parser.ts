/**
 * The TypeScript entry parser: one pass over a ShredStream `Entry.entries` payload (bincode
 * `Vec<Entry>` of legacy and v0 transactions) writing the records of parse-layout.ts.
 *
 * Where parse-layout.ts leaves a detail open, this parser decides as follows (the native parser
 * must do the same; the fuzz test compares them):
 * - COUNT_ERROR_OFFSET is 0 when the status is Ok.
 * - Truncated inside a compact-u16 points at the compact-u16's first byte; a fixed-size read
 *   (u64, hash, the header bytes after the first message byte, signatures, keys, blockhash, a
 *   lookup table key, an index or data array) points at the first byte of that read.
 * - Version is checked on the first message byte, before the rest of the header is read.
 * - The 256-account limit applies to legacy messages too (their looked-up count is 0).
 * - OutputFull is raised right before the write that does not fit: an entry record after its tx
 *   count has been read and checked (offset = the entry's first byte), a program index when its
 *   instruction's program-id index has been read and checked (offset = that byte), a transaction
 *   record after the whole transaction has been parsed and checked (offset = its first byte).
 * - TX_IX_OFFSET is the offset right after the instruction count, even when the count is 0.
 * - On every return `counts` holds the records written so far.
 *
 * Hot-path rules: no allocation, no closures, every length read off the wire is compared with the
 * bytes that remain before it is used, u64 counts are read as two u32 words.
 */
import { COMPACT_U16_TRUNCATED, readCompactU16 } from './compact-u16.js';
import {
  COUNT_ENTRIES,
  COUNT_ERROR_OFFSET,
  COUNT_PROGRAMS,
  COUNT_TXS,
  ENTRY_FIRST_TX,
  ENTRY_HASH_OFFSET,
  ENTRY_NUM_HASHES_HI,
  ENTRY_NUM_HASHES_LO,
  ENTRY_STRIDE,
  ENTRY_TX_COUNT,
  HASH_BYTES,
  MAX_TX_ACCOUNTS,
  MIN_ENTRY_BYTES,
  ParseStatus,
  PUBKEY_BYTES,
  SIGNATURE_BYTES,
  TX_BLOCKHASH_OFFSET,
  TX_END,
  TX_ENTRY,
  TX_HEADER,
  TX_IX_COUNT,
  TX_IX_OFFSET,
  TX_KEY_COUNT,
  TX_KEYS_OFFSET,
  TX_LOOKUP_COUNT,
  TX_LOOKUP_OFFSET,
  TX_PROGRAMS_COUNT,
  TX_PROGRAMS_START,
  TX_SIG_COUNT,
  TX_SIG_OFFSET,
  TX_START,
  TX_STRIDE,
  TX_VERSION,
  VERSION_LEGACY,
  type ParseEntriesFn,
} from './parse-layout.js';

const OK = ParseStatus.Ok;
const TRUNCATED = ParseStatus.Truncated;
const COUNT_TOO_LARGE = ParseStatus.CountTooLarge;
const COMPACT_U16 = ParseStatus.CompactU16;
const VERSION = ParseStatus.Version;
const HEADER = ParseStatus.Header;
const ACCOUNT_INDEX = ParseStatus.AccountIndex;
const OUTPUT_FULL = ParseStatus.OutputFull;

/**
 * "Seen in this transaction" marks for program-id indexes: programStamp[i] === stamp means index i
 * is already in `programs` for the current transaction. Cleared once per call; the stamp is the
 * transaction's number in the call plus one, so nothing is cleared between transactions.
 */
const programStamp = new Uint32Array(256);

function finish(
  counts: Uint32Array,
  status: ParseStatus,
  errorOffset: number,
  entryCount: number,
  txCount: number,
  programCount: number,
): ParseStatus {
  counts[COUNT_ENTRIES] = entryCount;
  counts[COUNT_TXS] = txCount;
  counts[COUNT_PROGRAMS] = programCount;
  counts[COUNT_ERROR_OFFSET] = errorOffset;
  return status;
}

function readU32(bytes: Uint8Array, p: number): number {
  return (bytes[p]! | (bytes[p + 1]! << 8) | (bytes[p + 2]! << 16) | (bytes[p + 3]! << 24)) >>> 0;
}

/**
 * Second pass of the account-index check (cold: only runs when some index is out of range).
 * The instructions were fully validated by the first pass. Returns the offset of the first
 * account index >= total.
 */
function firstBadAccountIndex(bytes: Uint8Array, p: number, ixCount: number, total: number): number {
  for (let i = 0; i < ixCount; i++) {
    p++; // program-id index
    const a = readCompactU16(bytes, p, bytes.length);
    p += a >>> 16;
    const end = p + (a & 0xffff);
    for (; p < end; p++) if (bytes[p]! >= total) return p;
    const d = readCompactU16(bytes, p, bytes.length);
    p += (d >>> 16) + (d & 0xffff);
  }
  return -1; // unreachable when the first pass saw an index >= total
}

export const parseEntriesInto: ParseEntriesFn = function parseEntriesInto(
  bytes: Uint8Array,
  entries: Uint32Array,
  txs: Uint32Array,
  programs: Uint8Array,
  counts: Uint32Array,
): ParseStatus {
  const len = bytes.length;
  const entryCap = Math.floor(entries.length / ENTRY_STRIDE);
  const txCap = Math.floor(txs.length / TX_STRIDE);
  const programCap = programs.length;
  let txCount = 0;
  let programCount = 0;
  let stamp = 0;
  programStamp.fill(0);

  if (len < 8) return finish(counts, TRUNCATED, 0, 0, 0, 0);
  const entryTotal = readU32(bytes, 0);
  if (readU32(bytes, 4) !== 0 || entryTotal * MIN_ENTRY_BYTES > len - 8) {
    return finish(counts, COUNT_TOO_LARGE, 0, 0, 0, 0);
  }
  let p = 8;

  for (let e = 0; e < entryTotal; e++) {
    const entryStart = p;
    if (p + MIN_ENTRY_BYTES > len) {
      const at = p + 8 > len ? p : p + 8 + HASH_BYTES > len ? p + 8 : p + 8 + HASH_BYTES;
      return finish(counts, TRUNCATED, at, e, txCount, programCount);
    }
    const txTotal = readU32(bytes, p + 40);
    p += MIN_ENTRY_BYTES;
    if (readU32(bytes, p - 4) !== 0 || txTotal > len - p) {
      return finish(counts, COUNT_TOO_LARGE, entryStart + 40, e, txCount, programCount);
    }
    if (e >= entryCap) return finish(counts, OUTPUT_FULL, entryStart, e, txCount, programCount);
    const eo = e * ENTRY_STRIDE;
    entries[eo + ENTRY_NUM_HASHES_LO] = readU32(bytes, entryStart);
    entries[eo + ENTRY_NUM_HASHES_HI] = readU32(bytes, entryStart + 4);
    entries[eo + ENTRY_HASH_OFFSET] = entryStart + 8;
    entries[eo + ENTRY_TX_COUNT] = txTotal;
    entries[eo + ENTRY_FIRST_TX] = txCount;

    for (let t = 0; t < txTotal; t++) {
      const txStart = p;
      let r: number;
      let b: number;

      // signatures
      if (p < len && (b = bytes[p]!) < 0x80) {
        r = b;
        p++;
      } else {
        r = readCompactU16(bytes, p, len);
        if (r < 0) {
          return finish(counts, r === COMPACT_U16_TRUNCATED ? TRUNCATED : COMPACT_U16, p, e + 1, txCount, programCount);
        }
        p += r >>> 16;
        r &= 0xffff;
      }
      const sigCount = r;
      const sigOffset = p;
      p += sigCount * SIGNATURE_BYTES;
      if (p > len) return finish(counts, TRUNCATED, sigOffset, e + 1, txCount, programCount);

      // message header
      const messageStart = p;
      if (p >= len) return finish(counts, TRUNCATED, p, e + 1, txCount, programCount);
      b = bytes[p++]!;
      let version: number;
      let numRequired: number;
      let numReadonlySigned: number;
      let numReadonlyUnsigned: number;
      if (b >= 0x80) {
        if (b !== 0x80) return finish(counts, VERSION, messageStart, e + 1, txCount, programCount);
        version = 0;
        if (p + 3 > len) return finish(counts, TRUNCATED, p, e + 1, txCount, programCount);
        numRequired = bytes[p]!;
        numReadonlySigned = bytes[p + 1]!;
        numReadonlyUnsigned = bytes[p + 2]!;
        p += 3;
      } else {
        version = VERSION_LEGACY;
        numRequired = b;
        if (p + 2 > len) return finish(counts, TRUNCATED, p, e + 1, txCount, programCount);
        numReadonlySigned = bytes[p]!;
        numReadonlyUnsigned = bytes[p + 1]!;
        p += 2;
      }

      // static keys
      if (p < len && (b = bytes[p]!) < 0x80) {
        r = b;
        p++;
      } else {
        r = readCompactU16(bytes, p, len);
        if (r < 0) {
          return finish(counts, r === COMPACT_U16_TRUNCATED ? TRUNCATED : COMPACT_U16, p, e + 1, txCount, programCount);
        }
        p += r >>> 16;
        r &= 0xffff;
      }
      const keyCount = r;
      // sanitize: one signature per required signer; the fee payer is a writable signer; the
      // header's accounts exist.
      if (
        sigCount !== numRequired ||
        numReadonlySigned >= numRequired ||
        numRequired + numReadonlyUnsigned > keyCount
      ) {
        return finish(counts, HEADER, messageStart, e + 1, txCount, programCount);
      }
      const keysOffset = p;
      p += keyCount * PUBKEY_BYTES;
      if (p > len) return finish(counts, TRUNCATED, keysOffset, e + 1, txCount, programCount);
      const blockhashOffset = p;
      p += HASH_BYTES;
      if (p > len) return finish(counts, TRUNCATED, blockhashOffset, e + 1, txCount, programCount);

      // instructions, first pass
      if (p < len && (b = bytes[p]!) < 0x80) {
        r = b;
        p++;
      } else {
        r = readCompactU16(bytes, p, len);
        if (r < 0) {
          return finish(counts, r === COMPACT_U16_TRUNCATED ? TRUNCATED : COMPACT_U16, p, e + 1, txCount, programCount);
        }
        p += r >>> 16;
        r &= 0xffff;
      }
      const ixCount = r;
      const ixOffset = p;
      const programsStart = programCount;
      stamp++;
      let maxAccountIndex = 0;
      for (let i = 0; i < ixCount; i++) {
        if (p >= len) return finish(counts, TRUNCATED, p, e + 1, txCount, programCount);
        const programIndex = bytes[p]!;
        if (programIndex >= keyCount) return finish(counts, ACCOUNT_INDEX, p, e + 1, txCount, programCount);
        if (programStamp[programIndex] !== stamp) {
          if (programCount >= programCap) return finish(counts, OUTPUT_FULL, p, e + 1, txCount, programCount);
          programStamp[programIndex] = stamp;
          programs[programCount++] = programIndex;
        }
        p++;

        if (p < len && (b = bytes[p]!) < 0x80) {
          r = b;
          p++;
        } else {
          r = readCompactU16(bytes, p, len);
          if (r < 0) {
            return finish(counts, r === COMPACT_U16_TRUNCATED ? TRUNCATED : COMPACT_U16, p, e + 1, txCount, programCount);
          }
          p += r >>> 16;
          r &= 0xffff;
        }
        const accountsEnd = p + r;
        if (accountsEnd > len) return finish(counts, TRUNCATED, p, e + 1, txCount, programCount);
        for (; p < accountsEnd; p++) {
          // max without a branch: indexes come in no order, so `if (a > max)` mispredicts
          const a = bytes[p]!;
          maxAccountIndex += (a - maxAccountIndex) & ((maxAccountIndex - a) >> 31);
        }

        if (p < len && (b = bytes[p]!) < 0x80) {
          r = b;
          p++;
        } else {
          r = readCompactU16(bytes, p, len);
          if (r < 0) {
            return finish(counts, r === COMPACT_U16_TRUNCATED ? TRUNCATED : COMPACT_U16, p, e + 1, txCount, programCount);
          }
          p += r >>> 16;
          r &= 0xffff;
        }
        if (p + r > len) return finish(counts, TRUNCATED, p, e + 1, txCount, programCount);
        p += r;
      }

      // address-table lookups (v0)
      let lookupCount = 0;
      let lookupOffset = 0;
      let lookedUp = 0;
      if (version === 0) {
        if (p < len && (b = bytes[p]!) < 0x80) {
          r = b;
          p++;
        } else {
          r = readCompactU16(bytes, p, len);
          if (r < 0) {
            return finish(counts, r === COMPACT_U16_TRUNCATED ? TRUNCATED : COMPACT_U16, p, e + 1, txCount, programCount);
          }
          p += r >>> 16;
          r &= 0xffff;
        }
        lookupCount = r;
        if (lookupCount > 0) lookupOffset = p;
        for (let l = 0; l < lookupCount; l++) {
          if (p + PUBKEY_BYTES > len) return finish(counts, TRUNCATED, p, e + 1, txCount, programCount);
          p += PUBKEY_BYTES;
          // writable indexes, then readonly indexes
          for (let k = 0; k < 2; k++) {
            if (p < len && (b = bytes[p]!) < 0x80) {
              r = b;
              p++;
            } else {
              r = readCompactU16(bytes, p, len);
              if (r < 0) {
                return finish(counts, r === COMPACT_U16_TRUNCATED ? TRUNCATED : COMPACT_U16, p, e + 1, txCount, programCount);
              }
              p += r >>> 16;
              r &= 0xffff;
            }
            if (p + r > len) return finish(counts, TRUNCATED, p, e + 1, txCount, programCount);
            p += r;
            lookedUp += r;
          }
        }
      }

      const totalAccounts = keyCount + lookedUp;
      if (totalAccounts > MAX_TX_ACCOUNTS) return finish(counts, ACCOUNT_INDEX, txStart, e + 1, txCount, programCount);
      if (maxAccountIndex >= totalAccounts) {
        const at = firstBadAccountIndex(bytes, ixOffset, ixCount, totalAccounts);
        return finish(counts, ACCOUNT_INDEX, at, e + 1, txCount, programCount);
      }

      if (txCount >= txCap) return finish(counts, OUTPUT_FULL, txStart, e + 1, txCount, programCount);
      const to = txCount * TX_STRIDE;
      txs[to + TX_ENTRY] = e;
      txs[to + TX_START] = txStart;
      txs[to + TX_END] = p;
      txs[to + TX_SIG_COUNT] = sigCount;
      txs[to + TX_SIG_OFFSET] = sigOffset;
      txs[to + TX_VERSION] = version;
      txs[to + TX_HEADER] = numRequired | (numReadonlySigned << 8) | (numReadonlyUnsigned << 16);
      txs[to + TX_KEY_COUNT] = keyCount;
      txs[to + TX_KEYS_OFFSET] = keysOffset;
      txs[to + TX_BLOCKHASH_OFFSET] = blockhashOffset;
      txs[to + TX_IX_COUNT] = ixCount;
      txs[to + TX_IX_OFFSET] = ixOffset;
      txs[to + TX_LOOKUP_COUNT] = lookupCount;
      txs[to + TX_LOOKUP_OFFSET] = lookupOffset;
      txs[to + TX_PROGRAMS_START] = programsStart;
      txs[to + TX_PROGRAMS_COUNT] = programCount - programsStart;
      txCount++;
    }
  }
  return finish(counts, OK, 0, entryTotal, txCount, programCount);
};
