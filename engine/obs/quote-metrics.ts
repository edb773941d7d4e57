import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { LATENCY_SECONDS_BUCKETS } from './buckets.js';
import { PreboundHistogram, type PreboundHistogramChild } from './prebound-metrics.js';
import { createMetricsRegistry, type MetricsRegistryOptions } from './registry.js';

/** Where a quote's pool state came from: the `source` label of the quote latency histogram. */
export const QuoteSource = { cache: 'cache', rpc: 'rpc', external: 'external' } as const;
export type QuoteSource = (typeof QuoteSource)[keyof typeof QuoteSource];

/** Values of the circuit breaker state gauge (docs/architecture.md §3: "its state is a metric"). */
export const CircuitBreakerStateValue = { closed: 0, halfOpen: 1, open: 2 } as const;
export type CircuitBreakerStateValue = (typeof CircuitBreakerStateValue)[keyof typeof CircuitBreakerStateValue];

/** A histogram series with its labels already resolved: `observe` and `startTimer` only. */
export type LatencySeries = Pick<PreboundHistogramChild, 'observe' | 'startTimer'>;

/**
 * The quote service's metrics, under the exact names of spec 02 ("Metrics"). Callers hold this object
 * and use its fields; the `source` children of the latency histogram are resolved once here and
 * keep their own numbers (prebound-metrics.ts), so the hot path calls
 * `quoteLatency.cache.observe(seconds)` without building or hashing label objects (prom-client's
 * own children hash them on every observe: ~140 bytes of garbage a quote).
 */
export interface QuoteMetrics {
  readonly registry: Registry;
  /** Pool state update events taken from the bus and stored. */
  readonly poolUpdatesReceived: Counter;
  /** Quotes answered from the pool cache. */
  readonly quoteCacheHits: Counter;
  /** Quotes the pool cache could not answer (missing, stale, breaker open). */
  readonly quoteCacheMisses: Counter;
  /** Quotes served, from any source. */
  readonly quotes: Counter;
  /** Pools in the cache. */
  readonly poolCacheTotalPools: Gauge;
  /** Pools updated within the staleness threshold. */
  readonly poolCacheFreshPools: Gauge;
  /** Pools older than the staleness threshold. */
  readonly poolCacheStalePools: Gauge;
  /** Bus messages that could not be parsed (logged, acknowledged, dropped). */
  readonly busParseErrors: Counter;
  /** RPC fallbacks that failed. */
  readonly rpcFallbackErrors: Counter;
  /** External-aggregator fallbacks that failed (after the cache and RPC could not answer). */
  readonly externalFallbackErrors: Counter;
  /** Cached pools read again over RPC by the validation (hybridMode.validateInterval). */
  readonly cacheValidationChecks: Counter;
  /** Validated pools whose RPC state differed from the cache's (the pool was refreshed). */
  readonly cacheValidationMismatches: Counter;
  /** Messages of the stream not yet delivered to this consumer. */
  readonly busConsumerLagMessages: Gauge;
  /** Quote latency in seconds, by `source`; use the resolved children in {@link quoteLatency}. */
  readonly quoteLatencySeconds: PreboundHistogram<'source'>;
  /** The `source="cache"`, `"rpc"` and `"external"` series of {@link quoteLatencySeconds}. */
  readonly quoteLatency: { readonly [S in QuoteSource]: LatencySeries };
  /** Seconds from receipt of a bus message to its state being stored (spec 02, event processing step 4). */
  readonly poolUpdateLatencySeconds: Histogram;
  /** Circuit breaker state: 0 closed, 1 half-open, 2 open ({@link CircuitBreakerStateValue}). */
  readonly circuitBreakerState: Gauge;
  /** gRPC StreamBatchQuotes streams open now (engine/quote-grpc/quote-stream-server.ts). */
  readonly streamActiveStreams: Gauge;
  /** Quotes written to StreamBatchQuotes streams (error quotes included). */
  readonly streamQuotesSent: Counter;
  /** Stream quotes replaced by a newer quote of the same pair while the stream was backpressured. */
  readonly streamQuotesSuperseded: Counter;
}

/** Metric names for the quote service, by field of {@link QuoteMetrics}. */
export const QUOTE_METRIC_NAMES = {
  poolUpdatesReceived: 'quote_service_pool_updates_received_total',
  quoteCacheHits: 'quote_service_quote_cache_hits_total',
  quoteCacheMisses: 'quote_service_quote_cache_misses_total',
  quotes: 'quote_service_quotes_total',
  poolCacheTotalPools: 'quote_service_pool_cache_total_pools',
  poolCacheFreshPools: 'quote_service_pool_cache_fresh_pools',
  poolCacheStalePools: 'quote_service_pool_cache_stale_pools',
  busParseErrors: 'quote_service_bus_parse_errors_total',
  rpcFallbackErrors: 'quote_service_rpc_fallback_errors_total',
  externalFallbackErrors: 'quote_service_external_fallback_errors_total',
  cacheValidationChecks: 'quote_service_cache_validation_checks_total',
  cacheValidationMismatches: 'quote_service_cache_validation_mismatches_total',
  busConsumerLagMessages: 'quote_service_bus_consumer_lag_messages',
  // Spec 02 names no histogram; the service prefix, the base unit (seconds) and `_seconds` follow
  // the Prometheus naming conventions, which `promtool check metrics` enforces.
  quoteLatencySeconds: 'quote_service_quote_latency_seconds',
  poolUpdateLatencySeconds: 'quote_service_pool_update_latency_seconds',
  circuitBreakerState: 'quote_service_circuit_breaker_state',
  // The gRPC quote stream (local upstream, :50052): same service prefix.
  streamActiveStreams: 'quote_service_stream_active_streams',
  streamQuotesSent: 'quote_service_stream_quotes_sent_total',
  streamQuotesSuperseded: 'quote_service_stream_quotes_superseded_total',
} as const satisfies Record<Exclude<keyof QuoteMetrics, 'registry' | 'quoteLatency'>, string>;

/** A fresh registry holding every quote-service metric. */
export function createQuoteMetrics(options: MetricsRegistryOptions = {}): QuoteMetrics {
  const registry = createMetricsRegistry(options);
  const n = QUOTE_METRIC_NAMES;
  const counter = (name: string, help: string): Counter =>
    new Counter({ name, help, registers: [registry] });
  const gauge = (name: string, help: string): Gauge => new Gauge({ name, help, registers: [registry] });

  const quoteLatencySeconds = new PreboundHistogram<'source'>(
    n.quoteLatencySeconds,
    'Quote latency in seconds, by the source of the answer (cache, rpc or external).',
    ['source'],
    LATENCY_SECONDS_BUCKETS,
    [registry],
  );
  // Every series exists from the start (bound below), so rate() and the dashboards see zeros rather than nothing.

  const metrics: QuoteMetrics = {
    registry,
    poolUpdatesReceived: counter(n.poolUpdatesReceived, 'Pool state update events received from the bus.'),
    quoteCacheHits: counter(n.quoteCacheHits, 'Quotes answered from the pool cache.'),
    quoteCacheMisses: counter(n.quoteCacheMisses, 'Quotes the pool cache could not answer.'),
    quotes: counter(n.quotes, 'Quotes served.'),
    poolCacheTotalPools: gauge(n.poolCacheTotalPools, 'Pools in the pool cache.'),
    poolCacheFreshPools: gauge(n.poolCacheFreshPools, 'Pools updated within the staleness threshold.'),
    poolCacheStalePools: gauge(n.poolCacheStalePools, 'Pools older than the staleness threshold.'),
    busParseErrors: counter(n.busParseErrors, 'Bus messages that could not be parsed.'),
    rpcFallbackErrors: counter(n.rpcFallbackErrors, 'Failed RPC fallbacks.'),
    externalFallbackErrors: counter(n.externalFallbackErrors, 'Failed external-aggregator fallbacks.'),
    cacheValidationChecks: counter(n.cacheValidationChecks, 'Cached pools read again over RPC by the periodic validation.'),
    cacheValidationMismatches: counter(n.cacheValidationMismatches, 'Validated pools whose RPC state differed from the cache (then refreshed).'),
    busConsumerLagMessages: gauge(n.busConsumerLagMessages, 'Stream messages not yet delivered to this consumer.'),
    quoteLatencySeconds,
    quoteLatency: {
      cache: quoteLatencySeconds.labels(QuoteSource.cache),
      rpc: quoteLatencySeconds.labels(QuoteSource.rpc),
      external: quoteLatencySeconds.labels(QuoteSource.external),
    },
    poolUpdateLatencySeconds: new Histogram({
      name: n.poolUpdateLatencySeconds,
      help: 'Seconds from receipt of a pool state update event to its state being stored.',
      buckets: [...LATENCY_SECONDS_BUCKETS],
      registers: [registry],
    }),
    circuitBreakerState: gauge(n.circuitBreakerState, 'Circuit breaker state: 0 closed, 1 half-open, 2 open.'),
    streamActiveStreams: gauge(n.streamActiveStreams, 'gRPC StreamBatchQuotes streams open now.'),
    streamQuotesSent: counter(n.streamQuotesSent, 'Quotes written to gRPC StreamBatchQuotes streams, error quotes included.'),
    streamQuotesSuperseded: counter(n.streamQuotesSuperseded, 'Stream quotes replaced by a newer quote of their pair while the stream was backpressured.'),
  };
  metrics.circuitBreakerState.set(CircuitBreakerStateValue.closed);
  return metrics;
}
