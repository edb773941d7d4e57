import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as base58 from '../chain/base58.js';
import { Prng } from '../prng.js';
import { AccountFetcher } from '../rpc/account-fetcher.js';
import { RpcClient } from '../rpc/rpc-client.js';
import { LookupMatcher, type LookupFailure, type LookupMatch, type LookupMatcherOptions } from './lookup-matcher.js';
import { LookupTableCache } from './lookup-tables.js';
import { MATCH_VIA_LOOKUP, UnresolvedReason } from './match-layout.js';
import { ParsePool, type ParsePoolOptions } from './parse-pool.js';
import type { ParseResult } from './parse-result.js';
import { buildSwap, entryBatch, type BuiltSwap } from './testing/lookup-batches.js';
import { lookupTableAccount, startRpcFixture, type RpcFixture } from './testing/rpc-fixture.js';

const workerFile = resolve(import.meta.dirname, '../../dist/engine/scanner/parse-worker.js');
const built = existsSync(workerFile);

const prng = new Prng(404);
const address = (): string => base58.encode(prng.bytes(32));
const pools = Array.from({ length: 6 }, address);
const f = Array.from({ length: 12 }, address);
const T1 = { address: address(), addresses: [f[0]!, pools[1]!, f[1]!, pools[2]!, f[2]!] };
const T2 = { address: address(), addresses: [f[3]!, f[4]!, pools[3]!] };

/** pools[0] static; pools[1] writable via T1 (index 1); pools[2] readonly via T1 (index 3); pools[3] readonly via T2. */
function mixedSwap(seed: number): BuiltSwap {
  return buildSwap({ seed, writable: [pools[1]!, f[3]!, pools[0]!], readonly: [pools[2]!, pools[3]!], tables: [T1, T2] });
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** `slot:tx:pool:keyIndex:via:signature` of every monitored account of a transaction reached through a table. */
function lookupMatches(slot: number, tx: number, swap: BuiltSwap, keys: readonly string[]): string[] {
  const out: string[] = [];
  swap.accounts.forEach((a, k) => {
    const pool = keys.indexOf(a);
    if (pool >= 0 && k >= swap.staticKeyCount) out.push(`${slot}:${tx}:${pool}:${k}:lookup:${hex(swap.signature)}`);
  });
  return out.sort();
}

interface Harness {
  pool: ParsePool;
  matcher: LookupMatcher;
  cache: LookupTableCache;
  /** Lookup matches, from the workers and from the matcher alike. */
  matches: string[];
  fromMatcher: LookupMatch[];
  failures: LookupFailure[];
  unresolved: number[];
  /** Submits batches, drains their results through the matcher, waits for its fetches. */
  run(batches: { slot: number; txs: BuiltSwap[] }[]): Promise<void>;
}

let fx: RpcFixture;
let open: ParsePool | null = null;
beforeEach(async () => {
  fx = await startRpcFixture();
});
afterEach(async () => {
  await open?.close();
  open = null;
  await fx.close();
});

function harness(options: ParsePoolOptions = {}, matcherOptions: Partial<LookupMatcherOptions> = {}): Harness {
  const pool = (open = new ParsePool({ workers: 1, keys: pools, filename: workerFile, ...options }));
  pool.start();
  const cache = new LookupTableCache(new AccountFetcher(new RpcClient({ endpoints: [fx.httpUrl] })));
  const h: Harness = {
    pool,
    cache,
    matches: [],
    fromMatcher: [],
    failures: [],
    unresolved: [],
    matcher: new LookupMatcher(pool, cache, {
      onMatch: (m) => {
        h.fromMatcher.push(m);
        h.matches.push(`${m.slot}:${m.tx}:${m.pool}:${m.keyIndex}:lookup:${hex(m.signature)}`);
      },
      onFailure: (failure) => h.failures.push(failure),
      retryDelayMs: 0,
      ...matcherOptions,
    }),
    async run(batches) {
      const onResult = (r: ParseResult): void => {
        for (let i = 0; i < r.matchCount; i++) {
          if (r.matchViaLookup(i)) h.matches.push(`${r.slot}:${r.matchTx(i)}:${r.matchPool(i)}:${r.matchKeyIndex(i)}:lookup:${hex(r.matchSignature(i))}`);
        }
        for (let j = 0; j < r.unresolvedCount; j++) h.unresolved.push(r.unresolvedReason(j));
        h.matcher.take(r);
      };
      for (const b of batches) expect(pool.submit(b.slot, 0, entryBatch(b.txs.map((t) => t.bytes)))).toBe(true);
      let seen = 0;
      while (seen < batches.length) {
        seen += pool.drainResults(onResult);
        if (seen < batches.length) expect(await pool.waitForResults(10_000)).toBe(true);
      }
      await h.matcher.idle();
    },
  };
  return h;
}

describe.skipIf(!built)('LookupMatcher over the simulator JSON-RPC', () => {
  beforeEach(() => {
    fx.backend.setAccount(T1.address, lookupTableAccount({ addresses: T1.addresses }));
    fx.backend.setAccount(T2.address, lookupTableAccount({ addresses: T2.addresses }));
  });

  it('resolves an unknown table by RPC and reports its pools; the next transaction through it matches in the worker', async () => {
    const h = harness();
    const first = mixedSwap(1);
    await h.run([{ slot: 50, txs: [first] }]);
    expect(h.unresolved).toEqual([UnresolvedReason.UnknownTable]);
    expect(h.matches.sort()).toEqual(lookupMatches(50, 0, first, pools));
    expect(h.fromMatcher).toHaveLength(3);
    for (const m of h.fromMatcher) {
      expect(m).toMatchObject({ slot: 50, tx: 0, flags: MATCH_VIA_LOOKUP, keysVersion: h.pool.keysVersion, worker: 0 });
      expect(m.signature).toEqual(first.signature);
    }
    expect(fx.posts).toHaveLength(1); // both tables in one getMultipleAccounts call
    expect(h.pool.lookupDirectory.knownLength(T1.address)).toBe(5);
    expect(h.pool.lookupDirectory.knownLength(T2.address)).toBe(3);

    h.matches.length = 0;
    const second = [mixedSwap(2), mixedSwap(3)];
    await h.run([{ slot: 51, txs: second }]);
    expect(h.unresolved).toHaveLength(1); // nothing new
    expect(h.fromMatcher).toHaveLength(3);
    expect(h.matches.sort()).toEqual([...lookupMatches(51, 0, second[0]!, pools), ...lookupMatches(51, 1, second[1]!, pools)].sort());
    expect(fx.posts).toHaveLength(1);
    expect(h.pool.statistics()).toMatchObject({ lookupResolved: 2, lookupMatches: 6, unresolved: 1 });
    expect(h.matcher.stats).toMatchObject({ taken: 1, resolvedFetched: 1, resolvedCached: 0, matches: 3, tablesWritten: 2, pending: 0 });
  });

  it('refetches a table extended past its known length, reports the match, then matches in the worker', async () => {
    const short = { address: T1.address, addresses: T1.addresses.slice(0, 3) };
    fx.backend.setAccount(T1.address, lookupTableAccount({ addresses: short.addresses }));
    const h = harness();
    const a = buildSwap({ seed: 10, writable: [pools[1]!], tables: [short] });
    await h.run([{ slot: 60, txs: [a] }]);
    expect(h.matches).toEqual(lookupMatches(60, 0, a, pools));
    expect(h.pool.lookupDirectory.knownLength(T1.address)).toBe(3);

    fx.backend.advanceSlot(1, [[T1.address, lookupTableAccount({ addresses: T1.addresses, lastExtendedSlot: 1n })]]);
    h.matches.length = 0;
    const b = buildSwap({ seed: 11, writable: [pools[1]!], readonly: [pools[2]!], tables: [T1] }); // pools[2] at index 3
    await h.run([{ slot: 61, txs: [b] }]);
    expect(h.unresolved).toEqual([UnresolvedReason.UnknownTable, UnresolvedReason.IndexPastLength]);
    expect(h.matches).toEqual(lookupMatches(61, 0, b, pools));
    expect(h.cache.stats.refreshes).toBe(1);
    expect(fx.posts).toHaveLength(2);
    expect(h.pool.lookupDirectory.knownLength(T1.address)).toBe(5);

    h.matches.length = 0;
    const c = buildSwap({ seed: 12, writable: [pools[1]!], readonly: [pools[2]!], tables: [T1] });
    await h.run([{ slot: 62, txs: [c] }]);
    expect(h.unresolved).toHaveLength(2);
    expect(h.matches).toEqual(lookupMatches(62, 0, c, pools));
    expect(fx.posts).toHaveLength(2);
  });

  it('rebuilds the directory from the cache on setKeys: new pool ids in the worker, no RPC', async () => {
    const h = harness();
    await h.run([{ slot: 70, txs: [mixedSwap(20)] }]);
    const fewer = [pools[3]!, pools[2]!, pools[0]!];
    const version = h.pool.setKeys(fewer);
    expect(h.pool.lookupDirectory.keysVersion).toBe(version);
    h.matches.length = 0;
    const next = mixedSwap(21);
    await h.run([{ slot: 71, txs: [next] }]);
    expect(h.unresolved).toHaveLength(1);
    expect(h.matches.sort()).toEqual(lookupMatches(71, 0, next, fewer));
    expect(h.matches).toHaveLength(2);
    expect(fx.posts).toHaveLength(1);
  });

  it('writes a table evicted from a full directory back from the cache, without RPC', async () => {
    const h = harness({ maxLookupTables: 1 });
    const viaT1 = (seed: number): BuiltSwap => buildSwap({ seed, writable: [pools[1]!], tables: [T1] });
    const viaT2 = (seed: number): BuiltSwap => buildSwap({ seed, readonly: [pools[3]!], writable: [], tables: [T2] });
    await h.run([{ slot: 80, txs: [viaT1(30)] }]);
    await h.run([{ slot: 81, txs: [viaT2(31)] }]); // evicts T1
    expect(h.pool.lookupDirectory.has(T1.address)).toBe(false);
    const again = viaT1(32);
    h.matches.length = 0;
    await h.run([{ slot: 82, txs: [again] }]);
    expect(h.matches).toEqual(lookupMatches(82, 0, again, pools));
    expect(h.matcher.stats).toMatchObject({ resolvedFetched: 2, resolvedCached: 1 });
    expect(h.pool.statistics().lookupDirectory.evictions).toBe(2);
    expect(fx.posts).toHaveLength(2);
  });

  it('counts failures by kind and does not fetch a missing table again for every transaction', async () => {
    const h = harness({}, { retryDelayMs: 1 });
    const ghost = { address: address(), addresses: [pools[4]!] };
    const dead = { address: address(), addresses: [pools[5]!] };
    fx.backend.setAccount(dead.address, lookupTableAccount({ addresses: dead.addresses, deactivationSlot: 5n }));
    await h.run([{ slot: 90, txs: [buildSwap({ seed: 40, writable: [pools[4]!], tables: [ghost] }), buildSwap({ seed: 41, writable: [pools[5]!], tables: [dead] })] }]);
    await h.run([{ slot: 91, txs: [buildSwap({ seed: 42, writable: [pools[4]!], tables: [ghost] })] }]);
    expect(h.failures.map((x) => `${x.slot}:${x.tx}:${x.kind}:${x.table === ghost.address ? 'ghost' : 'dead'}`).sort()).toEqual(['90:0:missing:ghost', '90:1:deactivated:dead', '91:0:missing:ghost']);
    expect(h.matcher.stats.failures).toMatchObject({ missing: 2, deactivated: 1 });
    // One call for both tables, one retry of the missing one (the node may lag the stream), then
    // the missing table is remembered: the second transaction through it costs no call.
    expect(fx.posts).toHaveLength(2);
    expect(h.matcher.stats.retries).toBe(1);
    expect(h.matches).toEqual([]);
  });

  it('finds a table the RPC node did not have yet on the retry a slot later', async () => {
    const h = harness({}, { retryDelayMs: 100 });
    const fresh = { address: address(), addresses: [f[9]!, pools[4]!] };
    const swap = buildSwap({ seed: 45, writable: [pools[4]!], tables: [fresh] });
    const ran = h.run([{ slot: 92, txs: [swap] }]);
    while (fx.posts.length < 1) await new Promise((r) => setTimeout(r, 2));
    fx.backend.setAccount(fresh.address, lookupTableAccount({ addresses: fresh.addresses })); // created meanwhile
    await ran;
    expect(h.failures).toEqual([]);
    expect(h.matches).toEqual(lookupMatches(92, 0, swap, pools));
    expect(h.matcher.stats).toMatchObject({ retries: 1, resolvedFetched: 1 });
    expect(fx.posts).toHaveLength(2);
  });

  it('fails transactions beyond maxPending as overload at once, and close() drops retries not yet due', async () => {
    const h = harness({}, { maxPending: 1, retryDelayMs: 60_000 });
    const ghosts = [0, 1, 2].map(() => ({ address: address(), addresses: [pools[4]!] }));
    const batch = ghosts.map((g, i) => buildSwap({ seed: 60 + i, writable: [pools[4]!], tables: [g] }));
    expect(h.pool.submit(93, 0, entryBatch(batch.map((t) => t.bytes)))).toBe(true);
    while (h.pool.drainResults((r) => h.matcher.take(r)) === 0) await h.pool.waitForResults(10_000);
    expect(h.failures.map((x) => `${x.tx}:${x.kind}`)).toEqual(['1:overload', '2:overload']);
    while (h.matcher.stats.retries === 0) await new Promise((r) => setTimeout(r, 2)); // the first waits for its retry
    expect(h.matcher.stats.pending).toBe(1);
    h.matcher.close();
    await h.matcher.idle();
    expect(h.matcher.stats.pending).toBe(0);
    expect(h.pool.lookupDirectory.size).toBe(0);
  });

  it('counts an RPC failure and resolves the table on a later transaction', async () => {
    const h = harness();
    fx.faults.setRpcFault('getMultipleAccounts', { errorRate: 1 });
    await h.run([{ slot: 95, txs: [mixedSwap(50)] }]);
    expect(h.failures.map((x) => x.kind)).toEqual(['rpc']); // after its retry failed too
    expect(h.matcher.stats.retries).toBe(1);
    expect(h.pool.lookupDirectory.size).toBe(0);
    fx.faults.setRpcFault('getMultipleAccounts', { errorRate: 0 });
    const later = mixedSwap(51);
    await h.run([{ slot: 96, txs: [later] }]);
    expect(h.matches.sort()).toEqual(lookupMatches(96, 0, later, pools));
    expect(h.matcher.stats.failures.rpc).toBe(1);
  });
});
