/**
 * Prometheus metrics of the external quote service (`GET /metrics` on its metrics port, 9093).
 * Gauges that mirror state (uptime, breaker, pairs) are read at scrape time through `collect`, so
 * they are never stale and the poll path does not set them.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

import { LATENCY_SECONDS_BUCKETS } from '../obs/index.js';
import { createMetricsRegistry, type MetricsRegistryOptions } from '../obs/index.js';
import { PollOutcomeKind } from './provider-client.js';

export const EXTERNAL_METRIC_NAMES = {
  requests: 'external_quotes_requests_total',
  requestDuration: 'external_quotes_request_duration_seconds',
  providerUptime: 'external_quotes_provider_uptime_ratio',
  circuitBreakerState: 'external_quotes_circuit_breaker_state',
  activeStreams: 'external_quotes_active_streams',
  trackedPairs: 'external_quotes_tracked_pairs',
  circuitOpenSkips: 'external_quotes_circuit_open_skips_total',
  rateLimitPauses: 'external_quotes_rate_limit_pauses_total',
  quotesSent: 'external_quotes_stream_quotes_sent_total',
  quotesSuperseded: 'external_quotes_stream_quotes_superseded_total',
} as const;

/** What the gauges read at scrape time. */
export interface ExternalMetricsSources {
  uptime(): number | undefined;
  /** 0 closed, 1 half-open, 2 open (as quote_service_circuit_breaker_state). */
  breakerState(): number;
  trackedPairs(): number;
}

export interface ExternalMetrics {
  readonly registry: Registry;
  /** Provider requests by how they ended (PollOutcomeKind). */
  readonly requests: Counter<'outcome'>;
  /** Provider request duration, answered or not. */
  readonly requestDuration: Histogram;
  /** gRPC StreamBatchQuotes streams open now. */
  readonly activeStreams: Gauge;
  /** Due polls not sent because the circuit breaker was open (each gave an error quote). */
  readonly circuitOpenSkips: Counter;
  /** 429 answers that paused all polling. */
  readonly rateLimitPauses: Counter;
  /** Quotes written to streams, error quotes included. */
  readonly quotesSent: Counter;
  /** Stream quotes replaced by a newer quote of their pair while the stream was backpressured. */
  readonly quotesSuperseded: Counter;
}

export function createExternalMetrics(sources: ExternalMetricsSources, options: MetricsRegistryOptions = {}): ExternalMetrics {
  const registry = createMetricsRegistry(options);
  const n = EXTERNAL_METRIC_NAMES;
  const requests = new Counter({ name: n.requests, help: 'Requests to the provider\'s GET /quote, by outcome.', labelNames: ['outcome'] as const, registers: [registry] });
  for (const outcome of Object.values(PollOutcomeKind)) requests.labels(outcome).inc(0);
  new Gauge({
    name: n.providerUptime,
    help: 'Provider uptime over the uptime window: polls answered without 5xx, timeout or connection error / polls (1 before any poll).',
    registers: [registry],
    collect() {
      this.set(sources.uptime() ?? 1);
    },
  });
  new Gauge({
    name: n.circuitBreakerState,
    help: 'Provider circuit breaker state: 0 closed, 1 half-open, 2 open.',
    registers: [registry],
    collect() {
      this.set(sources.breakerState());
    },
  });
  new Gauge({
    name: n.trackedPairs,
    help: 'Distinct pairs polled for the open streams.',
    registers: [registry],
    collect() {
      this.set(sources.trackedPairs());
    },
  });
  return {
    registry,
    requests,
    requestDuration: new Histogram({ name: n.requestDuration, help: 'Duration of requests to the provider, in seconds.', buckets: [...LATENCY_SECONDS_BUCKETS], registers: [registry] }),
    activeStreams: new Gauge({ name: n.activeStreams, help: 'gRPC StreamBatchQuotes streams open now.', registers: [registry] }),
    circuitOpenSkips: new Counter({ name: n.circuitOpenSkips, help: 'Due polls not sent because the circuit breaker was open.', registers: [registry] }),
    rateLimitPauses: new Counter({ name: n.rateLimitPauses, help: 'Provider 429 answers that paused polling.', registers: [registry] }),
    quotesSent: new Counter({ name: n.quotesSent, help: 'Quotes written to StreamBatchQuotes streams, error quotes included.', registers: [registry] }),
    quotesSuperseded: new Counter({ name: n.quotesSuperseded, help: 'Stream quotes replaced by a newer quote of their pair while the stream was backpressured.', registers: [registry] }),
  };
}
