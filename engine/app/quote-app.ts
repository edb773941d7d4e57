/**
 * `tidepool quote-service` (split deployment, issue 5): the quote service of spec 02 fed by the bus.
 *
 *   POOL_UPDATES ──durable BUS_CONSUMER_NAME──▶ PoolUpdateConsumer ──▶ quote.updates (steps 1-4) ──ack
 *                                                     │ concentrated / DLMM pool stored
 *                                                     └──▶ PoolContextReader (RPC: tick / bin arrays)
 *   at start: the newest update of every pool the stream still holds (60 s) seeds the cache
 *   PoolRefresher: every RefreshSeconds the pools of the pool directory are read from RPC
 *
 * With `rpc.endpoints` empty there are no RPC reads at all: no fallback, no refresh, no contexts
 * (concentrated and DLMM pools are then not quotable from the cache).
 *
 * Monitored pools (`pools.monitored` / MONITORED_POOLS, else `pools.file`, as the scanner and the
 * engine take them): read from RPC at start (before the ports report ready) and every
 * RefreshSeconds by the same PoolRefresher and RpcPoolLoader the engine uses, beside whatever the
 * bus names. With `bus.enabled` false ("no bus, RPC only") they are the service's pools: the
 * setting is required then (MONITORED_POOLS, or a readable pools file), and so is rpc.endpoints.
 *
 * Several replicas: give each its own BUS_CONSUMER_NAME, so each sees every update (one shared
 * durable would split the updates among them; see engine/bus/pool-updates.ts).
 */
import type { PoolCache } from '../cache/index.js';
import { BusStatus, disabledBusStatus, PoolUpdateConsumer, type BusConnection } from '../bus/index.js';
import { busAuthOf, type ConfigValues, type LoadedConfig, type LoadOptions } from '../config/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { loadQuoteConfig, quoteSchema, type QuoteServiceConfig, createQuoteCache, createQuoteService, type QuoteService, fallbackLoaderFromConfig } from '../quote-service/index.js';
import { monitoredPools, scannerSchema, type ScannerConfig } from '../scanner/index.js';
import type { Logger } from '../obs/index.js';
import type { PoolLoader } from '../pools/index.js';
import { PoolContextReader, PoolRefresher, type SharedQuoteCache } from '../quote/index.js';

import { HeartbeatStatus, type KeySpace } from '../state/index.js';
import { externalFallbackOf } from './quote-fallbacks.js';
import { ServiceHost } from './service-host.js';

/**
 * The settings of `tidepool quote-service`: the quote service's own and the monitored pools,
 * taken exactly as the scanner and the engine take them (MONITORED_POOLS, MONITORED_POOLS_FILE).
 */
export const quoteServiceSchema = {
  ...quoteSchema,
  'pools.monitored': scannerSchema['pools.monitored'],
  'pools.file': scannerSchema['pools.file'],
};
/** The quote service's config, with the monitored-pool settings (optional: tests pass the quote schema's alone). */
export type QuoteAppConfig = QuoteServiceConfig & Partial<Pick<ConfigValues<typeof quoteServiceSchema>, 'pools.monitored' | 'pools.file'>>;

/**
 * Loads `tidepool quote-service`'s settings (loadQuoteConfig's checks), and with bus.enabled false
 * requires what RPC alone needs: rpc.endpoints and monitored pools (MONITORED_POOLS, or a pools
 * file that reads). Throws TP_ERR_CONFIG_INVALID / TP_ERR_CONFIG_FILE naming the settings.
 */
export function loadQuoteServiceConfig(options: LoadOptions = {}): LoadedConfig<typeof quoteServiceSchema> {
  const loaded = loadQuoteConfig(options, quoteServiceSchema);
  const v = loaded.values;
  if (!v['bus.enabled']) {
    if (v['rpc.endpoints'].length === 0) {
      throw new TpError(ErrorCode.ConfigInvalid, 'bus.enabled: false (RPC only) needs rpc.endpoints (RPC_ENDPOINTS): there is nothing else to read pools from', {
        context: { setting: 'rpc.endpoints' },
      });
    }
    if (monitoredPoolsOf(v, true).length === 0) {
      throw new TpError(ErrorCode.ConfigInvalid, `bus.enabled: false (RPC only) needs monitored pools: pools.monitored (MONITORED_POOLS) is empty and pools.file ${v['pools.file']} lists none`, {
        context: { setting: 'pools.monitored' },
      });
    }
  }
  return loaded;
}

/**
 * The monitored pools of a quote service: pools.monitored, else (when `fileToo`, or when the bus
 * is off) the pools file. With the bus on and no explicit setting, none: the bus names the pools.
 */
function monitoredPoolsOf(config: QuoteAppConfig, fileToo: boolean): string[] {
  const listed = config['pools.monitored'] ?? [];
  if (listed.length > 0) return listed;
  if (!fileToo || config['pools.file'] === undefined) return [];
  return monitoredPools({ 'pools.monitored': listed, 'pools.file': config['pools.file'] } as ScannerConfig);
}

export interface QuoteAppOptions {
  logger: Logger;
  /** Default: an RpcPoolLoader on `rpc.endpoints`, none when the list is empty. */
  loader?: PoolLoader;
  /** Subject root other than `pool.state.updated` (tests). */
  subjectRoot?: string;
  /** Consumer lag report interval, ms (default 1000). */
  lagIntervalMs?: number;
  /**
   * The quote cache shared between replicas (engine/state `KvQuoteCache`, see
   * `openSplitQuoteCache`): answers written to `quote:` / `price:`, `quote:` read before RPC.
   */
  sharedQuoteCache?: SharedQuoteCache;
  /** Where the `system:health:quote-service` heartbeat goes (the host closes its store); none: no heartbeat. */
  heartbeat?: KeySpace;
}

export interface QuoteApp {
  /** The bus (when enabled), the heartbeat, the close stack, SIGTERM. */
  readonly host: ServiceHost;
  readonly quote: QuoteService;
  /** The monitored pools read at start and at every refresh (see the module comment). */
  readonly monitored: readonly string[];
  readonly cache: PoolCache;
  readonly bus: BusConnection | undefined;
  readonly consumer: PoolUpdateConsumer | undefined;
  readonly contexts: PoolContextReader | undefined;
  readonly refresher: PoolRefresher | undefined;
  /** `localQuotes`: the gRPC StreamBatchQuotes endpoint, `host:port`. */
  start(): Promise<{ quote: string; quoteMetrics: string; localQuotes: string }>;
  /** Stops consuming (delivered messages handled and acked), drains the bus, closes the ports. Idempotent. */
  close(): Promise<void>;
}

const STORED = new Set(['inserted', 'replaced']);

/** `{root}.{dex}.{address}` → [dex, address]. */
function dexAndAddress(subject: string): [string, string] {
  const last = subject.lastIndexOf('.');
  const before = subject.lastIndexOf('.', last - 1);
  return [subject.slice(before + 1, last), subject.slice(last + 1)];
}

/**
 * Builds the quote service on its host (nothing listens until `start`). A build that fails half way
 * has closed what it had opened (in reverse) before the promise rejects.
 */
export async function createQuoteApp(config: QuoteAppConfig, options: QuoteAppOptions): Promise<QuoteApp> {
  return ServiceHost.assemble(
    {
      service: 'quote-service',
      logger: options.logger,
      ...(config['bus.enabled']
        ? {
            // No start wait: the quote service starts with the bus down (RPC fallback, refresher) and
            // consumes once it is there; /health and /ready say how the bus is.
            bus: { servers: config['bus.servers'], auth: busAuthOf(config, config['bus.servers']), name: 'tidepool-quote-service', startWaitMs: 0 },
          }
        : {}),
      // Its heartbeat says ok, as before the host: /health and /ready tell the bus's state.
      heartbeatStatus: () => ({ status: HeartbeatStatus.Ok }),
    },
    async (host) => assembleQuoteApp(config, options, host),
  );
}

function assembleQuoteApp(config: QuoteAppConfig, options: QuoteAppOptions, host: ServiceHost): QuoteApp {
  const log = options.logger;
  const keys = options.heartbeat;
  if (keys !== undefined) {
    host.onClose('key space', () => keys.store.close());
    host.heartbeatTo(keys);
  }
  const cache = createQuoteCache(config);
  const loader = options.loader ?? fallbackLoaderFromConfig(config);
  const monitored = monitoredPoolsOf(config, !config['bus.enabled']);
  if (monitored.length > 0 && (loader === undefined || !config['cache.enabled'])) {
    throw new TpError(ErrorCode.ConfigInvalid, `monitored pools need rpc.endpoints (RPC_ENDPOINTS) and cache.enabled to be read and kept`, { context: { setting: 'pools.monitored' } });
  }
  const external = externalFallbackOf(config);
  const quote = createQuoteService(config, {
    cache,
    ...(loader === undefined ? {} : { loader }),
    ...(external === undefined ? {} : { external }),
    logger: log.child({ component: 'quote' }),
    busStatus: config['bus.enabled'] ? () => host.bus?.status ?? BusStatus.Connecting : disabledBusStatus,
    ...(options.sharedQuoteCache === undefined ? {} : { sharedCache: options.sharedQuoteCache }),
  });
  // Closed last: its ports answer /health until everything before them is closed.
  host.onClose('quote service', () => quote.close());
  const bus = config['bus.enabled'] ? host.openBusInBackground() : undefined;
  const contexts = loader === undefined || !config['cache.enabled'] ? undefined : new PoolContextReader({ loader, cache, logger: log.child({ component: 'contexts' }) });
  if (contexts !== undefined) host.onClose('pool contexts', () => contexts.close());
  const consumer =
    bus === undefined
      ? undefined
      : new PoolUpdateConsumer({
          bus,
          handler: quote.updates,
          streamName: config['bus.streamName'],
          consumerName: config['bus.consumerName'],
          maxAgeMs: config['bus.maxAge'],
          // A restart starts from the newest update of every pool the stream still holds (spec 02:
          // "starts with an empty cache and refills within about 30 s"); the refresher keeps them fresh.
          seedOnStart: true,
          ...(options.subjectRoot === undefined ? {} : { subjectRoot: options.subjectRoot }),
          ...(options.lagIntervalMs === undefined ? {} : { lagIntervalMs: options.lagIntervalMs }),
          logger: log.child({ component: 'consumer' }),
          ...(contexts === undefined
            ? {}
            : {
                onHandled: (outcome: unknown, subject: string) => {
                  if (typeof outcome !== 'string' || !STORED.has(outcome)) return;
                  const [dex, address] = dexAndAddress(subject);
                  if (PoolContextReader.needsContext(dex)) contexts.request(address);
                },
              }),
        });
  if (consumer !== undefined) host.onClose('pool update consumer', () => consumer.close());
  const refresher =
    loader === undefined || !config['cache.enabled']
      ? undefined
      : new PoolRefresher({
          loader,
          cache,
          // The monitored pools, and every pool the bus or a fallback made known.
          pools: () => (monitored.length === 0 ? quote.directory.addresses() : [...new Set([...monitored, ...quote.directory.addresses()])]),
          intervalMs: config.refreshSeconds * 1000,
          logger: log.child({ component: 'refresher' }),
        });
  if (refresher !== undefined) host.onClose('refresher', () => refresher.close());

  return {
    host,
    quote,
    monitored,
    cache,
    bus,
    consumer,
    contexts,
    refresher,
    async start() {
      const { port, metricsPort, grpcPort } = await quote.start((port, bind) => host.listen(port, bind));
      consumer?.start();
      // The first round reads the monitored pools (none: a no-op, later rounds read what the bus named);
      // a close (or a shutdown) ends the wait, and the refresher's close aborts its reads.
      const first = refresher === undefined ? undefined : await host.wait(refresher.start());
      if (monitored.length > 0) log.info({ pools: monitored.length, stored: first?.stored ?? 0, failed: first?.failed ?? 0 }, 'monitored pools loaded');
      await host.start();
      const at = config.host.includes(':') ? `[${config.host}]` : config.host;
      return { quote: `${config['tls.certFile'] ? 'https' : 'http'}://${at}:${port}`, quoteMetrics: `http://${at}:${metricsPort}/metrics`, localQuotes: `${at}:${grpcPort}` };
    },
    close: () => host.close(),
  };
}
