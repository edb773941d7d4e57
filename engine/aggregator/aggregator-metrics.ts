/**
 * The aggregator's Prometheus metrics (`aggregator_*`), in a registry of its own so it can share a
 * process with the quote service. Counters that mirror another component's running totals (the
 * upstream clients, the publisher) are brought up to date by `syncFrom` just before a scrape.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

import { LATENCY_SECONDS_BUCKETS } from '../obs/index.js';
import { createMetricsRegistry, type MetricsRegistryOptions } from '../obs/index.js';
import type { RoutePublisherStats } from './contracts.js';
import type { WireUpstreamStatus } from './wire-types.js';

export const AGGREGATOR_METRIC_NAMES = {
  requests: 'aggregator_requests_total',
  aggregations: 'aggregator_aggregations_total',
  activeStreams: 'aggregator_active_streams',
  duplicates: 'aggregator_duplicates_total',
  upstreamLatency: 'aggregator_upstream_latency_seconds',
  upstreamQuotes: 'aggregator_upstream_quotes_total',
  upstreamErrors: 'aggregator_upstream_errors_total',
  upstreamTimeouts: 'aggregator_upstream_timeouts_total',
  upstreamReconnects: 'aggregator_upstream_reconnects_total',
  upstreamHealthy: 'aggregator_upstream_healthy',
  confidence: 'aggregator_confidence',
  priceDifference: 'aggregator_price_difference_abs_ratio',
  published: 'aggregator_route_events_published_total',
  publishErrors: 'aggregator_route_event_errors_total',
  publishDropped: 'aggregator_route_events_dropped_total',
  publishPending: 'aggregator_route_events_pending',
} as const;

/** Confidence is in [0, 1]; boundaries on the decision thresholds (0.4, 0.6, 0.8). */
export const CONFIDENCE_BUCKETS: readonly number[] = Object.freeze([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1]);
/** |price difference| as a ratio (Prometheus base unit; 0.01 = 1 %, where the aggregator logs it). */
export const PRICE_DIFFERENCE_BUCKETS: readonly number[] = Object.freeze([0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25]);

export type UpstreamLabel = 'local' | 'external';

export class AggregatorMetrics {
  readonly registry: Registry;
  readonly requests: Counter<'kind'>;
  readonly aggregations: Counter<'source_class'>;
  readonly activeStreams: Gauge;
  readonly duplicates: Counter<'upstream'>;
  readonly upstreamLatency: Histogram<'upstream'>;
  readonly confidence: Histogram;
  readonly priceDifference: Histogram;
  private readonly upstreamQuotes: Counter<'upstream'>;
  private readonly upstreamErrors: Counter<'upstream'>;
  private readonly upstreamTimeouts: Counter<'upstream'>;
  private readonly upstreamReconnects: Counter<'upstream'>;
  private readonly upstreamHealthy: Gauge<'upstream'>;
  private readonly published: Counter;
  private readonly publishErrors: Counter;
  private readonly publishDropped: Counter;
  private readonly publishPending: Gauge;
  /** Last totals mirrored into the counters, by series. */
  private readonly mirrored = new Map<string, number>();

  constructor(options: MetricsRegistryOptions = {}) {
    const registry = createMetricsRegistry(options);
    this.registry = registry;
    const n = AGGREGATOR_METRIC_NAMES;
    const registers = [registry];
    this.requests = new Counter({ name: n.requests, help: 'Client requests by kind: GetAggregatedQuote answered full (both sources), local_only, external_only or failed; stream = StreamAggregatedQuotes calls.', labelNames: ['kind'], registers });
    this.aggregations = new Counter({ name: n.aggregations, help: 'Aggregated quotes built, by source class.', labelNames: ['source_class'], registers });
    this.activeStreams = new Gauge({ name: n.activeStreams, help: 'Open StreamAggregatedQuotes streams.', registers });
    this.duplicates = new Counter({ name: n.duplicates, help: 'Upstream quotes equal to the held one (same route hash and output), not pushed.', labelNames: ['upstream'], registers });
    this.upstreamLatency = new Histogram({ name: n.upstreamLatency, help: 'Upstream quote latency, receipt minus quoted_at, in seconds.', labelNames: ['upstream'], buckets: [...LATENCY_SECONDS_BUCKETS], registers });
    this.upstreamQuotes = new Counter({ name: n.upstreamQuotes, help: 'Quotes received from the upstream.', labelNames: ['upstream'], registers });
    this.upstreamErrors = new Counter({ name: n.upstreamErrors, help: 'Upstream stream failures and quotes with an error.', labelNames: ['upstream'], registers });
    this.upstreamTimeouts = new Counter({ name: n.upstreamTimeouts, help: 'Upstream quotes that missed their timeout.', labelNames: ['upstream'], registers });
    this.upstreamReconnects = new Counter({ name: n.upstreamReconnects, help: 'Upstream stream reconnections.', labelNames: ['upstream'], registers });
    this.upstreamHealthy = new Gauge({ name: n.upstreamHealthy, help: 'Whether the upstream is healthy (1) or not (0).', labelNames: ['upstream'], registers });
    this.confidence = new Histogram({ name: n.confidence, help: 'Confidence of the best quote of each aggregated quote (scoring on).', buckets: [...CONFIDENCE_BUCKETS], registers });
    this.priceDifference = new Histogram({ name: n.priceDifference, help: 'Absolute price difference between the external and the local quote, as a ratio of the local output.', buckets: [...PRICE_DIFFERENCE_BUCKETS], registers });
    this.published = new Counter({ name: n.published, help: 'SwapRouteEvents the bus acknowledged.', registers });
    this.publishErrors = new Counter({ name: n.publishErrors, help: 'SwapRouteEvent publishes that failed.', registers });
    this.publishDropped = new Counter({ name: n.publishDropped, help: 'SwapRouteEvents not sent (queue full or publishing disabled).', registers });
    this.publishPending = new Gauge({ name: n.publishPending, help: 'SwapRouteEvents sent and not yet acknowledged, or queued.', registers });
    for (const upstream of ['local', 'external'] as const) {
      for (const c of [this.duplicates, this.upstreamQuotes, this.upstreamErrors, this.upstreamTimeouts, this.upstreamReconnects]) c.inc({ upstream }, 0);
      this.upstreamHealthy.set({ upstream }, 0);
    }
    for (const kind of ['full', 'local_only', 'external_only', 'failed', 'stream']) this.requests.inc({ kind }, 0);
    for (const sc of ['both', 'local_only', 'external_only']) this.aggregations.inc({ source_class: sc }, 0);
  }

  /** Brings the mirrored counters and gauges up to date. */
  syncFrom(upstreams: Record<UpstreamLabel, WireUpstreamStatus>, publisher: RoutePublisherStats): void {
    for (const upstream of ['local', 'external'] as const) {
      const s = upstreams[upstream];
      this.mirror(this.upstreamQuotes, upstream, Number(s.quotesReceived));
      this.mirror(this.upstreamErrors, upstream, Number(s.errors));
      this.mirror(this.upstreamTimeouts, upstream, Number(s.timeouts));
      this.mirror(this.upstreamReconnects, upstream, Number(s.reconnects));
      this.upstreamHealthy.set({ upstream }, s.healthy ? 1 : 0);
    }
    this.mirror(this.published, undefined, publisher.published);
    this.mirror(this.publishErrors, undefined, publisher.errors);
    this.mirror(this.publishDropped, undefined, publisher.dropped);
    this.publishPending.set(publisher.pending);
  }

  private mirror(counter: Counter<string>, upstream: UpstreamLabel | undefined, total: number): void {
    const key = `${(counter as unknown as { name: string }).name}|${upstream ?? ''}`;
    const delta = total - (this.mirrored.get(key) ?? 0);
    if (delta <= 0) return; // totals only grow; a smaller one would be a restarted source
    this.mirrored.set(key, total);
    if (upstream === undefined) counter.inc(delta);
    else counter.inc({ upstream }, delta);
  }
}
