import { describe, expect, it } from 'vitest';

import { ErrorCode } from '../errors.js';
import { encodeEntries, encodedEntriesSize } from './entry-encoder.js';
import { EntryBatchIndex } from './entry-batch-index.js';
import { legacyTx, ByteWriter, writeTx } from './testing/batch-writer.js';

describe('encodeEntries', () => {
  it('writes bincode: u64 entry count, then num_hashes, hash, u64 tx count and the transactions', () => {
    const hash = Uint8Array.from({ length: 32 }, (_, i) => i);
    const w = new ByteWriter();
    writeTx(w, legacyTx());
    const tx = w.bytes();
    const bytes = encodeEntries([
      { numHashes: 0x0102030405060708n, hash, transactions: [] },
      { numHashes: 1n, hash, transactions: [tx, tx] },
    ]);
    expect(bytes.length).toBe(8 + 48 + 48 + 2 * tx.length);
    expect(encodedEntriesSize([{ numHashes: 1n, hash, transactions: [tx] }])).toBe(8 + 48 + tx.length);
    const view = new DataView(bytes.buffer);
    expect(view.getBigUint64(0, true)).toBe(2n);
    expect(view.getBigUint64(8, true)).toBe(0x0102030405060708n);
    expect(bytes.subarray(16, 48)).toEqual(hash);
    expect(view.getBigUint64(48, true)).toBe(0n);
    expect(view.getBigUint64(56 + 40, true)).toBe(2n);
    expect(bytes.subarray(104, 104 + tx.length)).toEqual(tx);
  });

  it('round-trips through the parser, u64 num_hashes included', () => {
    const w = new ByteWriter();
    writeTx(w, legacyTx());
    const tx = w.bytes();
    const max = (1n << 64n) - 1n;
    const index = new EntryBatchIndex();
    index.parse(encodeEntries([{ numHashes: max, hash: new Uint8Array(32).fill(3), transactions: [tx] }]));
    expect(index.entryNumHashes(0)).toBe(max);
    expect(index.entryHash(0)).toEqual(new Uint8Array(32).fill(3));
    expect(index.txCount).toBe(1);
  });

  it('encodes an empty vector as a zero count', () => {
    expect(encodeEntries([])).toEqual(new Uint8Array(8));
  });

  it('refuses a hash that is not 32 bytes and num_hashes outside u64', () => {
    expect(() => encodeEntries([{ numHashes: 1n, hash: new Uint8Array(31), transactions: [] }])).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'entry.hash', value: 31 } }));
    expect(() => encodeEntries([{ numHashes: -1n, hash: new Uint8Array(32), transactions: [] }])).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'entry.numHashes', value: '-1' } }));
    expect(() => encodeEntries([{ numHashes: 1n << 64n, hash: new Uint8Array(32), transactions: [] }])).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'entry.numHashes', value: '18446744073709551616' } }));
  });
});
