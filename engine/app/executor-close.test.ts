import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { tradeIdOf } from '../executor/index.js';
import { FlakyJsonRpcProxy } from '../executor/testing/flaky-json-rpc-proxy.js';
import { createLogger } from '../obs/logger.js';
import type { Simulator } from '../sim/simulator.js';
import type { TestDatabase } from '../state/db/testing.js';
import { createExecutorApp, type ExecutorApp } from './executor-app.js';
import { importWorkers, orderOpportunityOn, publishOpportunity, realExecutorConfig } from './testing/executor.js';
import { PlatformFixture, type FixtureBus } from './testing/platform-fixture.js';
import { eventually } from './testing.js';

/**
 * Issue 25 item 4: the executor's close aborts the submissions in flight instead of waiting them
 * out (30 s of execution timeout). The chain's clock is stopped, so the trade is sent and cannot
 * land; the app is closed then. The trade is not recorded `expired` (it may still land while its
 * blockhash is valid): it stays pending or submitted with its signature, for the redelivery to
 * reconcile from the chain (executor-kill.test.ts shows that path).
 */

const logger = createLogger({ name: 'executor-close-test', level: process.env.TEST_LOG ?? 'silent' });
const fx = new PlatformFixture();
let sim: Simulator;
let proxy: FlakyJsonRpcProxy;
let bus: FixtureBus;
let app: ExecutorApp;
let database: TestDatabase;

beforeAll(async () => {
  const started = await fx.runningSimulator(40);
  sim = started.sim;
  proxy = fx.closing(new FlakyJsonRpcProxy(started.endpoints.rpc), 'the JSON-RPC proxy');
  const rpc = await proxy.start();
  bus = await fx.bus('EXC');
  database = await fx.database();
  await fx.keySpace();
  const loaded = realExecutorConfig(fx, {
    'rpc-endpoints': rpc,
    'executor-id': 'close-executor',
    'block-engine-url': started.endpoints.http,
    'busy-retry': '50',
  });
  app = fx.closing(await createExecutorApp(loaded, { logger, retryDelayMs: 50, pollMs: 40 }), 'the executor');
  await importWorkers(app.state.db, [sim.chain.genesis.actors.traders[2]!]);
  await app.start();
}, 60_000);

afterAll(() => fx.close());

describe('executor close during a trade', () => {
  it('aborts the submission in flight; the trade stays pending or submitted with its signature', async () => {
    sim.chain.stop();
    const op = orderOpportunityOn(sim.chain, 50_000_000n);
    await publishOpportunity(bus, op);
    await eventually(async () => {
      const [r] = await app.state.db.query<{ signature: string | null }>('SELECT signature FROM trades WHERE id = $1', [tradeIdOf(op.id)]);
      return r !== undefined && r.signature !== null && proxy.received('sendTransaction') >= 1 ? r : undefined;
    }, 30_000, 'the trade sent');
    await app.close();
    // The test database's own pool outlives the app's.
    const [after] = await database.db.query<{ status: string; signature: string | null }>('SELECT status, signature FROM trades WHERE id = $1', [tradeIdOf(op.id)]);
    expect(['pending', 'submitted']).toContain(after!.status);
    expect(after!.signature).not.toBeNull();
    sim.chain.start();
  }, 20_000);
});
