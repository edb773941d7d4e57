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
 * (concentrated and DLMM pools are then not quotable from the cache). With `bus.enabled` false the
 * service only answers through the RPC fallback.
 *
 * Several replicas: give each its own BUS_CONSUMER_NAME, so each sees every update (one shared
 * durable would split the updates among them; see engine/bus/pool-updates.ts).
 */
import type { PoolCache } from '../cache/index.js';
import { BusConnection, disabledBusStatus, PoolUpdateConsumer } from '../bus/index.js';
import type { Logger } from '../obs/index.js';
import type { PoolLoader } from '../pools/index.js';
import { PoolContextReader, PoolRefresher, type SharedQuoteCache } from '../quote/index.js';
import { type QuoteServiceConfig, createQuoteCache, createQuoteService, type QuoteService, fallbackLoaderFromConfig } from '../quote-service/index.js';

import { externalFallbackOf } from './quote-fallbacks.js';

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
}

export interface QuoteApp {
  readonly quote: QuoteService;
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

export function createQuoteApp(config: QuoteServiceConfig, options: QuoteAppOptions): QuoteApp {
  const log = options.logger;
  const cache = createQuoteCache(config);
  const loader = options.loader ?? fallbackLoaderFromConfig(config);
  const bus = config['bus.enabled'] ? BusConnection.open({ servers: config['bus.servers'], name: 'tidepool-quote-service', logger: log.child({ component: 'bus' }) }) : undefined;
  const external = externalFallbackOf(config);
  const quote = createQuoteService(config, {
    cache,
    ...(loader === undefined ? {} : { loader }),
    ...(external === undefined ? {} : { external }),
    logger: log.child({ component: 'quote' }),
    busStatus: bus === undefined ? disabledBusStatus : () => bus.status,
    ...(options.sharedQuoteCache === undefined ? {} : { sharedCache: options.sharedQuoteCache }),
  });
  const contexts = loader === undefined || !config['cache.enabled'] ? undefined : new PoolContextReader({ loader, cache, logger: log.child({ component: 'contexts' }) });
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
  const refresher =
    loader === undefined || !config['cache.enabled']
      ? undefined
      : new PoolRefresher({
          loader,
          cache,
          pools: () => quote.directory.addresses(),
          intervalMs: config.refreshSeconds * 1000,
          logger: log.child({ component: 'refresher' }),
        });

  let closed: Promise<void> | undefined;
  return {
    quote,
    cache,
    bus,
    consumer,
    contexts,
    refresher,
    async start() {
      const { port, metricsPort, grpcPort } = await quote.start();
      consumer?.start();
      // The directory is empty at start: the first round is a no-op, later rounds read what the bus named.
      await refresher?.start();
      const host = config.host.includes(':') ? `[${config.host}]` : config.host;
      return { quote: `http://${host}:${port}`, quoteMetrics: `http://${host}:${metricsPort}/metrics`, localQuotes: `${host}:${grpcPort}` };
    },
    close() {
      closed ??= (async () => {
        await refresher?.close();
        await consumer?.close();
        await contexts?.close();
        await bus?.close();
        await quote.close();
      })();
      return closed;
    },
  };
}
