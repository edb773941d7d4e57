/**
 * The one-process engine (docs/architecture.md §1): the scanner feeds the quote service's pool cache
 * directly, both read Solana JSON-RPC through one batched, coalesced account fetcher, and the
 * process serves
 *   quote HTTP (uWS) :8080 · quote metrics :9090 · local quote stream gRPC :50052 ·
 *   scanner HTTP :8081 · scanner metrics :9091.
 * `tidepool engine` runs it against real endpoints; `tidepool start` runs it under the simulator.
 */
import { CachePoolStateSink, type PoolCache } from '../cache/index.js';
import { CHeapTrim } from '../common/index.js';
import { redactedValues, type LoadedConfig } from '../config/index.js';
import type { Logger } from '../obs/index.js';
import type { RpcPoolLoader } from '../pools/index.js';
import { defaultQuoteConfig, type QuoteServiceConfig, createQuoteCache, createQuoteService, type QuoteService } from '../quote-service/index.js';
import { type SharedQuoteCache } from '../quote/index.js';
import { PoolRefresher } from '../quote/index.js';
import { abortable } from '../rpc/index.js';

import type { ScannerConfig } from '../scanner/index.js';
import type { Scanner } from '../scanner/index.js';
import type { GeyserStateSource } from '../scanner/index.js';
import { engineSchema, type EngineConfig } from './engine-config.js';
import { epochSourceOf, externalFallbackOf } from './quote-fallbacks.js';
import { createAccountReads, createPoolLoader, createScannerService, createStateSource } from './scanner-service.js';

export interface EngineEndpoints {
  quote: string;
  quoteMetrics: string;
  /** gRPC tidepool.v1.QuoteService.StreamBatchQuotes (the aggregator's local upstream), `host:port`. */
  localQuotes: string;
  scanner: string;
  scannerMetrics: string;
}

export interface Engine {
  readonly scanner: Scanner;
  readonly quote: QuoteService;
  /** The pool cache the scanner fills and the quote service reads (the console's pool table). */
  readonly cache: PoolCache;
  readonly loader: RpcPoolLoader;
  readonly refresher: PoolRefresher;
  /** The scanner's Geyser state source (scanner.stateSource geyser); undefined otherwise. */
  readonly geyser: GeyserStateSource | undefined;
  /** Binds the ports, starts the stream, reads the pools once; `signal` ends the wait for that read (close aborts it). */
  start(signal?: AbortSignal): Promise<EngineEndpoints>;
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
  /** The quote cache shared between replicas (engine/state `KvQuoteCache`): `quote:` / `price:` keys. */
  sharedQuoteCache?: SharedQuoteCache;
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
  const reads = createAccountReads(config['rpc.endpoints'], config['performance.rpcReadThread'], options.rpcWorkerFilename);
  // The pools' mints are read with them, so Token-2022 transfer fees reach the cache.
  const epochs = epochSourceOf(config['rpc.endpoints']);
  const loader = createPoolLoader(scannerConfig, reads.fetcher, epochs?.epochs);
  // scanner.stateSource geyser: the scanner reads its pools from the account stream (the quote
  // service's fallback reads stay on RPC).
  const stateSource = createStateSource(scannerConfig, options.pools, reads.fetcher, log.child({ component: 'scanner' }));
  const scannerLoader = stateSource.geyser === undefined ? loader : createPoolLoader(scannerConfig, stateSource.reader, epochs?.epochs, { keepAccounts: true });

  const cache = createQuoteCache(quoteConfig);
  const external = externalFallbackOf(quoteConfig);
  const quote = createQuoteService(quoteConfig, {
    cache,
    loader,
    ...(external === undefined ? {} : { external }),
    logger: log.child({ component: 'quote' }),
    busStatus: () => 'in-process',
    ...(options.sharedQuoteCache === undefined ? {} : { sharedCache: options.sharedQuoteCache }),
  });
  // Each stored update is counted and its pool remembered for the RPC fallback, as the bus consumer does.
  const sink = new CachePoolStateSink(cache, (_outcome, event) => quote.updates.recordStored(event.pool));

  const scannerService = createScannerService({
    config: scannerConfig,
    sink,
    loader: scannerLoader,
    fetcher: reads.fetcher,
    pools: options.pools,
    metricsPort: config['scanner.metricsPort'],
    ...(stateSource.geyser === undefined ? {} : { geyser: stateSource.geyser }),
    host: config.host,
    auth: config,
    configView: () => redactedValues(engineSchema, loaded),
    logger: log.child({ component: 'scanner' }),
    ...(options.parseWorkerFilename === undefined ? {} : { parseWorkerFilename: options.parseWorkerFilename }),
  });
  const scanner = scannerService.scanner;
  // RefreshSeconds: every monitored pool read once at start and every interval, so quiet pools
  // stay fresh and the first quotes are cache hits.
  const refresher = new PoolRefresher({
    loader,
    cache,
    pools: () => scanner.pools,
    intervalMs: config.refreshSeconds * 1000,
    logger: log.child({ component: 'refresher' }),
  });

  // The process's C heap, given back after the cache's fill (a platform service's ServiceHost does
  // the same).
  const cHeapTrim = new CHeapTrim();

  let closed: Promise<void> | undefined;
  return {
    scanner,
    quote,
    cache,
    loader,
    refresher,
    geyser: stateSource.geyser,
    async start(signal) {
      const { port, metricsPort, grpcPort } = await quote.start();
      const { port: scannerPort, metricsPort: scannerMetricsPort } = await scannerService.start();
      await abortable(refresher.start(), signal);
      cHeapTrim.start();
      const host = config.host.includes(':') ? `[${config.host}]` : config.host;
      return {
        quote: `${config['tls.certFile'] ? 'https' : 'http'}://${host}:${port}`,
        quoteMetrics: `http://${host}:${metricsPort}/metrics`,
        localQuotes: `${host}:${grpcPort}`,
        scanner: `http://${host}:${scannerPort}`,
        scannerMetrics: `http://${host}:${scannerMetricsPort}/metrics`,
      };
    },
    close() {
      closed ??= (async () => {
        cHeapTrim.stop();
        await refresher.close();
        await scannerService.close();
        await quote.close();
        await stateSource.close();
        await reads.close();
        await epochs?.close();
      })();
      return closed;
    },
  };
}
