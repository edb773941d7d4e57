/**
 * The one-process engine (ARCHITECTURE §1): the scanner feeds the quote service's pool cache
 * directly, both read Solana JSON-RPC through one batched, coalesced account fetcher, and the
 * process serves
 *   quote HTTP (uWS) :8080 · quote metrics :9090 · scanner HTTP :8081 · scanner metrics :9091.
 * `tidepool engine` runs it against real endpoints; `tidepool start` runs it under the simulator.
 */
import { CachePoolStateSink } from '../cache/cache-sink.js';
import { redactedValues, type LoadedConfig } from '../config/loader.js';
import { createDecoderRegistry } from '../dex/registry.js';
import type { Logger } from '../obs/logger.js';
import { createScannerMetrics } from '../obs/scanner-metrics.js';
import { RpcPoolLoader } from '../pools/rpc-pool-loader.js';
import { defaultQuoteConfig, type QuoteServiceConfig } from '../quote/quote-config.js';
import { MetricsHttpServer } from '../quote/metrics-http-server.js';
import { metricsResponse } from '../quote/ops-endpoints.js';
import { PoolRefresher } from '../quote/pool-refresher.js';
import { createQuoteCache, createQuoteService, type QuoteService } from '../quote/quote-service.js';
import { AccountFetcher, type AccountReader } from '../rpc/account-fetcher.js';
import { RpcClient } from '../rpc/rpc-client.js';
import { WorkerAccountFetcher } from '../rpc/worker-account-fetcher.js';
import { blockStreamSettings, dexPrograms, type ScannerConfig } from '../scanner/scanner-config.js';
import { LookupTableCache } from '../scanner/lookup-tables.js';
import { Scanner } from '../scanner/scanner.js';
import { ScannerHttpServer } from '../scanner/scanner-http.js';
import { engineSchema, type EngineConfig } from './engine-config.js';

export interface EngineEndpoints {
  quote: string;
  quoteMetrics: string;
  scanner: string;
  scannerMetrics: string;
}

export interface Engine {
  readonly scanner: Scanner;
  readonly quote: QuoteService;
  readonly loader: RpcPoolLoader;
  readonly refresher: PoolRefresher;
  start(): Promise<EngineEndpoints>;
  /** Stops the stream, publishes what the scanner already holds, closes every port. Idempotent. */
  close(): Promise<void>;
}

export interface EngineOptions {
  logger: Logger;
  /** Monitored pools (from MONITORED_POOLS, the pools file, or the simulator's genesis). */
  pools: readonly string[];
  /** Parse worker module override (tests run from sources). */
  parseWorkerFilename?: string;
  /** RPC worker module override (tests run from sources). */
  rpcWorkerFilename?: string;
}

/** The quote service's view of the engine's settings: no bus, the engine's RPC endpoints. */
export function quoteConfigOf(config: EngineConfig): QuoteServiceConfig {
  const q = defaultQuoteConfig();
  for (const key of Object.keys(q) as (keyof QuoteServiceConfig)[]) {
    if (key in config) (q as Record<string, unknown>)[key] = (config as Record<string, unknown>)[key];
  }
  return { ...q, 'bus.enabled': false, 'rpc.endpoints': config['rpc.endpoints'] };
}

/** The scanner's view: the engine keeps the scanner's metrics port under its own key. */
function scannerConfigOf(config: EngineConfig): ScannerConfig {
  return config as unknown as ScannerConfig;
}

export function createEngine(loaded: LoadedConfig<typeof engineSchema>, options: EngineOptions): Engine {
  const config = loaded.values;
  const log = options.logger;
  const scannerConfig = scannerConfigOf(config);
  const quoteConfig = quoteConfigOf(config);

  // RPC reads on the main thread, or on their own thread (performance.rpcReadThread).
  let fetcher: AccountReader;
  let closeReads: () => Promise<void>;
  if (config['performance.rpcReadThread']) {
    const worker = new WorkerAccountFetcher(
      { endpoints: config['rpc.endpoints'] },
      options.rpcWorkerFilename === undefined ? {} : { filename: options.rpcWorkerFilename },
    );
    fetcher = worker;
    closeReads = () => worker.close();
  } else {
    const rpc = new RpcClient({ endpoints: config['rpc.endpoints'] });
    fetcher = new AccountFetcher(rpc);
    closeReads = () => rpc.close();
  }
  const registry = createDecoderRegistry({ programIds: dexPrograms(scannerConfig) });
  const loader = new RpcPoolLoader({ fetcher, registry });

  const cache = createQuoteCache(quoteConfig);
  const quote = createQuoteService(quoteConfig, { cache, loader, logger: log.child({ component: 'quote' }), busStatus: () => 'in-process' });
  // Each stored update is counted and its pool remembered for the RPC fallback, as the bus consumer does.
  const sink = new CachePoolStateSink(cache, (_outcome, event) => quote.updates.recordStored(event.pool));

  const scannerMetrics = createScannerMetrics();
  const scanner = new Scanner({
    stream: blockStreamSettings(scannerConfig),
    pools: options.pools,
    loader,
    sink,
    performance: {
      maxConcurrentProcessing: config['performance.maxConcurrentProcessing'],
      batchSize: config['performance.batchSize'],
      queueSizeLimit: config['performance.queueSizeLimit'],
    },
    parse: {
      workers: config['performance.parseWorkers'],
      ...(options.parseWorkerFilename === undefined ? {} : { filename: options.parseWorkerFilename }),
    },
    metrics: scannerMetrics,
    logger: log.child({ component: 'scanner' }),
    lookupTables: new LookupTableCache(fetcher, { maxTables: 16_384 }),
    includeRawData: config['events.includeRawData'],
  });
  // RefreshSeconds: every monitored pool read once at start and every interval, so quiet pools
  // stay fresh and the first quotes are cache hits.
  const refresher = new PoolRefresher({
    loader,
    cache,
    pools: () => scanner.pools,
    intervalMs: config.refreshSeconds * 1000,
    logger: log.child({ component: 'refresher' }),
  });
  const scannerHttp = new ScannerHttpServer({ scanner, config: () => redactedValues(engineSchema, loaded), host: config.host });
  // The scanner's metrics port: the same server as the quote service's (also /debug/pprof/heap).
  const scannerMetricsServer = new MetricsHttpServer({ metrics: () => metricsResponse(scannerMetrics.registry, () => {}), host: config.host });

  let closed: Promise<void> | undefined;
  return {
    scanner,
    quote,
    loader,
    refresher,
    async start() {
      const { port, metricsPort } = await quote.start();
      const scannerPort = await scannerHttp.start(config['health.port']);
      const scannerMetricsPort = await scannerMetricsServer.start(config['scanner.metricsPort']);
      scanner.start();
      await refresher.start();
      const host = config.host.includes(':') ? `[${config.host}]` : config.host;
      return {
        quote: `http://${host}:${port}`,
        quoteMetrics: `http://${host}:${metricsPort}/metrics`,
        scanner: `http://${host}:${scannerPort}`,
        scannerMetrics: `http://${host}:${scannerMetricsPort}/metrics`,
      };
    },
    close() {
      closed ??= (async () => {
        await refresher.close();
        await scanner.close();
        await Promise.all([quote.close(), scannerHttp.close(), scannerMetricsServer.close()]);
        await closeReads();
      })();
      return closed;
    },
  };
}
