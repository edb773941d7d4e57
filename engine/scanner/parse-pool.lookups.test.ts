import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import * as base58 from '../chain/base58.js';
import { ParseStatus } from '../chain/parse-layout.js';
import { v0Tx, writeBatch } from '../chain/testing/batch-writer.js';
import { Prng } from '../prng.js';
import { UnresolvedReason } from './match-layout.js';
import { ParsePool } from './parse-pool.js';
import type { ParseResult } from './parse-result.js';
import { buildSwap, entryBatch, type BuiltSwap } from './testing/lookup-batches.js';

const workerFile = resolve(import.meta.dirname, '../../dist/engine/scanner/parse-worker.js');
const built = existsSync(workerFile);

const prng = new Prng(77);
const address = (): string => base58.encode(prng.bytes(32));
const pools = Array.from({ length: 6 }, address);
const f = Array.from({ length: 12 }, address);
const T1 = { address: address(), addresses: [f[0]!, pools[1]!, f[1]!, pools[2]!, f[2]!] };
const T2 = { address: address(), addresses: [f[3]!, f[4]!, pools[3]!] };
const PLAIN = { address: address(), addresses: [f[5]!, f[6]!, f[7]!] };

/** pools[0] static; pools[1] writable via T1; pools[2] readonly via T1; pools[3] readonly via T2. */
function mixedSwap(seed: number): BuiltSwap {
  return buildSwap({ seed, writable: [pools[1]!, f[3]!, pools[0]!], readonly: [pools[2]!, pools[3]!, f[0]!], tables: [T1, T2] });
}

interface Seen {
  match: string[];
  unresolved: { slot: number; tx: number; reason: number; staticKeys: number; signature: string; lookups: unknown }[];
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

function record(r: ParseResult, into: Seen): void {
  for (let i = 0; i < r.matchCount; i++) {
    into.match.push(`${r.slot}:${r.matchTx(i)}:${r.matchPool(i)}:${r.matchKeyIndex(i)}:${r.matchViaLookup(i) ? 'lookup' : 'static'}:${hex(r.matchSignature(i))}`);
  }
  for (let j = 0; j < r.unresolvedCount; j++) {
    into.unresolved.push({
      slot: r.slot,
      tx: r.unresolvedTx(j),
      reason: r.unresolvedReason(j),
      staticKeys: r.unresolvedStaticKeyCount(j),
      signature: hex(r.unresolvedSignature(j)),
      lookups: r.unresolvedLookups(j),
    });
  }
}

/** Expected match strings of a transaction: every monitored account at its v0 index. */
function expected(slot: number, tx: number, swap: BuiltSwap, keys: readonly string[]): string[] {
  const out: string[] = [];
  swap.accounts.forEach((a, k) => {
    const pool = keys.indexOf(a);
    if (pool >= 0) out.push(`${slot}:${tx}:${pool}:${k}:${k < swap.staticKeyCount ? 'static' : 'lookup'}:${hex(swap.signature)}`);
  });
  return out;
}

async function submitAndCollect(pool: ParsePool, batches: readonly { slot: number; bytes: Uint8Array }[], onResult: (r: ParseResult) => void): Promise<void> {
  for (const b of batches) expect(pool.submit(b.slot, 0, b.bytes)).toBe(true);
  let seen = 0;
  while (seen < batches.length) {
    seen += pool.drainResults(onResult);
    if (seen < batches.length) expect(await pool.waitForResults(10_000)).toBe(true);
  }
}

let open: ParsePool | null = null;
afterEach(async () => {
  await open?.close();
  open = null;
});

function startPool(options: ConstructorParameters<typeof ParsePool>[0] = {}): ParsePool {
  const pool = (open = new ParsePool({ workers: 2, keys: pools, filename: workerFile, ...options }));
  pool.start();
  return pool;
}

describe.skipIf(!built)('parse workers and the lookup directory', () => {
  it('matches pools reached only through known tables, at their index in the v0 account list', async () => {
    const pool = startPool();
    pool.lookupDirectory.put(T1.address, T1.addresses);
    pool.lookupDirectory.put(T2.address, T2.addresses);
    const swaps = [mixedSwap(1), mixedSwap(2), mixedSwap(3)];
    // Static keys alone would only see pools[0].
    expect(swaps[0]!.accounts.slice(swaps[0]!.staticKeyCount)).toEqual(expect.arrayContaining([pools[1], pools[2], pools[3]]));
    const seen: Seen = { match: [], unresolved: [] };
    await submitAndCollect(pool, [{ slot: 100, bytes: entryBatch(swaps.map((s) => s.bytes)) }], (r) => record(r, seen));
    const want = swaps.flatMap((s, tx) => expected(100, tx, s, pools));
    expect(want.filter((m) => m.includes(':lookup:'))).toHaveLength(9);
    expect(seen.match.sort()).toEqual(want.sort());
    expect(seen.unresolved).toEqual([]);
    expect(pool.statistics()).toMatchObject({ lookupTxs: 3, lookupResolved: 3, lookupMatches: 9, matches: 12, unresolved: 0 });
  });

  it('settles a table without monitored addresses in the worker, with no match and nothing unresolved', async () => {
    const pool = startPool();
    pool.lookupDirectory.put(PLAIN.address, PLAIN.addresses);
    const swap = buildSwap({ seed: 9, writable: [f[5]!, f[9]!], readonly: [f[7]!], tables: [PLAIN] });
    expect(swap.lookups).toHaveLength(1);
    const seen: Seen = { match: [], unresolved: [] };
    await submitAndCollect(pool, [{ slot: 5, bytes: entryBatch([swap.bytes]) }], (r) => record(r, seen));
    expect(seen).toEqual({ match: [], unresolved: [] });
    expect(pool.statistics()).toMatchObject({ lookupTxs: 1, lookupResolved: 1, lookupMatches: 0 });
  });

  it('leaves a transaction through an unknown table unresolved, with its signature and a copy of its lookups', async () => {
    const pool = startPool();
    pool.lookupDirectory.put(T1.address, T1.addresses); // T2 unknown
    const swaps = [buildSwap({ seed: 4, writable: [f[8]!], tables: [] }), mixedSwap(5)];
    expect(swaps[0]!.lookups).toEqual([]);
    const seen: Seen = { match: [], unresolved: [] };
    await submitAndCollect(pool, [{ slot: 7, bytes: entryBatch(swaps.map((s) => s.bytes)) }], (r) => record(r, seen));
    // The static match is reported; the lookup matches wait for the pool's thread.
    expect(seen.match).toEqual(expected(7, 1, swaps[1]!, pools).filter((m) => m.includes(':static:')));
    expect(seen.unresolved).toEqual([
      { slot: 7, tx: 1, reason: UnresolvedReason.UnknownTable, staticKeys: swaps[1]!.staticKeyCount, signature: hex(swaps[1]!.signature), lookups: swaps[1]!.lookups },
    ]);
    expect(pool.statistics()).toMatchObject({ lookupTxs: 1, lookupResolved: 0, lookupMatches: 0, unresolved: 1 });
  });

  it('leaves an index past a table\'s known length unresolved (the table may have grown)', async () => {
    const pool = startPool();
    pool.lookupDirectory.put(T1.address, T1.addresses.slice(0, 3)); // pools[2] is at index 3
    pool.lookupDirectory.put(T2.address, T2.addresses);
    const swap = mixedSwap(6);
    const seen: Seen = { match: [], unresolved: [] };
    await submitAndCollect(pool, [{ slot: 8, bytes: entryBatch([swap.bytes]) }], (r) => record(r, seen));
    expect(seen.unresolved.map((u) => u.reason)).toEqual([UnresolvedReason.IndexPastLength]);
    expect(seen.match.every((m) => m.includes(':static:'))).toBe(true);
  });

  it('rebuilds the directory on setKeys: new pool ids from the table source, unknown tables without one', async () => {
    const pool = startPool();
    const contents = new Map([
      [T1.address, T1.addresses],
      [T2.address, T2.addresses],
    ]);
    pool.lookupDirectory.setTableSource((a) => contents.get(a));
    pool.lookupDirectory.put(T1.address, T1.addresses);
    pool.lookupDirectory.put(T2.address, T2.addresses);
    const fewer = [pools[3]!, pools[1]!]; // pools[3] -> id 0, pools[1] -> id 1
    const version = pool.setKeys(fewer);
    expect(pool.keysVersion).toBe(version);
    expect(pool.lookupDirectory.keysVersion).toBe(version);
    const swap = mixedSwap(7);
    const seen: Seen = { match: [], unresolved: [] };
    await submitAndCollect(pool, [{ slot: 9, bytes: entryBatch([swap.bytes]) }], (r) => {
      expect(r.keysVersion).toBe(version);
      record(r, seen);
    });
    expect(seen.match.sort()).toEqual(expected(9, 0, swap, fewer).sort());
    expect(seen.match).toHaveLength(2);

    pool.lookupDirectory.setTableSource(null);
    pool.setKeys(pools);
    const after: Seen = { match: [], unresolved: [] };
    await submitAndCollect(pool, [{ slot: 10, bytes: entryBatch([swap.bytes]) }], (r) => record(r, after));
    expect(after.unresolved.map((u) => u.reason)).toEqual([UnresolvedReason.UnknownTable]);
    expect(pool.statistics().lookupDirectory).toMatchObject({ rebuilds: 3, tables: 0 });
  });

  it('with resolveLookups off, matches static keys only and writes no unresolved records', async () => {
    const pool = startPool({ resolveLookups: false });
    const swap = mixedSwap(8);
    const seen: Seen = { match: [], unresolved: [] };
    await submitAndCollect(pool, [{ slot: 11, bytes: entryBatch([swap.bytes]) }], (r) => record(r, seen));
    expect(seen.match).toEqual(expected(11, 0, swap, pools).filter((m) => m.includes(':static:')));
    expect(seen.unresolved).toEqual([]);
    expect(pool.statistics()).toMatchObject({ lookupTxs: 0, unresolved: 0 });
  });

  it('ignores and counts a transaction with more lookups than a valid one can hold', async () => {
    const pool = startPool({ workers: 1 });
    // The instruction uses accounts 3 and 4: the first lookup loads them, 69 empty ones follow.
    const many = Array.from({ length: 70 }, (_, i) => (i === 0 ? { writableIndexes: [5], readonlyIndexes: [6] } : { writableIndexes: [], readonlyIndexes: [] }));
    const crafted = writeBatch([{ txs: [v0Tx(), v0Tx({ lookups: many })] }]).bytes;
    const seen: Seen = { match: [], unresolved: [] };
    await submitAndCollect(pool, [{ slot: 12, bytes: crafted }], (r) => {
      expect(r.status).toBe(ParseStatus.Ok);
      record(r, seen);
    });
    expect(seen.unresolved.map((u) => u.tx)).toEqual([0]);
    expect(pool.statistics()).toMatchObject({ lookupTxs: 2, lookupRefused: 1, unresolved: 1 });
  });

  it('never crashes a worker on damaged batches, and what it reports stays in range', async () => {
    const pool = startPool();
    pool.lookupDirectory.put(T1.address, T1.addresses);
    pool.lookupDirectory.put(T2.address, T2.addresses);
    pool.lookupDirectory.put(PLAIN.address, PLAIN.addresses);
    const good = entryBatch(Array.from({ length: 12 }, (_, i) => (i % 3 === 2 ? buildSwap({ seed: 50 + i, writable: [f[5]!], tables: [PLAIN] }) : mixedSwap(50 + i)).bytes), 4);
    const r = new Prng(99);
    const batches: { slot: number; bytes: Uint8Array }[] = [];
    for (let i = 0; i < 400; i++) {
      const bytes = good.slice();
      const flips = r.range(1, 6);
      for (let k = 0; k < flips; k++) bytes[r.int(bytes.length)] = r.u32() & 0xff;
      batches.push({ slot: 1_000 + i, bytes: r.chance(0.1) ? bytes.subarray(0, r.int(bytes.length)) : bytes });
    }
    let ok = 0;
    for (let at = 0; at < batches.length; at += 50) {
      await submitAndCollect(pool, batches.slice(at, at + 50), (res) => {
        if (res.status !== ParseStatus.Ok) {
          expect(res.matchCount + res.unresolvedCount).toBe(0);
          return;
        }
        ok++;
        for (let i = 0; i < res.matchCount; i++) {
          expect(res.matchPool(i)).toBeLessThan(pools.length);
          expect(res.matchKeyIndex(i)).toBeLessThan(256);
          expect(res.matchTx(i)).toBeLessThan(res.txCount);
        }
        for (let j = 0; j < res.unresolvedCount; j++) {
          expect(res.unresolvedTx(j)).toBeLessThan(res.txCount);
          for (const l of res.unresolvedLookups(j)) expect(base58.isPubkey(l.accountKey)).toBe(true);
        }
      });
    }
    expect(ok).toBeGreaterThan(0);
    const summaries = await pool.close();
    open = null;
    expect(summaries.reduce((s, x) => s + x.batches, 0)).toBe(400);
  });
});
