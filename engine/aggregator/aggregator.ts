/**
 * The quote aggregator service (spec 01): `createAggregator(config, deps)` builds the upstream
 * clients, the gRPC server (QuoteAggregatorService) and the HTTP side interface; start() binds
 * them, close() shuts down within -shutdown-timeout (streams ended, upstream channels closed, the
 * publisher flushed).
 */
import { createRequire } from 'node:module';
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';

import { createGrpcAuth } from '../auth/index.js';
import { StreamAdmission } from '../quote-grpc/index.js';
import { acquireLoadMonitor, releaseLoadMonitor, type LoadSignal } from '../quote/index.js';
import { healthThresholdsOf, httpLimitsOf, serverTlsOf } from '../config/index.js';
import { bindAsIs, type BindPort } from '../obs/index.js';
import type { AggregatorConfig } from './aggregator-config.js';
import { AggregatorCore } from './aggregator-core.js';
import { AggregatorMetrics } from './aggregator-metrics.js';
import type { AggregationCounts, PriceDifferenceStats, RequestCounts } from './aggregator-stats.js';
import type { OraclePriceSource, RoutePublisher, RoutePublisherStats } from './contracts.js';
import { bindGrpc, createAggregatorGrpcServer, shutdownGrpc } from './grpc-server.js';
import { aggregatorHealth, configureAggregatorHealth } from './health.js';
import { AggregatorHttpServer, HTTP_STATUS_OF } from './http-server.js';
import type { WireUpstreamStatus } from './wire-types.js';

export interface AggregatorDeps {
  logger: Logger;
  /** SwapRouteEvent publisher (route-publisher.ts, or disabledRoutePublisher()). */
  publisher: RoutePublisher;
  /** Oracle prices for the confidence oracle factor; without it the factor is unknown (0.5). */
  oracle?: OraclePriceSource;
  /** Also collect Node process metrics into /metrics (default false). */
  defaultMetrics?: boolean;
  /** Upstream reconnect backoff; default 100 ms doubling to 10 s (tests shorten it). */
  backoff?: { initialMs: number; maxMs: number };
  /** GetAggregatedQuote's overall deadline, ms; spec 01's 150 ms. Only tests change it. */
  unaryDeadlineMs?: number;
  /** What says the process is overloaded (interval re-sends are then shed); default the process's LoadMonitor. */
  load?: LoadSignal;
}

/** The settings that move the aggregator's two ports, as a person writes them (in a port-in-use error). */
export const AGGREGATOR_GRPC_PORT_SETTING = 'grpcPort (AGGREGATOR_GRPC_PORT, --grpc-port)';
export const AGGREGATOR_HTTP_PORT_SETTING = 'httpPort (AGGREGATOR_HTTP_PORT, --http-port)';

export interface AggregatorPorts {
  grpcPort: number;
  httpPort: number;
}

/** One upstream in /stats. */
export interface UpstreamStats {
  address: string;
  state: string;
  healthy: boolean;
  lastLatencyMs: number;
  avgLatencyMs: number;
  quotesReceived: number;
  errors: number;
  timeouts: number;
  reconnects: number;
  duplicates: number;
  backoffMs: number;
  lastError: string;
}

/** GET /stats: every statistic of spec 01. */
export interface AggregatorStatsSnapshot {
  startedAtUnixMs: number;
  activeStreams: number;
  requests: RequestCounts;
  averageConfidence: number;
  aggregations: AggregationCounts;
  duplicates: { local: number; external: number; total: number };
  priceDifference: PriceDifferenceStats & { byPair: Record<string, PriceDifferenceStats> };
  upstreams: { local: UpstreamStats; external: UpstreamStats };
  publisher: RoutePublisherStats;
  confidenceScoringEnabled: boolean;
}

export interface Aggregator {
  /** Binds the gRPC port, then the HTTP port, each through `listen` when given. */
  start(listen?: BindPort): Promise<AggregatorPorts>;
  /** Stops accepting, ends streams, closes upstream channels, flushes the publisher. Idempotent. */
  close(): Promise<void>;
  stats(): AggregatorStatsSnapshot;
  /** Internals for tests and the process that embeds the aggregator. */
  readonly core: AggregatorCore;
  readonly metrics: AggregatorMetrics;
}

export const AGGREGATOR_VERSION: string = (() => {
  try {
    return (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
  } catch {
    try {
      return (createRequire(import.meta.url)('../../../package.json') as { version: string }).version;
    } catch {
      return '0.0.0';
    }
  }
})();

function upstreamStats(s: WireUpstreamStatus, duplicates: number): UpstreamStats {
  return {
    address: s.address,
    state: s.state,
    healthy: s.healthy,
    lastLatencyMs: s.lastLatencyMs,
    avgLatencyMs: s.avgLatencyMs,
    quotesReceived: Number(s.quotesReceived),
    errors: Number(s.errors),
    timeouts: Number(s.timeouts),
    reconnects: Number(s.reconnects),
    duplicates,
    backoffMs: s.backoffMs,
    lastError: s.lastError,
  };
}

export function createAggregator(config: AggregatorConfig, deps: AggregatorDeps): Aggregator {
  const logger = deps.logger;
  // JWT bearer auth of the gRPC port: refused here (TP_ERR_CONFIG_INVALID) when on without a key.
  const auth = createGrpcAuth(config, config.host);
  // TLS on the gRPC and HTTP ports when tls.certFile / tls.keyFile are set (read once, here).
  const tls = serverTlsOf(config);
  const metrics = new AggregatorMetrics({ defaultMetrics: deps.defaultMetrics ?? false });
  // Stream limits and load shedding (engine/quote stream-limits.ts, load-monitor.ts).
  let loadHeld = deps.load === undefined;
  const load = deps.load ?? acquireLoadMonitor({ maxDelayMs: config.streamShedDelay, maxUtilization: config.streamShedUtilization });
  const admission = new StreamAdmission({
    maxStreamsPerClient: config.streamMaxStreamsPerClient,
    maxStreams: config.streamMaxStreams,
    maxPairsPerStream: config.streamMaxPairsPerStream,
    minIntervalMs: config.streamMinInterval,
    // No quote budget: a pair's aggregated quote is encoded once and shared by every stream
    // (stream-subscriber.ts); the budget is the local quote service's (README "Limits").
    maxQuotesPerSecondPerClient: Infinity,
  });
  const core = new AggregatorCore({ config, logger, publisher: deps.publisher, oracle: deps.oracle, metrics, load, ...(deps.backoff ? { backoff: deps.backoff } : {}), ...(deps.unaryDeadlineMs === undefined ? {} : { unaryDeadlineMs: deps.unaryDeadlineMs }) });
  configureAggregatorHealth(core, healthThresholdsOf(config));
  let grpcServer: grpc.Server | undefined;
  let closing: Promise<void> | undefined;

  const stats = (): AggregatorStatsSnapshot => {
    const local = core.upstreams.local.status();
    const external = core.upstreams.external.status();
    const dl = core.tables.local.duplicates;
    const de = core.tables.external.duplicates;
    return {
      startedAtUnixMs: core.startedAt,
      activeStreams: core.activeStreams,
      requests: { ...core.stats.requests },
      averageConfidence: core.stats.averageConfidence,
      aggregations: { ...core.stats.aggregations },
      duplicates: { local: dl, external: de, total: dl + de },
      priceDifference: core.stats.priceDifferenceJson(),
      upstreams: { local: upstreamStats(local, dl), external: upstreamStats(external, de) },
      publisher: deps.publisher.stats(),
      confidenceScoringEnabled: config.enableConfidenceScoring,
    };
  };

  const http = new AggregatorHttpServer(
    {
      health() {
        // The Health response, with the two upstreams under `upstreams` as in /stats.
        const { local, external, ...h } = aggregatorHealth(core, AGGREGATOR_VERSION);
        return { status: h.status, body: { ...h, status: HTTP_STATUS_OF[h.status], upstreams: { local, external }, publisher: deps.publisher.stats() } };
      },
      stats,
      notReady() {
        // Ready once one upstream is connected and healthy: quotes can then be served (DEGRADED).
        const h = aggregatorHealth(core, AGGREGATOR_VERSION);
        if (h.local.healthy || h.external.healthy) return undefined;
        return `no upstream connected and healthy (local ${h.local.address}: ${h.local.state}; external ${h.external.address}: ${h.external.state})`;
      },
      async metrics() {
        metrics.syncFrom({ local: core.upstreams.local.status(), external: core.upstreams.external.status() }, deps.publisher.stats());
        metrics.activeStreams.set(core.activeStreams);
        return { contentType: metrics.registry.contentType, body: await metrics.registry.metrics() };
      },
    },
    config.host,
    httpLimitsOf(config),
    tls,
  );

  return {
    core,
    metrics,
    stats,
    async start(listen: BindPort = bindAsIs) {
      core.start();
      const server = createAggregatorGrpcServer(core, { logger, version: AGGREGATOR_VERSION, defaultProviderUptime: config.defaultProviderUptime, auth, admission });
      grpcServer = server;
      const grpcPort = await listen({ what: 'aggregator gRPC server', host: config.host, port: config.grpcPort, setting: AGGREGATOR_GRPC_PORT_SETTING }, () => bindGrpc(server, config.host, config.grpcPort, tls));
      const httpPort = await listen({ what: 'aggregator HTTP server', host: config.host, port: config.httpPort, setting: AGGREGATOR_HTTP_PORT_SETTING }, () => http.start(config.httpPort));
      logger.info({ grpcPort, httpPort, local: config.localQuoteAddr, external: config.externalQuoteAddr }, 'aggregator listening');
      return { grpcPort, httpPort };
    },
    close() {
      closing ??= (async () => {
        const timeout = config.shutdownTimeout;
        // Streams first (they end with OK), so the graceful gRPC shutdown has nothing to wait for.
        core.close();
        if (loadHeld) {
          loadHeld = false;
          releaseLoadMonitor();
        }
        await Promise.all([grpcServer ? shutdownGrpc(grpcServer, timeout) : Promise.resolve(), http.close()]);
        await deps.publisher.close(timeout).catch((err: unknown) => logger.warn({ err }, 'route publisher close failed'));
        await deps.oracle?.close().catch((err: unknown) => logger.warn({ err }, 'oracle close failed'));
        logger.info('aggregator closed');
      })();
      return closing;
    },
  };
}
