/**
 * `tidepool wallets serve`: the wallet service of spec 03 as a long-running process.
 *
 *   start: refuse without a shared PostgreSQL (DATABASE_URL) and Redis (REDIS_URL) unless
 *          --single-instance (TIDEPOOL_SINGLE_INSTANCE) says one process alone is meant (it moves money: two services, or a
 *          service and an executor, each on its own embedded state would not see each other's
 *          transfers or locks); open the platform state; the `system:health:wallets` heartbeat
 *          (assembled by the ServiceHost, service-host.ts: ops port, heartbeat, close stack)
 *   run:   WalletService (engine/wallets/wallet-service.ts): a sync every syncInterval, a
 *          rebalancing run every rebalanceInterval unless rebalancing is off; wallet_* metrics
 *   HTTP:  GET /health (last run, single-instance or not), GET /ready (a sync younger than three
 *          intervals, database and key space reachable), GET /metrics on wallets.port (8089)
 */
import type { Registry } from 'prom-client';

import { bool, checkSharedState, deploymentHealth, heapProfileSchema, httpLimitsOf, httpServerSchema, type deploymentSafetySchema, duration, int, setting, str } from '../config/index.js';
import { ErrorCode, TpError } from '../errors.js';
import type { Logger } from '../obs/index.js';
import { ChainClient } from '../rpc/index.js';
import { type databaseSchema, openPlatformState, type PlatformState, type redisSchema, type walletSchema } from '../state/index.js';
import { Rebalancer, WalletManager, WalletMetrics, WalletPassphrase, WalletService } from '../wallets/index.js';
import { ServiceHost } from './service-host.js';

export const walletServiceSchema = {
  'wallets.syncInterval': setting({ description: 'wallets serve: time between two balance syncs', parse: duration({ min: 1_000 }), default: 30_000, env: 'WALLETS_SYNC_INTERVAL', flag: 'sync-interval' }),
  'wallets.rebalanceInterval': setting({ description: 'wallets serve: time between two rebalancing runs', parse: duration({ min: 1_000 }), default: 300_000, env: 'WALLETS_REBALANCE_INTERVAL', flag: 'rebalance-interval' }),
  'wallets.rebalance': setting({ description: 'wallets serve: move funds by the tier rules (false: sync and report only)', parse: bool(), default: true, env: 'WALLETS_REBALANCE', flag: 'rebalance' }),
  'wallets.host': setting({ description: 'wallets serve: bind address of the probes and /metrics', parse: str({ nonEmpty: true }), default: '127.0.0.1', env: 'WALLETS_HOST', flag: 'host' }),
  'wallets.port': setting({ description: 'wallets serve: HTTP port of /health, /ready, /metrics', parse: int({ min: 0, max: 65_535 }), default: 8089, env: 'WALLETS_PORT', flag: 'port' }),
  ...httpServerSchema,
  ...heapProfileSchema,
};

type Values<S> = { [K in keyof S]: S[K] extends { parse: (raw: unknown) => infer T } ? T : never };
export type WalletServiceConfig = Values<typeof databaseSchema & typeof redisSchema & typeof walletSchema & typeof walletServiceSchema & typeof deploymentSafetySchema>;

export interface WalletServiceApp {
  /** The ops port (probes, metrics), the `system:health:wallets` heartbeat and the close stack. */
  readonly host: ServiceHost;
  readonly service: WalletService;
  readonly registry: Registry;
  start(): Promise<{ http: string }>;
  close(): Promise<void>;
}

export async function createWalletServiceApp(config: WalletServiceConfig, options: { logger: Logger }): Promise<WalletServiceApp> {
  const safety = checkSharedState('tidepool wallets serve', config);
  const log = options.logger;
  const passphrase =
    config['wallets.passphrase'] === '' && config['wallets.keyFile'] === '' ? undefined : WalletPassphrase.resolve({ passphrase: config['wallets.passphrase'], keyFile: config['wallets.keyFile'] });
  if (config['wallets.rebalance'] && passphrase === undefined) {
    throw new TpError(ErrorCode.WalletPassphrase, 'rebalancing signs transfers: set TIDEPOOL_WALLET_PASSPHRASE or TIDEPOOL_WALLET_KEY_FILE, or --rebalance false to sync only', { context: { setting: 'wallets.passphrase' } });
  }
  let service: WalletService | undefined;
  let state: PlatformState | undefined;
  const singleInstance = safety.singleInstance;
  return ServiceHost.assemble(
    {
      service: 'wallets',
      logger: log,
      heapProfile: config['debug.heapProfile'],
      http: { host: config['wallets.host'], port: config['wallets.port'], portSetting: 'wallets.port (WALLETS_PORT, --port)', limits: httpLimitsOf(config) },
      health: () => ({ status: service?.status().lastError === null ? 'ok' : 'degraded', singleInstance, ...deploymentHealth(safety), ...service?.status() }),
      ready: async () => {
        const dependencies = (await state?.dependencyStatus()) ?? [];
        const synced = service?.ready() ?? false;
        return { ok: synced && dependencies.every((d) => d.ok), detail: { synced, dependencies } };
      },
      heartbeatStatus: () => ({ status: service?.ready() === true ? 'ok' : 'degraded', detail: { singleInstance, lastError: service?.status().lastError ?? null } }),
    },
    async (host) => {
      // A shutdown during the start ends this wait (host.signal): the build then closes what it opened.
      const opened = await host.open('platform state', openPlatformState(config), (s) => s.close());
      state = opened;
      host.heartbeatTo(opened.keys);
      const chain = new ChainClient({ url: config['rpc.url'] });
      host.onClose('chain', () => chain.close());
      const registry = host.registry;
      const manager = new WalletManager({ db: opened.db, keys: opened.keys, chain, ...(passphrase === undefined ? {} : { passphrase }), logger: log.child({ component: 'wallets' }) });
      const wallets = new WalletService({
        manager,
        ...(config['wallets.rebalance'] ? { rebalancer: new Rebalancer(manager, chain, { logger: log.child({ component: 'rebalancer' }) }) } : {}),
        syncIntervalMs: config['wallets.syncInterval'],
        rebalanceIntervalMs: config['wallets.rebalanceInterval'],
        metrics: new WalletMetrics(registry),
        logger: log.child({ component: 'wallet-service' }),
      });
      service = wallets;
      const app: WalletServiceApp = {
        host,
        service: wallets,
        registry,
        async start() {
          wallets.start();
          host.onClose('wallet service', () => wallets.stop());
          const { http } = await host.start();
          return { http: http! };
        },
        close: () => host.close(),
      };
      return app;
    },
  );
}
