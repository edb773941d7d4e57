/**
 * The quote service in one object (spec 02), as `tidepool engine` and `tidepool quote-service`
 * start it: the uWS quote port, the metrics port, the gRPC quote stream (spec 01 local upstream,
 * `grpc.port`, default 50052), the eviction tick (which also keeps the pool directory up to date),
 * and the sampling heap profiler, all from a `QuoteServiceConfig`.
 */
import { createGrpcAuth } from '../auth/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { PoolCache } from '../cache/index.js';
import { healthThresholdsOf, httpLimitsOf, serverTlsOf } from '../config/index.js';
import { bindAsIs, type BindPort, type Logger, createQuoteMetrics, type QuoteMetrics } from '../obs/index.js';
import { LimitedPoolLoader, PoolDirectory, PoolUpdateHandler, PoolValidator, QuoteEngine, RateLimiter, type ExternalQuoter, type SharedQuoteCache } from '../quote/index.js';
import type { PoolLoader } from '../pools/index.js';
import { CircuitBreaker, MetricsHttpServer } from '../common/index.js';
import type { QuoteServiceConfig } from './quote-config.js';

import { QuoteHttpServer, type SwapTransactions } from '../quote-http/index.js';
import { quoteNotReady } from './quote-readiness.js';
import { QuoteStreamServer } from '../quote-grpc/index.js';

import { fallbackLoaderFromConfig } from './rpc-loader.js';
import { swapBuilderFromConfig } from './swap-builder-config.js';


export interface QuoteServiceDeps {
  /** The pool cache the bus consumer (or the in-process scanner) fills; see `createQuoteCache`. */
  cache: PoolCache;
  /**
   * Reads pool state from RPC for the fallback. Default: an RpcPoolLoader on `rpc.endpoints`, or
   * none (no fallback) when that list is empty.
   */
  loader?: PoolLoader;
  /**
   * The external-aggregator fallback (after cache and RPC); none by default. The application builds
   * it from `externalFallback.*` (engine/external `ProviderFallbackQuoter`): this layer cannot.
   */
  external?: ExternalQuoter;
  logger: Logger;
  /** The quote registry; a fresh one (with the Node process metrics) by default. */
  metrics?: QuoteMetrics;
  /** The bus connection status for /health; default 'disabled' when `bus.enabled` is false, else 'unknown'. */
  busStatus?: () => string;
  /** The quote cache shared between replicas (engine/state `KvQuoteCache`, wired by engine/app); none by default. */
  sharedCache?: SharedQuoteCache;
  /** More readiness conditions for GET /ready (the app's: consumer seeded, ...); undefined: ready. */
  notReady?: () => string | undefined;
  /** The swap builder of POST /swap/v1/swap(-instructions). Default: one on `rpc.endpoints` (swap-builder-config.ts), none without. */
  swaps?: SwapTransactions;
}

/** The ports a started quote service is bound to. */
export interface QuoteServicePorts {
  /** HTTP GET /quote, /health. */
  port: number;
  metricsPort: number;
  /** gRPC tidepool.v1.QuoteService.StreamBatchQuotes. */
  grpcPort: number;
}

export interface QuoteService {
  /** The transport-free quote core every port quotes through. */
  readonly engine: QuoteEngine;
  /** GET /quote, /health, /metrics over uWS: an adapter over `engine`. */
  readonly server: QuoteHttpServer;
  /** The gRPC quote stream (StreamBatchQuotes): an adapter over `engine`. */
  readonly stream: QuoteStreamServer;
  readonly metrics: QuoteMetrics;
  readonly directory: PoolDirectory;
  readonly breaker: CircuitBreaker;
  /** The global bound of the RPC fallback's reads (undefined without a fallback loader). */
  readonly fallbackLimiter: LimitedPoolLoader | undefined;
  /**
   * Where pool state updates enter: `handleMessage(bytes)` per bus message (then ack), or
   * `recordStored(pool)` from the in-process scanner's cache sink.
   */
  readonly updates: PoolUpdateHandler;
  /** The periodic cache-versus-RPC validation (hybridMode.validateInterval); none without RPC or cache. */
  readonly validator: PoolValidator | undefined;
  /** Binds the quote, metrics and gRPC ports, each through `listen` when given; resolves with the bound ports. */
  start(listen?: BindPort): Promise<QuoteServicePorts>;
  /** Stops the timers, ends the quote streams, lets RPC fallbacks in flight answer, closes every port. Idempotent. */
  close(): Promise<void>;
}

/** A pool cache sized and timed by the configuration (MaxPoolCount, StalenessThreshold). */
export function createQuoteCache(config: QuoteServiceConfig, now?: () => number): PoolCache {
  return new PoolCache({
    maxPoolCount: config['cache.maxPoolCount'],
    stalenessThresholdMs: config['cache.stalenessThreshold'],
    ...(now === undefined ? {} : { now }),
  });
}

/** The settings that move the quote service's three ports, as a person writes them (in a port-in-use error). */
export const QUOTE_PORT_SETTING = 'port (PORT, --port)';
export const QUOTE_METRICS_PORT_SETTING = 'metrics.port (METRICS_PORT, --metrics-port)';
export const QUOTE_GRPC_PORT_SETTING = 'grpc.port (GRPC_PORT, --grpc-port)';

export function createQuoteService(config: QuoteServiceConfig, deps: QuoteServiceDeps): QuoteService {
  const log = deps.logger;
  // JWT bearer auth of the gRPC services and the REST quote paths (the same verifier): refused here
  // (TP_ERR_CONFIG_INVALID) when on without a key.
  const auth = createGrpcAuth(config, config.host);
  const cache = deps.cache;
  const metrics = deps.metrics ?? createQuoteMetrics({ defaultMetrics: true });
  const directory = new PoolDirectory();
  const breaker = new CircuitBreaker({
    onStateChange: (state) => log.warn({ state }, 'quote cache circuit breaker changed state'),
  });
  const busEnabled = config['bus.enabled'];
  const rawLoader = deps.loader ?? fallbackLoaderFromConfig(config);
  // Every fallback of the process reads through one bound (fallback-limiter.ts).
  const fallbackLimiter =
    rawLoader === undefined
      ? undefined
      : new LimitedPoolLoader(rawLoader, {
          maxConcurrent: config['rpc.fallbackConcurrency'],
          maxPerSecond: config['rpc.fallbackRps'],
          backoffMaxMs: config['rpc.fallbackBackoffMax'],
        });
  const loader = fallbackLimiter;
  const configuredSwaps = deps.swaps === undefined ? swapBuilderFromConfig(config, log.child({ component: 'swap' })) : undefined;
  const engine = new QuoteEngine({
    cache,
    cacheEnabled: config['cache.enabled'],
    hybridMode: config['hybridMode.enabled'],
    ...(loader === undefined ? {} : { loader }),
    ...(deps.external === undefined ? {} : { external: deps.external }),
    directory,
    fallbackDeadlineMs: config['rpc.fallbackDeadline'],
    cacheFirstTimeoutMs: config['hybridMode.cacheFirstTimeout'],
    metrics,
    breaker,
    slippageBps: config.slippageBps,
    intermediateMints: config['routes.intermediateMints'],
    busStatus: deps.busStatus ?? (() => (busEnabled ? 'unknown' : 'disabled')),
    ...(deps.sharedCache === undefined ? {} : { sharedCache: deps.sharedCache }),
    healthThresholds: healthThresholdsOf(config),
    logger: log,
  });
  // TLS on the quote HTTP and gRPC ports when tls.certFile / tls.keyFile are set (read once, here).
  const tls = serverTlsOf(config);
  const server = new QuoteHttpServer({
    engine,
    tls,
    rateLimiter: new RateLimiter({ rps: config.rateLimitRps, maxBytes: config['rateLimit.maxBytes'] }),
    host: config.host,
    heapProfile: config['debug.heapProfile'],
    logger: log,
    auth,
    cache,
    notReady: () => quoteNotReady(engine.health()) ?? deps.notReady?.(),
    swaps: deps.swaps ?? configuredSwaps?.builder,
  });
  const updates = new PoolUpdateHandler({ cache, directory, metrics, cacheEnabled: config['cache.enabled'], logger: log });
  const metricsServer = new MetricsHttpServer({ metrics: () => server.metricsAnswer(), host: config.host, httpLimits: httpLimitsOf(config) });
  const stream = new QuoteStreamServer({
    engine,
    host: config.host,
    tls,
    logger: log,
    auth,
    limits: {
      maxStreamsPerClient: config['stream.maxStreamsPerClient'],
      maxStreams: config['stream.maxStreams'],
      maxPairsPerStream: config['stream.maxPairsPerStream'],
      minIntervalMs: config['stream.minInterval'],
      maxQuotesPerSecondPerClient: config['stream.maxQuotesPerSecondPerClient'],
    },
    shed: { maxDelayMs: config['stream.shedDelay'], maxUtilization: config['stream.shedUtilization'] },
  });
  // hybridMode.validateInterval: cached pools read again over RPC and compared, when RPC exists.
  const validator =
    loader !== undefined && config['cache.enabled'] && config['hybridMode.enabled']
      ? new PoolValidator({ cache, loader, metrics, intervalMs: config['hybridMode.validateInterval'], logger: log.child({ component: 'validation' }) })
      : undefined;

  let evictionTimer: NodeJS.Timeout | undefined;
  let started: Promise<QuoteServicePorts> | undefined;
  let closing: Promise<void> | undefined;

  // The eviction tick (spec 02): remember every cached pool in the directory first, so a pool
  // evicted now can still be read again by the RPC fallback.
  const evictionTick = (): void => {
    directory.syncFrom(cache);
    const removed = cache.evictStale();
    if (removed > 0) log.debug({ removed }, 'evicted stale pools');
  };

  const close = (): Promise<void> => {
    closing ??= (async () => {
      if (evictionTimer !== undefined) clearInterval(evictionTimer);
      evictionTimer = undefined;
      await validator?.close();
      await started?.catch(() => undefined);
      await Promise.allSettled([stream.close(), server.close(), metricsServer.close()]);
      await engine.close();
      await configuredSwaps?.close();
      log.info('quote service stopped');
    })();
    return closing;
  };

  return {
    engine,
    server,
    stream,
    metrics,
    directory,
    breaker,
    fallbackLimiter,
    updates,
    validator,
    start(listen: BindPort = bindAsIs): Promise<QuoteServicePorts> {
      if (closing !== undefined) return Promise.reject(new TpError(ErrorCode.Unavailable, 'the quote service was closed'));
      started ??= (async () => {
        try {
          const at = (port: number, setting: string, what: string) => ({ what: `quote service ${what}`, host: config.host, port, setting });
          const port = await listen(at(config.port, QUOTE_PORT_SETTING, 'HTTP server'), () => server.start(config.port));
          const metricsPort = await listen(at(config['metrics.port'], QUOTE_METRICS_PORT_SETTING, 'metrics server'), () => metricsServer.start(config['metrics.port']));
          const grpcPort = await listen(at(config['grpc.port'], QUOTE_GRPC_PORT_SETTING, 'gRPC server'), () => stream.start(config['grpc.port']));
          evictionTimer = setInterval(evictionTick, config['cache.evictionInterval']);
          evictionTimer.unref();
          validator?.start();
          log.info(
            {
              quote: `${tls === undefined ? 'http' : 'https'}://${config.host}:${port}`,
              metrics: `http://${config.host}:${metricsPort}/metrics`,
              grpc: `${config.host}:${grpcPort}`,
              cacheEnabled: config['cache.enabled'],
              hybridMode: config['hybridMode.enabled'],
              rpcFallback: engine.fallbackAvailable,
            },
            'quote service started',
          );
          return { port, metricsPort, grpcPort };
        } catch (err) {
          await Promise.allSettled([stream.close(), server.close(), metricsServer.close()]);
          throw err;
        }
      })();
      return started;
    },
    close,
  };
}
