import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { encode as base58Encode } from '../chain/base58.js';
import { EntryBatchIndex } from '../chain/entry-batch-index.js';
import { KeySet } from '../chain/key-set.js';
import { parseEntries } from '../chain/native-parser.js';
import { ParseStatus, PUBKEY_BYTES } from '../chain/parse-layout.js';
import { generateMainnetMix } from '../chain/testing/mainnet-mix.js';
import { Prng } from '../prng.js';
import { ParsePool } from './parse-pool.js';
import type { ParseResult } from './parse-result.js';

const workerFile = resolve(import.meta.dirname, '../../dist/engine/scanner/parse-worker.js');
const built = existsSync(workerFile);

const prng = new Prng(2026);
const poolKeys = Array.from({ length: 20 }, () => prng.bytes(PUBKEY_BYTES));

interface Batch {
  slot: number;
  bytes: Uint8Array;
}

function batches(count: number, firstSlot: number, seed: number): Batch[] {
  const out: Batch[] = [];
  for (let i = 0; i < count; i++) {
    const mix = generateMainnetMix({ seed: seed + i, transactions: 50 + ((i * 37) % 300), poolKeys, poolFraction: 0.2 });
    out.push({ slot: firstSlot + i, bytes: mix.bytes });
  }
  return out;
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** What the main thread finds with the same parser and a KeySet: `slot:tx:pool:keyIndex:signature`. */
function expectedMatches(list: Batch[], keys: readonly Uint8Array[]): string[] {
  const set = new KeySet();
  keys.forEach((k) => set.add(k)); // no duplicates: KeySet id = index = pool id
  const index = new EntryBatchIndex();
  const out: string[] = [];
  for (const b of list) {
    expect(index.parse(b.bytes, parseEntries)).toBe(ParseStatus.Ok);
    for (let tx = 0; tx < index.txCount; tx++) {
      for (let k = 0; k < index.keyCount(tx); k++) {
        const id = set.idAt(b.bytes, index.keyOffset(tx, k));
        if (id < 0) continue;
        const sig = index.signatureOffset(tx);
        out.push(`${b.slot}:${tx}:${id}:${k}:${hex(b.bytes.subarray(sig, sig + 64))}`);
      }
    }
  }
  return out.sort();
}

function reported(r: ParseResult, into: string[]): void {
  for (let i = 0; i < r.matchCount; i++) {
    into.push(`${r.slot}:${r.matchTx(i)}:${r.matchPool(i)}:${r.matchKeyIndex(i)}:${hex(r.matchSignature(i))}`);
  }
}

/** Drains results until `batchCount` batches have reported. */
async function collect(pool: ParsePool, batchCount: number, onResult: (r: ParseResult) => void): Promise<void> {
  let seen = 0;
  while (seen < batchCount) {
    seen += pool.drainResults(onResult);
    if (seen < batchCount && !(await pool.waitForResults(5_000)) && pool.drainResults(onResult) === 0) {
      const s = pool.statistics();
      if (s.batches >= s.submitted - s.droppedBatches && seen >= s.batches - s.resultDrops) break;
    }
  }
  expect(seen).toBe(batchCount);
}

let open: ParsePool | null = null;
afterEach(async () => {
  await open?.close();
  open = null;
});

describe.skipIf(!built)('ParsePool (Piscina workers from dist/)', () => {
  it('reports exactly the pool transactions the main-thread parser and KeySet find', async () => {
    const pool = (open = new ParsePool({ workers: 2, keys: poolKeys.map((k) => base58Encode(k)), filename: workerFile }));
    pool.start();
    const list = batches(40, 250_000_000, 1);
    for (const b of list) expect(pool.submit(b.slot, b.slot * 0.001, b.bytes)).toBe(true);
    const got: string[] = [];
    const txCounts = new Map<number, number>();
    const tickCounts = new Map<number, number>();
    await collect(pool, list.length, (r) => {
      expect(r.status).toBe(ParseStatus.Ok);
      expect(r.receivedAt).toBe(r.slot * 0.001);
      txCounts.set(r.slot, r.txCount);
      tickCounts.set(r.slot, r.tickCount);
      reported(r, got);
    });
    const want = expectedMatches(list, poolKeys);
    expect(want.length).toBeGreaterThan(100);
    expect(got.sort()).toEqual(want);
    // The generator's own record of which transactions it pointed at a pool agrees too.
    const mix0 = generateMainnetMix({ seed: 1, transactions: 50, poolKeys, poolFraction: 0.2 });
    expect(want.filter((m) => m.startsWith('250000000:')).map((m) => Number(m.split(':')[1])).sort((a, b) => a - b)).toEqual(mix0.poolTxIndexes);
    expect(txCounts.get(250_000_000)).toBe(mix0.txCount);
    // Ticks (entries without transactions) as the main-thread parser counts them: a slot ends with its last.
    const index = new EntryBatchIndex();
    const ticks = list.map((b) => {
      index.parse(b.bytes, parseEntries);
      let n = 0;
      for (let e = 0; e < index.entryCount; e++) if (index.entryTxCount(e) === 0) n++;
      return n;
    });
    expect(ticks.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect(list.map((b) => tickCounts.get(b.slot))).toEqual(ticks);
    const summaries = await pool.close();
    open = null;
    expect(summaries.reduce((s, x) => s + x.batches, 0)).toBe(40);
    expect(summaries.reduce((s, x) => s + x.matches, 0)).toBe(want.length);
    expect(summaries.every((x) => x.batches > 0)).toBe(true); // both workers took a share
  });

  it('matches batches submitted after setKeys against the new key table', async () => {
    const pool = (open = new ParsePool({ workers: 2, keys: poolKeys, filename: workerFile }));
    pool.start();
    const first = batches(6, 10, 100);
    for (const b of first) expect(pool.submit(b.slot, 0, b.bytes)).toBe(true);
    const before: string[] = [];
    await collect(pool, first.length, (r) => reported(r, before));
    expect(before.sort()).toEqual(expectedMatches(first, poolKeys));

    const fewer = [poolKeys[7]!, poolKeys[3]!]; // pool ids follow the new table: 0 -> key 7, 1 -> key 3
    const version = pool.setKeys(fewer);
    const second = batches(6, 20, 200);
    for (const b of second) expect(pool.submit(b.slot, 0, b.bytes)).toBe(true);
    const after: string[] = [];
    await collect(pool, second.length, (r) => {
      expect(r.keysVersion).toBe(version);
      reported(r, after);
    });
    const want = expectedMatches(second, fewer);
    expect(want.length).toBeGreaterThan(0);
    expect(after.sort()).toEqual(want);
    expect(pool.statistics().keyReloads).toBeGreaterThanOrEqual(1);
  });

  it('reports a batch that does not parse with its status and no matches, and goes on', async () => {
    const pool = (open = new ParsePool({ workers: 1, keys: poolKeys, filename: workerFile }));
    pool.start();
    const good = batches(1, 2, 300)[0]!;
    expect(pool.submit(1, 0, good.bytes.subarray(0, good.bytes.length >> 1))).toBe(true); // truncated
    expect(pool.submit(2, 0, good.bytes)).toBe(true);
    const statuses: number[] = [];
    const got: string[] = [];
    await collect(pool, 2, (r) => {
      statuses.push(r.status);
      if (r.status !== ParseStatus.Ok) expect(r.matchCount).toBe(0);
      reported(r, got);
    });
    expect(statuses).toEqual([ParseStatus.Truncated, ParseStatus.Ok]);
    expect(got.sort()).toEqual(expectedMatches([good], poolKeys));
    expect(pool.statistics().parseErrors).toBe(1);
  });

  it('drops and counts batches when the rings are full, never buffering, and parses the ones it took', async () => {
    const pool = (open = new ParsePool({ workers: 2, ringBytes: 1 << 17, keys: poolKeys, filename: workerFile }));
    const list = batches(30, 500, 400); // ~30-170 KB each against two 128 KiB rings (64 KiB records)
    const taken: Batch[] = [];
    let droppedBytes = 0;
    for (const b of list) {
      // Not started: nothing drains, so what fits is decided by the ring sizes alone.
      if (pool.submit(b.slot, 0, b.bytes)) taken.push(b);
      else droppedBytes += b.bytes.length;
    }
    const s = pool.statistics();
    expect(taken.length).toBeGreaterThan(0);
    expect(s.droppedBatches).toBe(list.length - taken.length);
    expect(s.droppedBatches).toBeGreaterThan(0);
    expect(s.droppedBytes).toBe(droppedBytes);
    expect(s.rings.reduce((n, r) => n + r.usedBytes, 0)).toBeLessThanOrEqual(2 << 17);
    pool.start();
    const got: string[] = [];
    await collect(pool, taken.length, (r) => reported(r, got));
    expect(got.sort()).toEqual(expectedMatches(taken, poolKeys));
  });

  it('drops and counts results when the results ring is full instead of blocking the worker', async () => {
    // A 64-byte results ring takes payloads of at most 8 bytes: every result is refused.
    const pool = (open = new ParsePool({ workers: 1, resultRingBytes: 64, keys: poolKeys, filename: workerFile }));
    pool.start();
    const list = batches(3, 900, 500);
    for (const b of list) expect(pool.submit(b.slot, 0, b.bytes)).toBe(true);
    const summaries = await pool.close();
    open = null;
    expect(summaries[0]).toMatchObject({ batches: 3, resultDrops: 3 });
    expect(pool.drainResults(() => {})).toBe(0);
    expect(pool.statistics().resultDrops).toBe(3);
  });
});
