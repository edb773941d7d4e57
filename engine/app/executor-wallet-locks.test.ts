import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { tradeIdOf } from '../executor/index.js';
import { type ExecutionResult, type TradeOpportunity } from '../messages/index.js';
import { createLogger } from '../obs/logger.js';
import type { Trader } from '../sim/actors.js';
import type { SimEndpoints, Simulator } from '../sim/simulator.js';
import type { ExecutorLock, PlatformState } from '../state/index.js';
import type { WalletRecord } from '../wallets/index.js';
import { createExecutorApp, type ExecutorApp } from './executor-app.js';
import { executionResultsByTrade, faucetFundedTrader, importWorkers, orderOpportunityOn, publishOpportunity, realExecutorConfig } from './testing/executor.js';
import { PlatformFixture, type FixtureBus } from './testing/platform-fixture.js';
import { eventually } from './testing.js';

/**
 * Issue 26 item 9: two real-mode executors (replicas: one executor id, so they share the
 * opportunities' durable consumer) over the same PostgreSQL and the same Redis, trading with two
 * fresh worker wallets funded by the simulator's faucets (`tidepool sim faucet`). Every lock
 * `lock:executor:{wallet}` either executor takes is logged at the moment Redis grants it and just
 * before it is given back; per wallet the log must alternate grant, release: never two holders.
 * Both executors are made to contend: the two wallets are held from outside until each executor
 * has deferred an opportunity for want of a free wallet.
 */

const logger = createLogger({ name: 'executor-locks-test', level: process.env.TEST_LOG ?? 'silent' });
const TRADES = 6;
/** The transaction id of the holds taken from outside the executors. */
const OUTSIDE = 'outside-hold';

const fx = new PlatformFixture();
let sim: Simulator;
let endpoints: SimEndpoints;
let bus: FixtureBus;
const apps: ExecutorApp[] = [];
let workers: WalletRecord[];
let results: Map<string, ExecutionResult>;

interface LockEvent {
  kind: 'granted' | 'refused' | 'released';
  wallet: string;
  holder: string;
}
const lockLog: LockEvent[] = [];

/** Logs every executor lock this state's key space takes (on Redis's answer) and gives back (before it goes). */
function observeLocks(state: PlatformState, name: string): void {
  const keys = state.keys;
  const acquire = keys.acquireExecutorLock.bind(keys);
  keys.acquireExecutorLock = async (walletId, transactionId, ttlMs) => {
    const lock = await acquire(walletId, transactionId, ...(ttlMs === undefined ? [] : [ttlMs]));
    const holder = transactionId === OUTSIDE ? 'outside' : name;
    if (lock === null) {
      lockLog.push({ kind: 'refused', wallet: walletId, holder });
      return null;
    }
    lockLog.push({ kind: 'granted', wallet: walletId, holder });
    const release = lock.release.bind(lock);
    let released = false;
    (lock as { release: ExecutorLock['release'] }).release = () => {
      if (!released) lockLog.push({ kind: 'released', wallet: walletId, holder });
      released = true;
      return release();
    };
    return lock;
  };
}

/** A wallet nobody has used, funded only through the faucets: SOL, wrapped SOL to sell, a USDC account. */
async function fundedWallet(): Promise<Trader> {
  const { trader, balances } = await faucetFundedTrader(endpoints.rpc);
  expect(balances).toEqual({ lamports: '20000000000', wrappedSol: '5000000000', usdc: '10000000' });
  return trader;
}

async function executor(name: string): Promise<ExecutorApp> {
  const loaded = realExecutorConfig(fx, {
    'executor-id': 'lock-test',
    'block-engine-url': endpoints.http,
    'busy-retry': '50',
    // One trade at a time: an executor in a trade takes no second wallet, so the hand-over below
    // gives each executor one of the two wallets whatever the scheduling.
    'max-concurrent-trades': '1',
    // Trades of both executors land on one pool within a slot or two: with the default 0 (the
    // exact re-quote) one trade's output falls short of a threshold quoted before the other landed.
    'slippage-bps': '100',
  });
  return createExecutorApp(loaded, {
    logger: logger.child({ executor: name }),
    retryDelayMs: 50,
    pollMs: 40,
    wrapDb: (state) => {
      observeLocks(state, name);
      return state.db;
    },
  });
}

beforeAll(async () => {
  ({ sim, endpoints } = await fx.runningSimulator(40));
  bus = await fx.bus('EXL');
  await fx.database();
  await fx.keySpace();
  const traders = [await fundedWallet(), await fundedWallet()];
  fx.onClose('the executors', () => Promise.all(apps.map((a) => a.close())));
  // One after the other: the first opens (and migrates) the database the second then shares.
  apps.push(await executor('A'));
  apps.push(await executor('B'));
  workers = await importWorkers(apps[0]!.state.db, traders);
  results = executionResultsByTrade(fx, bus.prefix);
  for (const app of apps) await app.start();
}, 90_000);

afterAll(() => fx.close());

const publish = (op: TradeOpportunity): Promise<void> => publishOpportunity(bus, op);

describe('two real-mode executors sharing Redis and PostgreSQL', () => {
  it('never hold the same wallet at once; every opportunity trades once, with faucet-funded wallets', async () => {
    const [a, b] = apps as [ExecutorApp, ExecutorApp];
    // Both wallets held from outside (as a third executor would) until each executor has had to wait.
    const outside = await Promise.all(workers.map((w) => a.state.keys.acquireExecutorLock(w.id, OUTSIDE)));
    expect(outside.every((l) => l !== null)).toBe(true);
    const ops = Array.from({ length: TRADES }, () => orderOpportunityOn(sim.chain, 50_000_000n));
    for (const op of ops) await publish(op);
    await eventually(() => (a.service.stats.deferred > 0 && b.service.stats.deferred > 0 ? true : undefined), 20_000, 'both executors deferring for want of a wallet');
    // The first wallet goes to whichever executor asks first; while that one trades (until its
    // outcome is recorded, a slot or more) it takes nothing else, so the second goes to the other.
    await outside[0]!.release();
    const first = await eventually(() => lockLog.find((e) => e.wallet === workers[0]!.id && e.kind === 'granted' && e.holder !== 'outside')?.holder, 20_000, 'the first wallet taken');
    await outside[1]!.release();
    const second = await eventually(() => lockLog.find((e) => e.wallet === workers[1]!.id && e.kind === 'granted' && e.holder !== 'outside')?.holder, 20_000, 'the second wallet taken');
    expect(second).not.toBe(first);

    const done = await eventually(() => (ops.every((op) => results.has(tradeIdOf(op.id))) ? ops.map((op) => results.get(tradeIdOf(op.id))!) : undefined), 60_000, 'every result');
    expect(done.map((r) => [r.status, r.error])).toEqual(ops.map(() => ['confirmed', undefined]));
    expect(new Set(done.map((r) => r.signature)).size).toBe(TRADES);
    expect(new Set(done.map((r) => r.walletAddress))).toEqual(new Set(workers.map((w) => w.address)));
    const rows = await a.state.db.query<{ id: string; status: string }>('SELECT id, status FROM trades');
    expect(rows.map((r) => r.id).sort()).toEqual(ops.map((op) => tradeIdOf(op.id)).sort());

    // The lock log: per wallet, grant and release alternate; both executors traded and both were refused.
    for (const w of workers) {
      let holder: string | null = null;
      for (const e of lockLog.filter((x) => x.wallet === w.id && x.kind !== 'refused')) {
        if (e.kind === 'granted') {
          expect(holder, `wallet ${w.address} granted to ${e.holder} while ${holder} held it`).toBeNull();
          holder = e.holder;
        } else {
          expect(e.holder).toBe(holder);
          holder = null;
        }
      }
      expect(holder).toBeNull();
    }
    for (const name of ['A', 'B']) {
      expect(lockLog.some((e) => e.holder === name && e.kind === 'granted')).toBe(true);
      expect(lockLog.some((e) => e.holder === name && e.kind === 'refused')).toBe(true);
    }
    // Nobody holds a lock once the trades are done.
    for (const w of workers) expect(await a.state.keys.executorLockHolder(w.id)).toBeNull();
  });
});
