import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { deploymentSafetySchema } from '../config/index.js';
import { loadConfig } from '../config/loader.js';
import { createLogger } from '../obs/logger.js';
import { ChainClient } from '../rpc/index.js';
import { USDC_MINT } from '../sim/known-accounts.js';
import { databaseSchema, redisSchema, walletSchema } from '../state/index.js';
import { migrateUp } from '../state/db/migrations.js';
import { createServerDatabase, type TestDatabase } from '../state/db/testing.js';
import { openKeySpace } from '../state/kv/open-kv.js';
import { KeySpace } from '../state/kv/key-space.js';
import { MemoryStore } from '../state/kv/memory-store.js';
import { NATIVE_SOL, WalletManager, WalletPassphrase, type WalletRecord } from '../wallets/index.js';
import { fund, startChain } from '../wallets/testing.js';
import { uniqueName } from '../bus/testing/local-nats.js';
import { createWalletServiceApp, walletServiceSchema, type WalletServiceApp, type WalletServiceConfig } from './wallet-service-app.js';
import { eventually } from './testing.js';

/**
 * `tidepool wallets serve` on the simulator with the real PostgreSQL and Redis: it refuses to run
 * alone by accident, syncs and rebalances on its own, and reports itself as every service does.
 */
const schema = { ...databaseSchema, ...redisSchema, ...walletSchema, ...walletServiceSchema, ...deploymentSafetySchema };
const logger = createLogger({ name: 'wallet-service-app-test', level: process.env.TEST_LOG ?? 'silent' });
const PASSPHRASE = 'correct horse battery staple';
const SOL = 1_000_000_000n;
const USDC = 1_000_000n;

function config(env: Record<string, string>, flags: Record<string, string> = {}): WalletServiceConfig {
  return loadConfig(schema, { env: { TIDEPOOL_WALLET_PASSPHRASE: PASSPHRASE, ...env }, flags: { port: '0', ...flags } }).values as WalletServiceConfig;
}

describe('tidepool wallets serve', () => {
  let t: TestDatabase;
  let sim: Awaited<ReturnType<typeof startChain>>;
  let worker: WalletRecord;
  let app: WalletServiceApp | undefined;
  const keyPrefix = `${uniqueName('ws')}:`;

  beforeAll(async () => {
    t = await createServerDatabase();
    await migrateUp(t.db);
    sim = await startChain();
    const chain = new ChainClient({ url: sim.url });
    const manager = new WalletManager({ db: t.db, keys: new KeySpace(new MemoryStore(), 'setup:'), chain, passphrase: WalletPassphrase.resolve({ passphrase: PASSPHRASE }) });
    const treasure = (await manager.create('treasure', 1))[0]!;
    worker = (await manager.create('worker', 1, new Map([[NATIVE_SOL, 2n * SOL], [USDC_MINT, 100n * USDC]])))[0]!;
    await fund(sim.chain, treasure.address, 20n * SOL, 1_000n * USDC);
    await fund(sim.chain, worker.address, SOL / 2n, 10n * USDC);
    await chain.close();
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    sim?.chain.stop();
    await sim?.rpc.close();
    await t?.drop();
  });

  it('refuses to start without the shared database and key space, naming what is missing', async () => {
    await expect(createWalletServiceApp(config({}), { logger })).rejects.toMatchObject({
      code: 'TP_ERR_CONFIG_INVALID',
      message: expect.stringMatching(/REDIS_URL \(redis\.url.*DATABASE_URL \(database\.url/),
    });
    const onlyRedisMissing = createWalletServiceApp(config({ DATABASE_URL: t.url! }), { logger });
    await expect(onlyRedisMissing).rejects.toMatchObject({ message: expect.stringContaining('REDIS_URL (redis.url') });
    await expect(onlyRedisMissing).rejects.toMatchObject({ message: expect.not.stringContaining('DATABASE_URL') });
  });

  it('refuses to rebalance without the passphrase that signs the transfers', async () => {
    await expect(
      createWalletServiceApp(config({ DATABASE_URL: t.url!, REDIS_URL: 'redis://127.0.0.1:6379', TIDEPOOL_WALLET_PASSPHRASE: '' }), { logger }),
    ).rejects.toMatchObject({ code: 'TP_ERR_WALLET_PASSPHRASE' });
  });

  it('tops the worker up on its own, then reports ready, metrics and its heartbeat', async () => {
    app = await createWalletServiceApp(
      config({ DATABASE_URL: t.url!, REDIS_URL: 'redis://127.0.0.1:6379', REDIS_KEY_PREFIX: keyPrefix, RPC_URL: sim.url }, { 'sync-interval': '1s', 'rebalance-interval': '1h' }),
      { logger },
    );
    const { http } = await app.start();
    const balance = new RegExp(`wallet_balance_actual\\{[^}]*address="${worker.address}"[^}]*token="SOL"[^}]*\\} 2000000000`);
    const metrics = await eventually(async () => {
      const text = await (await fetch(`${http}/metrics`)).text();
      // The balance gauge follows at the next sync after the top-up settles.
      return balance.test(text) && /wallet_rebalance_transfers_total\{[^}]*status="confirmed"[^}]*\} [1-9]/.test(text) ? text : undefined;
    }, 30_000, 'a confirmed top-up, then a sync');
    expect(metrics).toMatch(balance);
    await eventually(async () => ((await fetch(`${http}/ready`)).status === 200 ? true : undefined), 10_000, 'ready');
    expect(await (await fetch(`${http}/health`)).json()).toMatchObject({ singleInstance: false, rebalancing: true, lastError: null });
    const keys = await openKeySpace({ url: 'redis://127.0.0.1:6379', prefix: keyPrefix });
    try {
      // The first beat (at start, before the first sync) says degraded; the next ones ok.
      expect(await eventually(async () => ((await keys.getHealth('wallets'))?.status === 'ok' ? true : undefined), 15_000, 'an ok heartbeat')).toBe(true);
    } finally {
      await keys.store.close();
    }
  });
});
