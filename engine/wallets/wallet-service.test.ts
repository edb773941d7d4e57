import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { hasPromtool, runPromtool } from '../obs/promtool.js';
import { ChainClient } from '../rpc/index.js';
import { USDC_MINT } from '../sim/known-accounts.js';
import { migrateUp } from '../state/db/migrations.js';
import { createServerDatabase, type TestDatabase } from '../state/db/testing.js';
import { KeySpace } from '../state/kv/key-space.js';
import { MemoryStore } from '../state/kv/memory-store.js';
import { WalletPassphrase } from './key-encryption.js';
import { Rebalancer } from './rebalancer.js';
import { balances, fund, startChain } from './testing.js';
import { WalletManager } from './wallet-manager.js';
import { WALLET_METRIC_NAMES, WalletMetrics } from './wallet-metrics.js';
import { NATIVE_SOL, type WalletRecord } from './wallet-repository.js';
import { WalletService } from './wallet-service.js';

/** The wallet service on the simulator with PostgreSQL: sync and rebalance on their own, metrics the alert rules read, failures survived. */

const SOL = 1_000_000_000n;
const USDC = 1_000_000n;

function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('wallet service', () => {
  let t: TestDatabase;
  let sim: Awaited<ReturnType<typeof startChain>>;
  let client: ChainClient;
  let manager: WalletManager;
  let treasure: WalletRecord;
  let worker: WalletRecord;
  let clock = 1_800_000_000_000;
  const now = (): number => clock;

  beforeAll(async () => {
    t = await createServerDatabase();
    await migrateUp(t.db);
    sim = await startChain();
    client = new ChainClient({ url: sim.url });
    manager = new WalletManager({ db: t.db, keys: new KeySpace(new MemoryStore(), 'test:'), chain: client, passphrase: WalletPassphrase.resolve({ passphrase: 'correct horse battery staple' }) });
    treasure = (await manager.create('treasure', 1))[0]!;
    worker = (
      await manager.create(
        'worker',
        1,
        new Map([
          [NATIVE_SOL, 2n * SOL],
          [USDC_MINT, 100n * USDC],
        ]),
      )
    )[0]!;
    await fund(sim.chain, treasure.address, 20n * SOL, 1_000n * USDC);
    await fund(sim.chain, worker.address, SOL / 2n, 10n * USDC);
  }, 60_000);

  afterAll(async () => {
    sim?.chain.stop();
    await sim?.rpc.close();
    await client?.close();
    await t?.drop();
  });

  it('tops a worker up on its first run, syncs on the next, exports the metrics the alert rules read, and survives a dead RPC', async () => {
    const registry = new Registry();
    const service = new WalletService({
      manager,
      rebalancer: new Rebalancer(manager, client, { pollMs: 20, resendMs: 200 }),
      syncIntervalMs: 30_000,
      rebalanceIntervalMs: 60_000,
      metrics: new WalletMetrics(registry),
      now,
    });
    expect(service.ready()).toBe(false);

    // run 1: a rebalance is due at once; the worker is below 50% of both expected balances
    await service.runOnce();
    expect(service.status()).toMatchObject({ lastError: null, lastRebalance: { transfers: 2, skipped: 0, settled: 0 } });
    expect(balances(sim.chain, worker.address)).toEqual({ sol: 2n * SOL, usdc: 100n * USDC });
    let text = await registry.metrics();
    expect(sample(text, WALLET_METRIC_NAMES.actual, { tier: 'worker', address: worker.address, token: 'SOL' })).toBe(Number(2n * SOL));
    expect(sample(text, WALLET_METRIC_NAMES.expected, { tier: 'worker', address: worker.address, token: USDC_MINT })).toBe(Number(100n * USDC));
    expect(sample(text, WALLET_METRIC_NAMES.actual, { tier: 'treasure', token: 'SOL' })).toBeGreaterThan(0);
    expect(sample(text, WALLET_METRIC_NAMES.transfers, { reason: 'top_up', status: 'confirmed' })).toBe(2);
    expect(service.ready()).toBe(true);

    // run 2, 30 s later: no rebalance due, a sync sees money that arrived from outside
    clock += 30_000;
    await fund(sim.chain, worker.address, SOL, 0n);
    await service.runOnce();
    text = await registry.metrics();
    expect(sample(text, WALLET_METRIC_NAMES.actual, { tier: 'worker', address: worker.address, token: 'SOL' })).toBe(Number(3n * SOL));
    expect(sample(text, WALLET_METRIC_NAMES.runs, { kind: 'sync', outcome: 'ok' })).toBe(1);
    expect(sample(text, WALLET_METRIC_NAMES.transfers, { reason: 'top_up', status: 'confirmed' })).toBe(2);

    // the metric names are the ones ops/prometheus/rules/wallets.yml alerts on, and promtool accepts the exposition
    const rules = readFileSync(fileURLToPath(new URL('../../ops/prometheus/rules/wallets.yml', import.meta.url)), 'utf8');
    for (const name of new Set(rules.match(/wallet_[a-z_]+/g))) expect(text).toContain(`# TYPE ${name} `);
    if (hasPromtool()) expect(runPromtool(['check', 'metrics'], text).status).toBe(0);

    // RPC gone: the run fails, is counted, the service keeps its last figures and stops being ready after three intervals
    const dead = new WalletService({ manager: new WalletManager({ db: t.db, chain: new ChainClient({ url: 'http://127.0.0.1:9/' }) }), syncIntervalMs: 30_000, rebalanceIntervalMs: 60_000, metrics: new WalletMetrics(new Registry()), now });
    await dead.runOnce();
    expect(dead.status().lastError).not.toBeNull();
    expect(dead.ready()).toBe(false);
    clock += 90_001;
    expect(service.ready()).toBe(false);
  });

  it('runs on its own timer until stopped, never two runs at once, and stop waits for the run in progress', async () => {
    let inFlight = 0;
    let most = 0;
    let runs = 0;
    const slow = {
      sync: async () => {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((r) => setImmediate(r));
        inFlight--;
        runs++;
        return [];
      },
      repo: { list: () => Promise.resolve([]) },
    } as unknown as WalletManager;
    const service = new WalletService({ manager: slow, syncIntervalMs: 1, rebalanceIntervalMs: 60_000, metrics: new WalletMetrics(new Registry()) });
    service.start();
    await new Promise<void>((resolve) => {
      const check = (): void => void (runs >= 5 ? resolve() : setImmediate(check));
      check();
    });
    await service.stop();
    expect(inFlight).toBe(0); // stop() waited for the run in progress
    expect(most).toBe(1);
    expect(service.status().runs).toBe(runs);
    expect(service.status().lastError).toBeNull();
  });
});
