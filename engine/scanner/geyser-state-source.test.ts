import { describe, expect, it } from 'vitest';

import { base58 } from '../chain/index.js';
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
