/**
 * The scanner as a service, shared by the one-process engine (`tidepool engine` / `npm start`, sink
 * = the quote service's pool cache) and the split deployment's `tidepool scanner` (sink = the bus
 * publisher): the account reads (main thread or their own worker), the decoder registry and RPC pool
 * loader, the Scanner with its parse workers, its HTTP port (/health, /stats, /config, POST
 * /config/pools) and its metrics port.
 */
import { MetricsHttpServer } from '../common/index.js';
import { metricsResponse } from '../common/index.js';
import { createDecoderRegistry } from '../dex/index.js';
import { createHttpAuth, DEFAULT_AUTH_SETTINGS, type AuthSettings } from '../auth/index.js';
import { healthThresholdsOf, httpLimitsOf } from '../config/index.js';
import { bindAsIs, type BindPort, type Logger } from '../obs/index.js';
import { createScannerMetrics, type ScannerMetrics } from '../obs/index.js';
import { RpcPoolLoader, type EpochSource } from '../pools/index.js';
import { AccountFetcher, type AccountReader } from '../rpc/index.js';
import { RpcClient } from '../rpc/index.js';
import { WorkerAccountFetcher } from '../rpc/index.js';
import { GeyserStateSource, LookupTableCache, geyserEndpoint } from '../scanner/index.js';
import { blockStreamSettings, dexPrograms, type ScannerConfig } from '../scanner/index.js';
import { ScannerHttpServer } from '../scanner/index.js';
import { Scanner, type PoolStateSink } from '../scanner/index.js';
import { MonitoredPoolKeeper, discoverPools } from '../market/index.js';

export interface AccountReads {
  readonly fetcher: AccountReader;
  close(): Promise<void>;
}

/** RPC account reads on the main thread, or on their own thread (`performance.rpcReadThread`). */
export function createAccountReads(endpoints: readonly string[], onThread: boolean, workerFilename?: string): AccountReads {
  if (onThread) {
    const worker = new WorkerAccountFetcher({ endpoints: [...endpoints] }, workerFilename === undefined ? {} : { filename: workerFilename });
    return { fetcher: worker, close: () => worker.close() };
  }
  const rpc = new RpcClient({ endpoints: [...endpoints] });
  return { fetcher: new AccountFetcher(rpc), close: () => rpc.close() };
}

/**
 * The pool loader of the scanner's settings (its DEX program ids). With `epochs` it also reads each
 * pool's mints (`readMints`), so pools of Token-2022 mints with a transfer fee carry their
 * `transferFees` into the cache (the one-process engine's quotes deduct them). `keepAccounts`: each
 * LoadedPool keeps the accounts it was read from (the market scanner's event state).
 */
export function createPoolLoader(config: ScannerConfig, fetcher: AccountReader, epochs?: EpochSource, options: { keepAccounts?: boolean } = {}): RpcPoolLoader {
  const registry = createDecoderRegistry({ programIds: dexPrograms(config), ammLayout: config['pools.ammLayout'] });
  return new RpcPoolLoader(epochs === undefined ? { fetcher, registry, ...options } : { fetcher, registry, readMints: true, epochs, ...options });
}

/**
 * The scanner's state source (`scanner.stateSource`): undefined for block-entries (reads go to RPC
 * as they are); for geyser, the account stream of `scanner.geyserUrl` whose reader the pool loader
 * must read through (`reader`) and whose source goes to createScannerService (`geyser`).
 */
export function createStateSource(config: ScannerConfig, pools: readonly string[], fetcher: AccountReader, logger: Logger): { reader: AccountReader; geyser: GeyserStateSource | undefined; close(): Promise<void> } {
  if (config['scanner.stateSource'] !== 'geyser') return { reader: fetcher, geyser: undefined, close: async () => {} };
  const rpc = new RpcClient({ endpoints: [...config['rpc.endpoints']] });
  const geyser = new GeyserStateSource({
    endpoint: geyserEndpoint(config['scanner.geyserUrl']),
    pools,
    fallback: fetcher,
    readAccounts: (addresses) => rpc.getMultipleAccounts(addresses),
    arraysAhead: config['scanner.geyserArraysAhead'],
    logger,
  });
  return { reader: geyser.reader, geyser, close: () => rpc.close() };
}

export interface ScannerServiceOptions {
  config: ScannerConfig;
  /** Where events go. */
  sink: PoolStateSink;
  loader: RpcPoolLoader;
  fetcher: AccountReader;
  /** Monitored pools at start. */
  pools: readonly string[];
  /** The scanner's metrics port (`metrics.prometheusPort`, or the engine's `scanner.metricsPort`). */
  metricsPort: number;
  /** The setting that moves `metricsPort`; default SCANNER_METRICS_PORT_SETTING. */
  metricsPortSetting?: string;
  /** Bind address of both ports; default 127.0.0.1. */
  host?: string;
  /** What GET /config answers (redacted settings). */
  configView: () => Record<string, unknown>;
  logger: Logger;
  parseWorkerFilename?: string;
  /** The bus status, when the sink is the bus: /health fails while it is not connected. */
  busStatus?: () => string;
  /**
   * JWT bearer auth of POST /config/pools (engine/auth, `auto`: on unless `host` is loopback).
   * Absent: DEFAULT_AUTH_SETTINGS (auto).
   */
  auth?: AuthSettings;
  /** `scanner.stateSource` geyser (createStateSource): pool state from the account stream. */
  geyser?: GeyserStateSource;
}

/** The settings that move the scanner's two ports, as a person writes them (in a port-in-use error). */
export const SCANNER_HEALTH_PORT_SETTING = 'health.port (HEALTH_PORT, --health-port)';
export const SCANNER_METRICS_PORT_SETTING = 'metrics.prometheusPort (METRICS_PORT, --metrics-port)';

export interface ScannerService {
  readonly scanner: Scanner;
  readonly metrics: ScannerMetrics;
  readonly http: ScannerHttpServer;
  /** Pool discovery keeping the monitored set current (`pools.discoverMints`); none when off. */
  readonly keeper: MonitoredPoolKeeper | undefined;
  /** Binds both ports (each through `listen` when given), then starts the stream; resolves with the bound ports. */
  start(listen?: BindPort): Promise<{ port: number; metricsPort: number }>;
  /** Stops the stream, publishes what the scanner already holds, closes both ports. Idempotent. */
  close(): Promise<void>;
}

export function createScannerService(options: ScannerServiceOptions): ScannerService {
  const { config } = options;
  const host = options.host ?? '127.0.0.1';
  const metrics = createScannerMetrics();
  const scanner = new Scanner({
    stream: blockStreamSettings(config),
    pools: options.pools,
    loader: options.geyser === undefined ? options.loader : options.geyser.track(options.loader),
    sink: options.sink,
    performance: {
      maxConcurrentProcessing: config['performance.maxConcurrentProcessing'],
      batchSize: config['performance.batchSize'],
      queueSizeLimit: config['performance.queueSizeLimit'],
    },
    parse: {
      workers: config['performance.parseWorkers'],
      ...(options.parseWorkerFilename === undefined ? {} : { filename: options.parseWorkerFilename }),
    },
    metrics,
    logger: options.logger,
    lookupTables: new LookupTableCache(options.fetcher, { maxTables: 16_384 }),
    includeRawData: config['events.includeRawData'],
    ...(options.geyser === undefined ? {} : { accountStream: options.geyser.stream }),
  });
  options.geyser?.attach(scanner);
  const httpLimits = httpLimitsOf(config);
  const authorizeWrite = createHttpAuth(options.auth ?? DEFAULT_AUTH_SETTINGS, host);
  const http = new ScannerHttpServer({
    scanner,
    config: options.configView,
    host,
    httpLimits,
    health: { thresholds: healthThresholdsOf(config), maxEntryAgeMs: config['health.maxEntryAge'] },
    ...(authorizeWrite === undefined ? {} : { authorizeWrite }),
    ...(options.busStatus === undefined ? {} : { busStatus: options.busStatus }),
  });
  // The scanner's metrics port: the same server as the quote service's (also /debug/pprof/heap).
  const metricsServer = new MetricsHttpServer({ metrics: () => metricsResponse(metrics.registry, () => {}), host, httpLimits });

  // pools.discoverMints: the monitored set kept current by itself (engine/market).
  const mints = config['pools.discoverMints'];
  const keeper =
    mints.length === 0
      ? undefined
      : new MonitoredPoolKeeper({
          discover: () => discoverPools({ rpcUrl: config['rpc.endpoints'][0]!, mints, loader: options.loader }),
          loader: options.loader,
          current: () => scanner.pools,
          apply: (pools) => scanner.setPools(pools),
          maxCount: config['pools.maxCount'],
          intervalMs: config['pools.discoverInterval'],
          registry: metrics.registry,
          logger: options.logger.child({ component: 'pool-discovery' }),
        });

  let closed: Promise<void> | undefined;
  return {
    scanner,
    metrics,
    http,
    keeper,
    async start(listen: BindPort = bindAsIs) {
      const port = await listen({ what: 'scanner HTTP server', host, port: config['health.port'], setting: SCANNER_HEALTH_PORT_SETTING }, () => http.start(config['health.port']));
      const metricsPort = await listen({ what: 'scanner metrics server', host, port: options.metricsPort, setting: options.metricsPortSetting ?? SCANNER_METRICS_PORT_SETTING }, () => metricsServer.start(options.metricsPort));
      scanner.start();
      keeper?.start();
      return { port, metricsPort };
    },
    close() {
      closed ??= (async () => {
        await keeper?.close();
        await scanner.close();
        await Promise.all([http.close(), metricsServer.close()]);
      })();
      return closed;
    },
  };
}
