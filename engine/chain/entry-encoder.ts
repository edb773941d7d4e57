/**
 * Encoder of the ShredStream `Entry.entries` payload: bincode `Vec<Entry>` with fixed-width
 * little-endian u64 lengths (solana entry/src/entry.rs). For the chain simulator and tests; the
 * transactions are written as given (already serialized `VersionedTransaction`s).
 */
import { invalidArgument } from '../errors.js';
import { HASH_BYTES, MIN_ENTRY_BYTES } from './parse-layout.js';

export interface EntryInput {
  numHashes: bigint;
  /** 32 bytes. */
  hash: Uint8Array;
  /** Serialized transactions; empty for a tick. */
  transactions: readonly Uint8Array[];
}

const U64_MAX = (1n << 64n) - 1n;

export function encodedEntriesSize(entries: readonly EntryInput[]): number {
  let size = 8;
  for (const entry of entries) {
    size += MIN_ENTRY_BYTES;
    for (const tx of entry.transactions) size += tx.length;
  }
  return size;
}

export function encodeEntries(entries: readonly EntryInput[]): Uint8Array {
  const out = new Uint8Array(encodedEntriesSize(entries));
  const view = new DataView(out.buffer);
  view.setUint32(0, entries.length, true);
  let p = 8;
  for (const entry of entries) {
    if (entry.numHashes < 0n || entry.numHashes > U64_MAX) {
      throw invalidArgument('entry.numHashes', entry.numHashes.toString(), `numHashes out of u64 range: ${entry.numHashes}`);
    }
    if (entry.hash.length !== HASH_BYTES) {
      throw invalidArgument('entry.hash', entry.hash.length, `entry hash must be ${HASH_BYTES} bytes, got ${entry.hash.length}`);
    }
    view.setBigUint64(p, entry.numHashes, true);
    out.set(entry.hash, p + 8);
    view.setUint32(p + 40, entry.transactions.length, true);
    p += MIN_ENTRY_BYTES;
    for (const tx of entry.transactions) {
      out.set(tx, p);
      p += tx.length;
    }
  }
  return out;
}
