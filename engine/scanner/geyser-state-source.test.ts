import { describe, expect, it } from 'vitest';

import { base58 } from '../chain/index.js';
import { ORCA_WHIRLPOOL_PROGRAM_ID, lookaheadArrayKeys, swapArrayAddress } from '../dex/index.js';
import { decodeWhirlpool, encodeWhirlpool } from '../dex/whirlpool/whirlpool-account.js';
import type { PoolLoader } from '../pools/index.js';
import { createLogger } from '../obs/logger.js';
import type { AccountData, AccountReader } from '../rpc/index.js';
import type { AccountUpdate } from './geyser-stream.js';
import { GeyserStateSource } from './geyser-state-source.js';
import type { Scanner } from './scanner.js';

const POOL_A = base58.encode(new Uint8Array(32).fill(1));
const POOL_B = base58.encode(new Uint8Array(32).fill(2));
const VAULT_A = base58.encode(new Uint8Array(32).fill(3));

interface Refresh {
  pool: string;
  slot: bigint;
  signature: string;
}

/** A source on two monitored pools (not started: writes are applied to its stream by hand). */
function rig(): { source: GeyserStateSource; refreshes: Refresh[] } {
  const fallback: AccountReader = {
    fetch: () => Promise.resolve(null),
    stats: { calls: 0, keys: 0, coalesced: 0, refused: 0, failedCalls: 0 },
    queued: 0,
    outstanding: 0,
  };
  const source = new GeyserStateSource({
    endpoint: '127.0.0.1:1',
    pools: [POOL_A, POOL_B],
    fallback,
    readAccounts: () => Promise.resolve({ slot: 0n, accounts: [] }),
    logger: createLogger({ name: 'geyser-state-source-test', level: 'silent' }),
  });
  // POOL_A is also read from VAULT_A (as a tracked load would have learned).
  (source as unknown as { poolsOf: Map<string, Set<string>> }).poolsOf.set(VAULT_A, new Set([POOL_A]));
  const refreshes: Refresh[] = [];
  const scanner = {
    pools: [POOL_A, POOL_B],
    refresh: (pool: string, slot: bigint, signature: Uint8Array | undefined) => {
      refreshes.push({ pool, slot, signature: signature === undefined ? '' : base58.encode(signature) });
    },
    noteSlot: () => {},
  };
  source.attach(scanner as unknown as Scanner);
  return { source, refreshes };
}

const account = (fill: number): AccountData => ({ data: new Uint8Array(8).fill(fill), owner: POOL_B, lamports: 1n, executable: false, slot: 10n });
const signature = (fill: number): Uint8Array => new Uint8Array(64).fill(fill);

function write(address: string, writeVersion: bigint, sig: Uint8Array, slot = 10n): AccountUpdate {
  return { address, account: account(Number(writeVersion)), slot, writeVersion, source: 'stream', signature: sig };
}

const nextTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('GeyserStateSource refreshes', () => {
  it("refreshes a transaction's pools once, as soon as a write of the next transaction arrives", async () => {
    const { source, refreshes } = rig();
    const tx1 = signature(7);
    const tx2 = signature(8);
    source.stream.apply(write(POOL_A, 1n, tx1));
    source.stream.apply(write(VAULT_A, 2n, tx1));
    expect(refreshes).toEqual([]); // tx1 may have more writes to come
    source.stream.apply(write(POOL_B, 3n, tx2));
    // tx1 is complete: refreshed within the same turn, once for its two writes of POOL_A.
    expect(refreshes).toEqual([{ pool: POOL_A, slot: 10n, signature: base58.encode(tx1) }]);
    await nextTurn();
    // The last transaction of the turn: at its end.
    expect(refreshes).toEqual([
      { pool: POOL_A, slot: 10n, signature: base58.encode(tx1) },
      { pool: POOL_B, slot: 10n, signature: base58.encode(tx2) },
    ]);
    await nextTurn();
    expect(refreshes).toHaveLength(2);
  });

  it('keeps the slot and write-version rule: an older write refreshes nothing and is not held', async () => {
    const { source, refreshes } = rig();
    source.stream.apply(write(POOL_A, 5n, signature(1), 11n));
    source.stream.apply(write(POOL_A, 4n, signature(2), 11n)); // older write version, same slot
    source.stream.apply(write(POOL_A, 9n, signature(3), 10n)); // older slot
    await nextTurn();
    expect(refreshes).toEqual([{ pool: POOL_A, slot: 11n, signature: base58.encode(signature(1)) }]);
    expect(source.stream.get(POOL_A)).toMatchObject({ slot: 11n, writeVersion: 5n });
    expect(source.stream.stats.staleUpdates).toBe(2);
  });
});

describe('GeyserStateSource arrays ahead', () => {
  const span = 8 * 88;
  const whirlpool = (tick: number) =>
    decodeWhirlpool(encodeWhirlpool({ tokenA: POOL_B, tokenB: VAULT_A, vaultA: POOL_B, vaultB: VAULT_A, sqrtPrice: 1n << 64n, tick, tickSpacing: 8, liquidity: 1n, feeRate: 300 }), POOL_A);
  const ahead = (tick: number): string[] => lookaheadArrayKeys(whirlpool(tick), 2).map((key) => swapArrayAddress(whirlpool(tick), ORCA_WHIRLPOOL_PROGRAM_ID, key));

  it("follows and reads once the arrays ahead of a pool's window, again only for those its price moved to", async () => {
    const reads: string[][] = [];
    const source = new GeyserStateSource({
      endpoint: '127.0.0.1:1',
      pools: [POOL_A],
      fallback: { fetch: () => Promise.resolve(null), stats: { calls: 0, keys: 0, coalesced: 0, refused: 0, failedCalls: 0 }, queued: 0, outstanding: 0 },
      readAccounts: (addresses) => {
        reads.push([...addresses]);
        return Promise.resolve({ slot: 5n, accounts: addresses.map(() => null) });
      },
      logger: createLogger({ name: 'geyser-state-source-test', level: 'silent' }),
      arraysAhead: 2,
    });
    let pool = whirlpool(10);
    const loader: PoolLoader = {
      load: () => {
        const data = new Uint8Array(1);
        const accounts = new Map([[POOL_A, { data, owner: ORCA_WHIRLPOOL_PROGRAM_ID, lamports: 1n, executable: false, slot: 5n }]]);
        return Promise.resolve([{ ok: true, value: { address: POOL_A, dex: pool.dex, pool, context: { tickArrays: [] }, slot: 5n, data, accounts } }]);
      },
    };
    const tracked = source.track(loader);
    await tracked.load([POOL_A]);
    await nextTurn();
    // The loader's 3 each side, and 2 more each side: 11 arrays, read in one call.
    expect(reads).toEqual([ahead(10)]);
    expect(reads[0]).toHaveLength(11);
    expect(ahead(10).every((a) => source.stream.get(a) !== undefined)).toBe(true);
    await tracked.load([POOL_A]); // the same pool: nothing more
    pool = whirlpool(20); // another tick in the same array: nothing more
    await tracked.load([POOL_A]);
    await nextTurn();
    expect(reads).toHaveLength(1);
    pool = whirlpool(span + 10); // one array up: only the new top array is read
    await tracked.load([POOL_A]);
    await nextTurn();
    expect(reads).toEqual([ahead(10), ahead(span + 10).filter((a) => !ahead(10).includes(a))]);
    expect(reads[1]).toHaveLength(1);
    expect(source.reader.following).toBe(1 + 12);
  });
});
