import { describe, expect, it } from 'vitest';

import { EntryBatchIndex } from '../entry-batch-index.js';
import { ParseStatus } from '../parse-layout.js';
import { TransactionView } from '../transaction-view.js';
import { generateMainnetMix, VOTE_PROGRAM } from './mainnet-mix.js';

const pools = Array.from({ length: 25 }, (_, i) => new Uint8Array(32).fill(200 - i));

describe('generateMainnetMix', () => {
  it('is deterministic for a seed', () => {
    const a = generateMainnetMix({ seed: 9, transactions: 200, poolKeys: pools });
    const b = generateMainnetMix({ seed: 9, transactions: 200, poolKeys: pools });
    const c = generateMainnetMix({ seed: 10, transactions: 200, poolKeys: pools });
    expect(a.bytes).toEqual(b.bytes);
    expect(a.bytes).not.toEqual(c.bytes);
  });

  it('makes a parseable batch of mainnet-sized votes and swaps, with ticks', () => {
    const mix = generateMainnetMix({ seed: 1, transactions: 2000, poolKeys: pools });
    const index = new EntryBatchIndex();
    expect(index.parse(mix.bytes)).toBe(ParseStatus.Ok);
    expect(index.txCount).toBe(2000);
    expect(index.entryCount).toBe(mix.entryCount);
    let ticks = 0;
    for (let e = 0; e < index.entryCount; e++) if (index.entryTxCount(e) === 0) ticks++;
    expect(ticks).toBeGreaterThan(10);

    let votes = 0;
    let v0WithLookups = 0;
    let atLimit = 0;
    for (let i = 0; i < index.txCount; i++) {
      const size = index.txBytes(i).length;
      expect(size).toBeGreaterThanOrEqual(200);
      expect(size).toBeLessThanOrEqual(1232);
      if (size === 1232) atLimit++;
      const view = new TransactionView(mix.bytes, index, i);
      if (view.version === 'legacy' && view.instructionCount === 1 && view.programIds()[0] === VOTE_PROGRAM) votes++;
      if (view.version === 0 && view.addressTableLookups().length > 0) v0WithLookups++;
    }
    expect(votes / 2000).toBeGreaterThan(0.35);
    expect(v0WithLookups / 2000).toBeGreaterThan(0.15);
    expect(atLimit).toBeGreaterThan(0);
  });

  it('puts a pool key in about the requested fraction of transactions, and reports which', () => {
    const mix = generateMainnetMix({ seed: 2, transactions: 3000, poolKeys: pools, poolFraction: 0.2 });
    expect(mix.poolTxIndexes.length / 3000).toBeGreaterThan(0.17);
    expect(mix.poolTxIndexes.length / 3000).toBeLessThan(0.23);
    const index = new EntryBatchIndex();
    index.parse(mix.bytes);
    mix.poolTxIndexes.forEach((tx, k) => {
      const view = new TransactionView(mix.bytes, index, tx);
      const pool = Buffer.from(pools[mix.poolKeyIndexes[k]!]!);
      const keys = Array.from({ length: view.accountKeyCount }, (_, i) => Buffer.from(view.accountKeyBytes(i)));
      expect(keys.some((key) => key.equals(pool))).toBe(true);
    });
  });
});
