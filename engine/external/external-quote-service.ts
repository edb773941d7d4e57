/**
 * `createExternalQuoteService(config, deps)`: the external upstream quote service assembled — the
 * provider client, the circuit breaker, the provider tracker, the poller, the gRPC server (:50053)
 * and the metrics port (/metrics, /health on :9093).
 */
import { createGrpcAuth } from '../auth/index.js';
import { ErrorCode } from '../errors.js';
import { httpLimitsOf, serverTlsOf } from '../config/index.js';
import { bindAsIs, createLogger, type BindPort, type Logger } from '../obs/index.js';
import { CircuitBreaker, CircuitState, type CircuitBreakerOptions } from '../common/index.js';
import { providerNameOf, type ExternalQuotesConfig } from './external-config.js';
import { ExternalHttpServer, HealthStatus, type ExternalHealth } from './external-http-server.js';
import { createExternalMetrics, type ExternalMetrics } from './external-metrics.js';
import { ExternalPoller, type QuoteFetcher } from './external-poller.js';
import { ExternalQuoteServer } from './external-quote-server.js';
import { ProviderClient } from './provider-client.js';
import { ProviderTracker } from './provider-tracker.js';

export interface ExternalQuoteServiceDeps {
  logger?: Logger;
  /** Breaker thresholds (tests shorten the 30 s reset timeout); docs/architecture.md §3 defaults otherwise. */
  breaker?: Pick<CircuitBreakerOptions, 'failureThreshold' | 'resetTimeoutMs' | 'halfOpenSuccesses'>;
  /** Another way to reach the provider (tests); default a ProviderClient on config.quoteUrl. */
  fetcher?: QuoteFetcher;
  /** Collect Node's default process metrics too. Default false. */
  defaultMetrics?: boolean;
}

export interface ExternalEndpoints {
  grpcPort: number;
  metricsPort: number;
  /** `host:port` of StreamBatchQuotes. */
  grpc: string;
  /** `http://host:port` of /metrics and /health. */
  metrics: string;
}

export interface ExternalQuoteService {
  readonly provider: string;
  readonly poller: ExternalPoller;
  readonly breaker: CircuitBreaker;
  readonly tracker: ProviderTracker;
  readonly metrics: ExternalMetrics;
  /**
   * Binds the gRPC and metrics ports (0: any free port), each through `listen` when given, and
   * starts polling for streams.
   */
  start(listen?: BindPort): Promise<ExternalEndpoints>;
  /** The /health body now. */
  health(): ExternalHealth;
  /** Ends the streams, stops polling, closes the ports and the provider connections. Idempotent. */
  close(): Promise<void>;
}

/** The settings that move the two ports, as a person writes them (in a port-in-use error). */
export const EXTERNAL_GRPC_PORT_SETTING = 'grpcPort (EXTERNAL_QUOTES_GRPC_PORT, --grpc-port)';
export const EXTERNAL_METRICS_PORT_SETTING = 'metrics.port (EXTERNAL_QUOTES_METRICS_PORT, --metrics-port)';

const GAUGE = { [CircuitState.Closed]: 0, [CircuitState.HalfOpen]: 1, [CircuitState.Open]: 2 } as const;

function hostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export function createExternalQuoteService(config: ExternalQuotesConfig, deps: ExternalQuoteServiceDeps = {}): ExternalQuoteService {
  // JWT bearer auth of the gRPC port: refused here (TP_ERR_CONFIG_INVALID) when on without a key.
  const auth = createGrpcAuth(config, config.host);
  const logger = deps.logger ?? createLogger({ name: 'external-quotes', level: config['log.level'] });
  const provider = providerNameOf(config);
  const client = deps.fetcher === undefined ? new ProviderClient({ quoteUrl: config.quoteUrl, apiKey: config.apiKey, timeoutMs: config.requestTimeout }) : undefined;
  const fetcher: QuoteFetcher = deps.fetcher ?? client!;
  const tracker = new ProviderTracker(config.uptimeWindow);
  const breaker = new CircuitBreaker({
    ...deps.breaker,
    onStateChange: (state) => logger.warn({ provider, state }, `provider circuit breaker ${state}`),
  });
  // The metrics read the poller's registry, and the poller takes the metrics: declared first.
  let poller: ExternalPoller | undefined = undefined;
  const metrics = createExternalMetrics(
    { uptime: () => tracker.uptime(), breakerState: () => GAUGE[breaker.state], trackedPairs: () => poller?.registry.size ?? 0 },
    { defaultMetrics: deps.defaultMetrics ?? false },
  );
  poller = new ExternalPoller({ fetcher, breaker, tracker, metrics, provider, rateLimitRps: config.rateLimitRps, pollIntervalMs: config.pollInterval, logger });
  const p = poller;
  const limits = {
    maxStreamsPerClient: config['stream.maxStreamsPerClient'],
    maxStreams: config['stream.maxStreams'],
    maxPairsPerStream: config['stream.maxPairsPerStream'],
    minIntervalMs: config['stream.minInterval'],
    // No quote budget: the pushes follow the poller's rate-limited polls, not the clients' asks.
    maxQuotesPerSecondPerClient: Infinity,
  };
  const grpcServer = new ExternalQuoteServer({ poller: p, metrics, uptime: () => tracker.uptime(), host: config.host, logger, auth, limits, tls: serverTlsOf(config) });
  const urlNoQuery = ((): string => {
    const u = new URL(config.quoteUrl);
    return `${u.origin}${u.pathname}`;
  })();

  const health = (): ExternalHealth => {
    const snap = tracker.snapshot();
    const state = breaker.state;
    const pausedFor = p.rateLimitedUntil === 0 ? 0 : p.rateLimitedUntil - performance.now();
    const status = state === CircuitState.Open ? HealthStatus.Unavailable : state === CircuitState.HalfOpen || pausedFor > 0 ? HealthStatus.Degraded : HealthStatus.Ok;
    return {
      status,
      provider: {
        name: provider,
        url: urlNoQuery,
        uptimeRatio: snap.uptimeRatio ?? null,
        uptimeWindowMs: snap.windowMs,
        pollsInWindow: snap.pollsInWindow,
        upPollsInWindow: snap.upPollsInWindow,
        polls: snap.polls,
        latencyMs: { last: snap.lastLatencyMs ?? null, ewma: snap.ewmaLatencyMs ?? null },
        errors: snap.errors,
        circuitBreaker: state,
        rateLimitedUntilUnixMs: pausedFor > 0 ? Math.ceil(Date.now() + pausedFor) : null,
        requestsInFlight: p.requestsInFlight,
      },
      activeStreams: grpcServer.activeStreams,
      trackedPairs: p.registry.size,
    };
  };
  const httpServer = new ExternalHttpServer({
    metrics: () => metrics.registry.metrics(),
    metricsContentType: metrics.registry.contentType,
    health,
    host: config.host,
    httpLimits: httpLimitsOf(config),
  });

  let closing: Promise<void> | undefined;
  return {
    provider,
    poller: p,
    breaker,
    tracker,
    metrics,
    health,
    async start(listen: BindPort = bindAsIs) {
      const grpcPort = await listen({ what: 'external quotes gRPC server', host: config.host, port: config.grpcPort, setting: EXTERNAL_GRPC_PORT_SETTING }, () => grpcServer.start(config.grpcPort));
      let metricsPort: number;
      try {
        metricsPort = await listen({ what: 'external quotes metrics server', host: config.host, port: config['metrics.port'], setting: EXTERNAL_METRICS_PORT_SETTING }, () => httpServer.start(config['metrics.port']));
      } catch (err) {
        await grpcServer.close();
        throw err;
      }
      const endpoints = { grpcPort, metricsPort, grpc: hostPort(config.host, grpcPort), metrics: `http://${hostPort(config.host, metricsPort)}` };
      logger.info({ provider, url: urlNoQuery, ...endpoints }, 'external quote service started');
      return endpoints;
    },
    close() {
      closing ??= (async () => {
        await grpcServer.close();
        await p.close();
        await httpServer.close();
        await client?.close();
      })().catch((err: unknown) => {
        logger.error({ err, code: ErrorCode.Io }, 'external quote service close failed');
      });
      return closing;
    },
  };
}
