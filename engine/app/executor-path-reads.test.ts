import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createLogger } from '../obs/logger.js';
import { FlakyJsonRpcProxy } from '../executor/testing/flaky-json-rpc-proxy.js';
import type { ExecutionResult } from '../messages/index.js';
import type { Trader } from '../sim/actors.js';
import type { Simulator } from '../sim/simulator.js';
import type { SqlClient } from '../state/index.js';
import type { WalletRecord } from '../wallets/index.js';
import { createExecutorApp, type ExecutorApp } from './executor-app.js';
import { executionResultsByTrade, holdingsOf, importWorkers, orderOpportunityOn, publishOpportunity, realExecutorConfig, resultOfTrade } from './testing/executor.js';
import { PlatformFixture, type FixtureBus } from './testing/platform-fixture.js';
import { eventually } from './testing.js';

/**
 * What a real trade waits for between "received" and "submitted" (issue 23), on a running
 * simulator behind a JSON-RPC proxy that counts calls, the local NATS, Redis and PostgreSQL: no
 * balance read (the wallets' balances are kept by the executor), no blockhash read (one is kept
 * warm), and the lookup of an existing trade runs while the route's pools are read.
 */

const logger = createLogger({ name: 'executor-path-test', level: process.env.TEST_LOG ?? 'silent' });
const fx = new PlatformFixture();
let sim: Simulator;
let proxy: FlakyJsonRpcProxy;
let bus: FixtureBus;
let app: ExecutorApp;
let traders: Trader[];
let workers: WalletRecord[];
let results: Map<string, ExecutionResult>;

/** Armed: the next lookup of a trade by opportunity waits until the proxy sees a getMultipleAccounts, then runs. */
let holdLookup = false;
let lookupOverlappedPoolRead: boolean | undefined;

function lookupHeldUntilPoolRead(db: SqlClient): SqlClient {
  return new Proxy(db, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target) as unknown;
      if (prop !== 'query' || typeof v !== 'function') return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      const query = (v as (...a: unknown[]) => Promise<unknown>).bind(target);
      return async (sql: string, ...rest: unknown[]) => {
        if (holdLookup && sql.includes('WHERE s.opportunity_id = $1')) {
          holdLookup = false;
          const before = proxy.received('getMultipleAccounts');
          lookupOverlappedPoolRead = false;
          await eventually(() => (proxy.received('getMultipleAccounts') > before ? true : undefined), 5_000, 'the pools read while the lookup is in flight');
          lookupOverlappedPoolRead = true;
        }
        return query(sql, ...rest);
      };
    },
  });
}

beforeAll(async () => {
  const started = await fx.runningSimulator(40);
  sim = started.sim;
  proxy = fx.closing(new FlakyJsonRpcProxy(started.endpoints.rpc), 'the JSON-RPC proxy');
  const rpc = await proxy.start();
  bus = await fx.bus('EP');
  await fx.database();
  await fx.keySpace();
  const loaded = realExecutorConfig(fx, {
    'rpc-endpoints': rpc,
    'executor-id': 'path-reads',
    'block-engine-url': started.endpoints.http,
    'max-concurrent-trades': '2',
    // No background read during the test: the blockhash read at start is the one every trade signs with.
    'blockhash-refresh': '10m',
  });
  app = fx.closing(await createExecutorApp(loaded, { logger, retryDelayMs: 50, pollMs: 40, blockhashMaxAgeMs: 600_000, wrapDb: (state) => lookupHeldUntilPoolRead(state.db) }), 'the executor');
  traders = [sim.chain.genesis.actors.traders[4]!, sim.chain.genesis.actors.traders[5]!];
  workers = await importWorkers(app.state.db, traders);
  results = executionResultsByTrade(fx, bus.prefix);
  await app.start();
}, 60_000);

afterAll(() => fx.close());

describe('the executor\'s path from an opportunity to its send', () => {
  it('reads no balance and no blockhash; the balances it keeps for the wallets are the chain\'s after the trades landed', async () => {
    const reads = (): number[] => ['getBalance', 'getTokenAccountsByOwner', 'getLatestBlockhash'].map((m) => proxy.received(m));
    const before = reads();
    expect(before[0]).toBeGreaterThan(0); // read once at start, with the keys
    const mints = new Set<string>();
    for (const amount of [10_000_000n, 20_000_000n]) {
      const op = orderOpportunityOn(sim.chain, amount);
      mints.add(op.inputMint).add(op.outputMint);
      await publishOpportunity(bus, op);
      const result = await resultOfTrade(results, op);
      expect(result.status).toBe('confirmed');
      expect(result.latency.submitMs).toBeDefined();
    }
    expect(reads()).toEqual(before);

    for (const [i, trader] of traders.entries()) {
      const kept = app.wallets!.holdingsOf(workers[i]!.id)!;
      const chain = holdingsOf(sim.chain, trader);
      expect(kept.lamports).toBe(chain.lamports);
      // The mints the trades moved (what the kept balances are asked about).
      for (const mint of mints) expect([mint, kept.tokens.get(mint) ?? 0n]).toEqual([mint, chain.tokens.get(mint) ?? 0n]);
    }
  });

  it('a wallet trading again while the blockhash kept is the one it signed with last reads a new one (never the same transaction twice)', async () => {
    // Both wallets signed with the blockhash read at start (no background read: the test above);
    // the least recently used one trades now.
    const before = proxy.received('getLatestBlockhash');
    const op = orderOpportunityOn(sim.chain, 10_000_000n);
    await publishOpportunity(bus, op);
    expect((await resultOfTrade(results, op)).status).toBe('confirmed');
    expect(proxy.received('getLatestBlockhash')).toBe(before + 1);
  });

  it('looks up the opportunity\'s trade while the route\'s pools are read, not before', async () => {
    holdLookup = true;
    const op = orderOpportunityOn(sim.chain, 15_000_000n);
    await publishOpportunity(bus, op);
    const result = await resultOfTrade(results, op);
    expect(lookupOverlappedPoolRead).toBe(true);
    expect(result.status).toBe('confirmed');
  });
});
