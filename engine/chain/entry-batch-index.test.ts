import { describe, expect, it } from 'vitest';

import { EntryBatchIndex, MIN_TX_BYTES } from './entry-batch-index.js';
import { encodeEntries } from './entry-encoder.js';
import { parseEntriesInto } from './entry-parser.js';
import { KeySet } from './key-set.js';
import { ENTRY_STRIDE, ParseStatus, TX_STRIDE, type ParseEntriesFn } from './parse-layout.js';
import { legacyTx, v0Tx, writeBatch } from './testing/batch-writer.js';
import { generateMainnetMix } from './testing/mainnet-mix.js';

function records(index: EntryBatchIndex) {
  return {
    entries: Array.from(index.entries.subarray(0, index.entryCount * ENTRY_STRIDE)),
    txs: Array.from(index.txs.subarray(0, index.txCount * TX_STRIDE)),
    programs: Array.from(index.programs.subarray(0, index.programCount)),
  };
}

describe('EntryBatchIndex', () => {
  it('grows its arrays on OutputFull and retries, ending with the same records as a roomy index', () => {
    const mix = generateMainnetMix({ seed: 3, transactions: 600 });
    const tiny = new EntryBatchIndex({ entries: 1, txs: 1, programs: 1 });
    expect(tiny.parse(mix.bytes)).toBe(ParseStatus.Ok);
    expect(tiny.txCount).toBe(600);
    expect(tiny.entryCount).toBe(mix.entryCount);
    expect(tiny.growCount).toBeGreaterThan(0);
    expect(tiny.growCount).toBeLessThanOrEqual(6);
    const roomy = new EntryBatchIndex({ entries: 10_000, txs: 10_000, programs: 100_000 });
    roomy.parse(mix.bytes);
    expect(records(tiny)).toEqual(records(roomy));
  });

  it('never grows past what the input can hold', () => {
    const mix = generateMainnetMix({ seed: 4, transactions: 300 });
    const index = new EntryBatchIndex({ entries: 1, txs: 1, programs: 1 });
    index.parse(mix.bytes);
    expect(index.txs.length / TX_STRIDE).toBeLessThanOrEqual(Math.floor(mix.bytes.length / MIN_TX_BYTES));
    expect(index.entries.length / ENTRY_STRIDE).toBeLessThanOrEqual(Math.floor(mix.bytes.length / 48));
    expect(index.programs.length).toBeLessThanOrEqual(Math.floor(mix.bytes.length / 3));
  });

  it('is reused across batches without reallocating once large enough', () => {
    const index = new EntryBatchIndex();
    const a = generateMainnetMix({ seed: 5, transactions: 800 });
    const b = generateMainnetMix({ seed: 6, transactions: 200 });
    index.parse(a.bytes);
    const arrays = [index.entries, index.txs, index.programs];
    const grows = index.growCount;
    for (let i = 0; i < 3; i++) {
      expect(index.parse(b.bytes)).toBe(ParseStatus.Ok);
      expect(index.txCount).toBe(200);
      expect(index.parse(a.bytes)).toBe(ParseStatus.Ok);
      expect(index.txCount).toBe(800);
    }
    expect([index.entries, index.txs, index.programs]).toEqual(arrays);
    expect([index.entries, index.txs, index.programs].every((x, i) => x === arrays[i])).toBe(true);
    expect(index.growCount).toBe(grows);
  });

  it('returns malformed statuses as they are, without growing', () => {
    const { bytes } = writeBatch([{ txs: [legacyTx(), legacyTx({ signatureCount: 2 })] }]);
    const index = new EntryBatchIndex({ entries: 1, txs: 1, programs: 1 });
    expect(index.parse(bytes)).toBe(ParseStatus.Header);
    expect(index.growCount).toBe(0);
    expect(index.status).toBe(ParseStatus.Header);
    expect(index.errorOffset).toBeGreaterThan(0);
  });

  it('stops retrying a parser that keeps reporting OutputFull', () => {
    let calls = 0;
    const stubborn: ParseEntriesFn = (bytes, entries, txs, programs, counts) => {
      calls++;
      counts.set([entries.length / ENTRY_STRIDE, txs.length / TX_STRIDE, programs.length, 0]);
      return ParseStatus.OutputFull;
    };
    const index = new EntryBatchIndex({ entries: 1, txs: 1, programs: 1 });
    expect(index.parse(new Uint8Array(100_000), stubborn)).toBe(ParseStatus.OutputFull);
    expect(calls).toBeLessThan(40);
  });

  it('answers per-transaction questions through its accessors', () => {
    const b = writeBatch([
      { txs: [] },
      {
        txs: [
          legacyTx({ signatureCount: 2, header: [2, 1, 1], keyCount: 4, instructions: [{ programIdIndex: 3, accounts: [0, 1, 2] }, { programIdIndex: 2, accounts: [] }] }),
          v0Tx(),
        ],
      },
    ]);
    const index = new EntryBatchIndex();
    expect(index.parse(b.bytes)).toBe(ParseStatus.Ok);
    const t = b.entries[1]!.txs[0]!;
    expect(index.txEntry(0)).toBe(1);
    expect(index.entryTxCount(0)).toBe(0);
    expect(index.entryFirstTx(1)).toBe(0);
    expect(index.txBytes(0)).toEqual(b.bytes.subarray(t.start, t.end));
    expect(index.signatureCount(0)).toBe(2);
    expect(index.signatureOffset(0, 1)).toBe(t.signatures + 64);
    expect(index.isLegacy(0)).toBe(true);
    expect(index.isLegacy(1)).toBe(false);
    expect([index.numRequiredSignatures(0), index.numReadonlySigned(0), index.numReadonlyUnsigned(0)]).toEqual([2, 1, 1]);
    expect(index.keyCount(0)).toBe(4);
    expect(index.keyOffset(0, 2)).toBe(t.keys + 64);
    expect([0, 1, 2, 3].map((k) => index.isStaticKeyWritable(0, k))).toEqual([true, false, true, false]);
    expect(index.blockhashOffset(0)).toBe(t.blockhash);
    expect(index.instructionCount(0)).toBe(2);
    expect(index.instructionsOffset(0)).toBe(t.instructionCount + 1);
    expect(index.programIdCount(0)).toBe(2);
    expect([index.programIdIndex(0, 0), index.programIdIndex(0, 1)]).toEqual([3, 2]);
    expect(index.lookupCount(1)).toBe(1);
    expect(index.lookupsOffset(1)).toBe(b.entries[1]!.txs[1]!.lookups[0]!.key);
  });

  it('finds the first static key of a transaction that is in a KeySet', () => {
    const pools = Array.from({ length: 30 }, (_, i) => new Uint8Array(32).fill(i + 1).fill(0xab, 0, 4));
    const mix = generateMainnetMix({ seed: 8, transactions: 500, poolKeys: pools, poolFraction: 0.2 });
    const keys = new KeySet();
    pools.forEach((p) => keys.add(p));
    const index = new EntryBatchIndex();
    index.parse(mix.bytes);
    const hits: number[] = [];
    const ids: number[] = [];
    for (let i = 0; i < index.txCount; i++) {
      const id = index.firstStaticKeyIn(i, keys);
      if (id >= 0) {
        hits.push(i);
        ids.push(id);
      }
    }
    expect(hits).toEqual(mix.poolTxIndexes);
    expect(ids).toEqual(mix.poolKeyIndexes);
  });

  it('parses with the parser it is given', () => {
    let called = 0;
    const spy: ParseEntriesFn = (...args) => {
      called++;
      return parseEntriesInto(...args);
    };
    const index = new EntryBatchIndex();
    index.parse(encodeEntries([]), spy);
    expect(called).toBe(1);
  });
});
