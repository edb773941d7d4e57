import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { AccountFetcher } from '../rpc/account-fetcher.js';
import { decodeLookupTable, LookupTableError } from '../chain/index.js';
import { LookupTableCache } from './lookup-tables.js';
import { RpcClient } from '../rpc/rpc-client.js';
import { isRpcFailure } from '../rpc/rpc-errors.js';
import { encodeLookupTable, lookupTableAccount, startRpcFixture, testAddress, type RpcFixture } from './testing/rpc-fixture.js';

const TABLE_A = testAddress(1, 0xa1);
const TABLE_B = testAddress(2, 0xb2);
const A = Array.from({ length: 10 }, (_, i) => testAddress(i, 0x0a));
const B = Array.from({ length: 4 }, (_, i) => testAddress(i, 0x0b));

async function rejection(p: Promise<unknown>): Promise<LookupTableError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LookupTableError);
  return err as LookupTableError;
}

describe('decodeLookupTable', () => {
  it('reads the header and the addresses from offset 56', () => {
    const authority = testAddress(5, 0x55);
    const t = decodeLookupTable(TABLE_A, encodeLookupTable({ addresses: A.slice(0, 3), lastExtendedSlot: 77n, authority }), 9n);
    expect(t.addresses).toEqual(A.slice(0, 3));
    expect(t.authority).toBe(authority);
    expect(t.lastExtendedSlot).toBe(77n);
    expect(t.fetchedSlot).toBe(9n);
    expect(decodeLookupTable(TABLE_A, encodeLookupTable({ addresses: [] })).authority).toBeNull();
  });

  it('refuses garbage and deactivated tables with typed errors', () => {
    const kind = (data: Uint8Array): string => {
      try {
        decodeLookupTable(TABLE_A, data);
      } catch (e) {
        expect(e).toBeInstanceOf(LookupTableError);
        return (e as LookupTableError).kind;
      }
      return 'ok';
    };
    expect(kind(new Uint8Array(10))).toBe('invalid');
    expect(kind(new Uint8Array(56 + 31))).toBe('invalid');
    expect(kind(encodeLookupTable({ addresses: A, stateTag: 0 }))).toBe('invalid');
    expect(kind(new Uint8Array(56 + 257 * 32).fill(1))).toBe('invalid');
    const badAuthority = encodeLookupTable({ addresses: A });
    badAuthority[21] = 7;
    expect(kind(badAuthority)).toBe('invalid');
    expect(kind(encodeLookupTable({ addresses: A, deactivationSlot: 1234n }))).toBe('deactivated');
  });
});

describe('LookupTableCache over the simulator JSON-RPC', () => {
  let fx: RpcFixture;
  let fetcher: AccountFetcher;
  let cache: LookupTableCache;
  beforeEach(async () => {
    fx = await startRpcFixture();
    fetcher = new AccountFetcher(new RpcClient({ endpoints: [fx.httpUrl] }));
    cache = new LookupTableCache(fetcher);
    fx.backend.setAccount(TABLE_A, lookupTableAccount({ addresses: A.slice(0, 6) }));
    fx.backend.setAccount(TABLE_B, lookupTableAccount({ addresses: B }));
  });
  afterEach(async () => {
    await fx.close();
  });

  it('resolves in v0 index order: writables of every lookup, then readonlys', async () => {
    const lookups = [
      { accountKey: TABLE_A, writableIndexes: [4, 0], readonlyIndexes: [2] },
      { accountKey: TABLE_B, writableIndexes: [3], readonlyIndexes: [1, 0] },
    ];
    const loaded = await cache.resolve(lookups);
    expect(loaded.writable).toEqual([A[4], A[0], B[3]]);
    expect(loaded.readonly).toEqual([A[2], B[1], B[0]]);
    // Both tables in one batched call; afterwards served from the cache, synchronously too.
    expect(fx.posts).toHaveLength(1);
    expect(cache.tryResolve(lookups)).toEqual(loaded);
    await cache.resolve(lookups);
    expect(fx.posts).toHaveLength(1);
    expect(cache.stats.fetches).toBe(2);
  });

  it('fetches a table once for concurrent transactions', async () => {
    const lookups = [{ accountKey: TABLE_A, writableIndexes: [1], readonlyIndexes: [] }];
    await Promise.all([cache.resolve(lookups), cache.resolve(lookups), cache.resolve(lookups)]);
    expect(fx.posts).toHaveLength(1);
    expect(cache.stats.fetches).toBe(1);
  });

  it('refetches once when a transaction names an index past the known length (table extended)', async () => {
    await cache.resolve([{ accountKey: TABLE_A, writableIndexes: [5], readonlyIndexes: [] }]);
    expect(fx.posts).toHaveLength(1);
    fx.backend.advanceSlot(1, [[TABLE_A, lookupTableAccount({ addresses: A, lastExtendedSlot: 101n })]]);
    const tx = [{ accountKey: TABLE_A, writableIndexes: [], readonlyIndexes: [9, 6] }];
    expect(cache.tryResolve(tx)).toBeNull();
    const [r1, r2] = await Promise.all([cache.resolve(tx), cache.resolve(tx)]);
    expect(r1.readonly).toEqual([A[9], A[6]]);
    expect(r2).toEqual(r1);
    expect(fx.posts).toHaveLength(2);
    expect(cache.stats.refreshes).toBe(1);
    expect(cache.get(TABLE_A)!.addresses).toHaveLength(10);
  });

  it('an index still past the end after the refetch is a typed error for that transaction only', async () => {
    await cache.resolve([{ accountKey: TABLE_B, writableIndexes: [0], readonlyIndexes: [] }]);
    const err = await rejection(cache.resolve([{ accountKey: TABLE_B, writableIndexes: [], readonlyIndexes: [4] }]));
    expect(err.kind).toBe('index');
    expect(err.table).toBe(TABLE_B);
    expect(fx.posts).toHaveLength(2);
    expect(cache.stats.failures).toBe(1);
    // The table stays cached and usable.
    await expect(cache.resolve([{ accountKey: TABLE_B, writableIndexes: [3], readonlyIndexes: [] }])).resolves.toEqual({
      writable: [B[3]],
      readonly: [],
    });
  });

  it('deactivated, garbage, wrong-owner and missing tables are typed errors', async () => {
    const dead = testAddress(3, 0xc3);
    const garbage = testAddress(4, 0xc4);
    const foreign = testAddress(5, 0xc5);
    fx.backend.setAccount(dead, lookupTableAccount({ addresses: A, deactivationSlot: 90n }));
    fx.backend.setAccount(garbage, { ...lookupTableAccount({ addresses: [] }), data: new Uint8Array([1, 2, 3]) });
    fx.backend.setAccount(foreign, lookupTableAccount({ addresses: A }, testAddress(0, 9)));
    const one = (t: string): Promise<unknown> => cache.resolve([{ accountKey: t, writableIndexes: [0], readonlyIndexes: [] }]);
    expect((await rejection(one(dead))).kind).toBe('deactivated');
    expect((await rejection(one(garbage))).kind).toBe('invalid');
    expect((await rejection(one(foreign))).kind).toBe('invalid');
    expect((await rejection(one(testAddress(6, 0xc6)))).kind).toBe('missing');
    expect(cache.size).toBe(0);
  });

  it('passes RPC failures through to the transaction', async () => {
    fx.faults.setRpcFault('getMultipleAccounts', { errorRate: 1 });
    const err = await cache.resolve([{ accountKey: TABLE_A, writableIndexes: [0], readonlyIndexes: [] }]).catch((e: unknown) => e);
    expect(isRpcFailure(err, 'rpc')).toBe(true);
    fx.faults.setRpcFault('getMultipleAccounts', { errorRate: 0 });
    await expect(cache.resolve([{ accountKey: TABLE_A, writableIndexes: [0], readonlyIndexes: [] }])).resolves.toEqual({
      writable: [A[0]],
      readonly: [],
    });
  });

  it('keeps at most maxTables tables', async () => {
    const small = new LookupTableCache(fetcher, { maxTables: 1 });
    await small.resolve([{ accountKey: TABLE_A, writableIndexes: [0], readonlyIndexes: [] }]);
    await small.resolve([{ accountKey: TABLE_B, writableIndexes: [0], readonlyIndexes: [] }]);
    expect(small.size).toBe(1);
    expect(small.get(TABLE_B)).toBeDefined();
  });
});
