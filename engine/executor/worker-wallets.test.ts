import { existsSync } from 'node:fs';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TEST_PASSPHRASE, importWorkers } from '../app/testing/executor.js';
import { ChainClient } from '../rpc/index.js';
import { WSOL_MINT } from '../sim/known-accounts.js';
import { migrateUp } from '../state/db/migrations.js';
import { createEmbeddedDatabase, type TestDatabase } from '../state/db/testing.js';
import { createRedisKeySpace, type TestKeySpace } from '../state/kv/testing.js';
import { WalletManager, WalletPassphrase } from '../wallets/index.js';
import { builtCliPath, spawnSimulator, type SimProcess } from './testing/sim-process.js';
import { WorkerWallets } from './worker-wallets.js';

/**
 * The choice of a worker wallet against Redis locks and a simulator's balances: a wallet this
 * executor holds for a trade in flight is passed over without a Redis round trip, and is offered
 * again once given back with `release`.
 */

let sim: SimProcess;
let db: TestDatabase;
let kv: TestKeySpace;
let chain: ChainClient;
let manager: WalletManager;
let wallets: WorkerWallets;
let lockCalls = 0;

const NEED = { mint: WSOL_MINT, amount: 1_000_000n, lamports: 100_000n };

describe.skipIf(!existsSync(builtCliPath()))('WorkerWallets', () => {
  beforeAll(async () => {
    sim = await spawnSimulator({ slotMs: 50 });
    db = await createEmbeddedDatabase();
    await migrateUp(db.db);
    kv = await createRedisKeySpace();
    chain = new ChainClient({ url: sim.endpoints.rpc });
    await importWorkers(db.db, sim.genesis.actors.traders.slice(0, 2));
    const acquireLock = kv.keys.acquireExecutorLock.bind(kv.keys);
    kv.keys.acquireExecutorLock = (...args) => {
      lockCalls++;
      return acquireLock(...args);
    };
    manager = new WalletManager({ db: db.db, keys: kv.keys, chain, passphrase: WalletPassphrase.resolve({ passphrase: TEST_PASSPHRASE }) });
    wallets = new WorkerWallets({ wallets: manager, keys: kv.keys, chain });
  }, 60_000);

  afterAll(async () => {
    await chain?.close();
    await kv?.drop();
    await db?.drop();
    await sim?.close();
  });

  it('passes over the wallets it holds without asking Redis, and offers one again once released', async () => {
    const first = await wallets.acquire(NEED, 'trade-1');
    expect(first.kind).toBe('held');
    lockCalls = 0;
    const second = await wallets.acquire(NEED, 'trade-2');
    expect(second.kind).toBe('held');
    if (first.kind !== 'held' || second.kind !== 'held') return;
    expect(second.held.wallet.id).not.toBe(first.held.wallet.id);
    expect(lockCalls).toBe(1);

    lockCalls = 0;
    expect(await wallets.acquire(NEED, 'trade-3')).toEqual({ kind: 'busy' });
    expect(lockCalls).toBe(0);
    expect(await wallets.acquireById(first.held.wallet.id, 'trade-3')).toBeNull();

    expect(await wallets.release(first.held)).toBe(true);
    const third = await wallets.acquire(NEED, 'trade-3');
    expect(third.kind === 'held' ? third.held.wallet.id : third.kind).toBe(first.held.wallet.id);
    if (third.kind === 'held') await wallets.release(third.held);
    await wallets.release(second.held);
  });

  it('reads the wallet list again beside a trade, not before it (issue 23)', async () => {
    // Every call finds the list out of date (TTL 0); the first read is waited for, as nothing was read yet.
    const fresh = new WorkerWallets({ wallets: manager, keys: kv.keys, chain, listTtlMs: 0 });
    await fresh.warm();
    const list = manager.repo.list.bind(manager.repo);
    let reads = 0;
    let answer!: () => void;
    const held = new Promise<void>((r) => (answer = r));
    manager.repo.list = async (...args) => {
      reads++;
      await held;
      return list(...args);
    };
    try {
      // The read again does not answer until the end: the trade takes its wallet from the list read before.
      const choice = await fresh.acquire(NEED, 'trade-4');
      expect(choice.kind).toBe('held');
      expect(reads).toBe(1);
      if (choice.kind === 'held') await fresh.release(choice.held);
    } finally {
      manager.repo.list = list;
      answer();
    }
  });
});
