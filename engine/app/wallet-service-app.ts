/**
 * `tidepool wallets serve`: the wallet service of spec 03 as a long-running process.
 *
 *   start: refuse without a shared PostgreSQL (DATABASE_URL) and Redis (REDIS_URL) unless
 *          --single-instance (TIDEPOOL_SINGLE_INSTANCE) says one process alone is meant (it moves money: two services, or a
 *          service and an executor, each on its own embedded state would not see each other's
 *          transfers or locks); open the platform state; the `system:health:wallets` heartbeat
 *   run:   WalletService (engine/wallets/wallet-service.ts): a sync every syncInterval, a
 *          rebalancing run every rebalanceInterval unless rebalancing is off; wallet_* metrics
 *   HTTP:  GET /health (last run, single-instance or not), GET /ready (a sync younger than three
 *          intervals, database and key space reachable), GET /metrics on wallets.port (8089)
 */
import type { Server } from 'node:http';

import { Registry } from 'prom-client';

import { bool, checkSharedState, DEFAULT_HTTP_LIMITS, deploymentHealth, type deploymentSafetySchema, duration, int, setting, str } from '../config/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { closeServer, createLimitedServer, listenOn, type Logger } from '../obs/index.js';
import { ChainClient } from '../rpc/index.js';
import { type databaseSchema, openPlatformState, type redisSchema, startServiceState, type walletSchema, type ServiceState } from '../state/index.js';
import { Rebalancer, WalletManager, WalletMetrics, WalletPassphrase, WalletService } from '../wallets/index.js';

export const walletServiceSchema = {
  'wallets.syncInterval': setting({ description: 'wallets serve: time between two balance syncs', parse: duration({ min: 1_000 }), default: 30_000, env: 'WALLETS_SYNC_INTERVAL', flag: 'sync-interval' }),
  'wallets.rebalanceInterval': setting({ description: 'wallets serve: time between two rebalancing runs', parse: duration({ min: 1_000 }), default: 300_000, env: 'WALLETS_REBALANCE_INTERVAL', flag: 'rebalance-interval' }),
  'wallets.rebalance': setting({ description: 'wallets serve: move funds by the tier rules (false: sync and report only)', parse: bool(), default: true, env: 'WALLETS_REBALANCE', flag: 'rebalance' }),
  'wallets.host': setting({ description: 'wallets serve: bind address of the probes and /metrics', parse: str({ nonEmpty: true }), default: '127.0.0.1', env: 'WALLETS_HOST', flag: 'host' }),
  'wallets.port': setting({ description: 'wallets serve: HTTP port of /health, /ready, /metrics', parse: int({ min: 0, max: 65_535 }), default: 8089, env: 'WALLETS_PORT', flag: 'port' }),
};

type Values<S> = { [K in keyof S]: S[K] extends { parse: (raw: unknown) => infer T } ? T : never };
export type WalletServiceConfig = Values<typeof databaseSchema & typeof redisSchema & typeof walletSchema & typeof walletServiceSchema & typeof deploymentSafetySchema>;

export interface WalletServiceApp {
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
  const state = await openPlatformState(config);
  const chain = new ChainClient({ url: config['rpc.url'] });
  const closeAll: (() => Promise<unknown>)[] = [() => state.close(), () => chain.close()];
  try {
    const registry = new Registry();
    const manager = new WalletManager({ db: state.db, keys: state.keys, chain, ...(passphrase === undefined ? {} : { passphrase }), logger: log.child({ component: 'wallets' }) });
    const service = new WalletService({
      manager,
      ...(config['wallets.rebalance'] ? { rebalancer: new Rebalancer(manager, chain, { logger: log.child({ component: 'rebalancer' }) }) } : {}),
      syncIntervalMs: config['wallets.syncInterval'],
      rebalanceIntervalMs: config['wallets.rebalanceInterval'],
      metrics: new WalletMetrics(registry),
      logger: log.child({ component: 'wallet-service' }),
    });
    const singleInstance = safety.singleInstance;
    let server: Server | undefined;
    let serviceState: ServiceState | undefined;
    const health = (): Record<string, unknown> => ({ status: service.status().lastError === null ? 'ok' : 'degraded', singleInstance, ...deploymentHealth(safety), ...service.status() });

    return {
      service,
      registry,
      async start() {
        serviceState = await startServiceState({
          services: ['wallets'],
          keys: state.keys,
          status: () => ({ status: service.ready() ? 'ok' : 'degraded', detail: { singleInstance, lastError: service.status().lastError } }),
          logger: log.child({ component: 'heartbeat' }),
        });
        closeAll.unshift(() => serviceState!.close());
        service.start();
        closeAll.unshift(() => service.stop());
        server = createLimitedServer((req, res) => {
          void (async () => {
            const json = { 'content-type': 'application/json' };
            if (req.url === '/health') return void res.writeHead(200, json).end(JSON.stringify(health()));
            if (req.url === '/ready') {
              const deps = await state.dependencyStatus();
              const ok = service.ready() && deps.every((d) => d.ok);
              return void res.writeHead(ok ? 200 : 503, json).end(JSON.stringify({ status: ok ? 'ready' : 'not_ready', synced: service.ready(), dependencies: deps }));
            }
            if (req.url === '/metrics') return void res.writeHead(200, { 'content-type': registry.contentType }).end(await registry.metrics());
            res.writeHead(404, json).end(JSON.stringify({ error: { code: ErrorCode.NotFound, message: `no route ${req.url ?? ''}` } }));
          })();
        }, DEFAULT_HTTP_LIMITS);
        const port = await listenOn(server, config['wallets.host'], config['wallets.port'], 'wallet service port (WALLETS_PORT)');
        return { http: `http://${config['wallets.host']}:${port}` };
      },
      async close() {
        if (server !== undefined) await closeServer(server);
        for (const c of closeAll) await c().catch(() => undefined);
      },
    };
  } catch (err) {
    for (const c of closeAll) await c().catch(() => undefined);
    throw err;
  }
}
