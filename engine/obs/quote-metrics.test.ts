import { describe, expect, it } from 'vitest';
import { LATENCY_SECONDS_BUCKETS } from './buckets.js';
import { exposedTypes } from './exposition.js';
import { hasPromtool, runPromtool } from './promtool.js';
import { CircuitBreakerStateValue, createQuoteMetrics, QUOTE_METRIC_NAMES } from './quote-metrics.js';

const promtoolMissing = !hasPromtool();

/** Spec 02 "Metrics", quote service: every name and its type. */
const SPEC_QUOTE_METRICS: Record<string, string> = {
  quote_service_pool_updates_received_total: 'counter',
  quote_service_quote_cache_hits_total: 'counter',
  quote_service_quote_cache_misses_total: 'counter',
  quote_service_quotes_total: 'counter',
  quote_service_pool_cache_total_pools: 'gauge',
  quote_service_pool_cache_fresh_pools: 'gauge',
  quote_service_pool_cache_stale_pools: 'gauge',
  quote_service_bus_parse_errors_total: 'counter',
  quote_service_rpc_fallback_errors_total: 'counter',
  quote_service_bus_consumer_lag_messages: 'gauge',
};

/** Ours where the spec names none: the `source` latency histogram and the rest docs/architecture.md asks for. */
const OWN_QUOTE_METRICS: Record<string, string> = {
  quote_service_quote_latency_seconds: 'histogram',
  quote_service_pool_update_latency_seconds: 'histogram',
  quote_service_circuit_breaker_state: 'gauge',
  quote_service_stream_active_streams: 'gauge',
  quote_service_stream_quotes_sent_total: 'counter',
  quote_service_stream_quotes_superseded_total: 'counter',
  quote_service_external_fallback_errors_total: 'counter',
  quote_service_cache_validation_checks_total: 'counter',
  quote_service_cache_validation_mismatches_total: 'counter',
};

function record(m: ReturnType<typeof createQuoteMetrics>): void {
  m.poolUpdatesReceived.inc(40);
  m.quoteCacheHits.inc(9);
  m.quoteCacheMisses.inc();
  m.quotes.inc(10);
  m.poolCacheTotalPools.set(50);
  m.poolCacheFreshPools.set(48);
  m.poolCacheStalePools.set(2);
  m.busParseErrors.inc();
  m.rpcFallbackErrors.inc();
  m.busConsumerLagMessages.set(3);
  m.quoteLatency.cache.observe(0.0004);
  m.quoteLatency.rpc.observe(0.15);
  m.quoteLatency.external.observe(0.3);
  m.externalFallbackErrors.inc();
  m.cacheValidationChecks.inc(10);
  m.cacheValidationMismatches.inc(2);
  m.poolUpdateLatencySeconds.observe(0.0002);
  m.circuitBreakerState.set(CircuitBreakerStateValue.halfOpen);
  m.streamActiveStreams.set(2);
  m.streamQuotesSent.inc(7);
  m.streamQuotesSuperseded.inc();
}

describe('createQuoteMetrics', () => {
  it('exposes every quote-service metric of spec 02 under its exact name and type', async () => {
    const types = exposedTypes(await createQuoteMetrics().registry.metrics());
    for (const [name, type] of Object.entries({ ...SPEC_QUOTE_METRICS, ...OWN_QUOTE_METRICS })) {
      expect(types.get(name), name).toBe(type);
    }
    expect(new Set(Object.values(QUOTE_METRIC_NAMES))).toEqual(
      new Set(Object.keys({ ...SPEC_QUOTE_METRICS, ...OWN_QUOTE_METRICS })),
    );
  });

  it('labels quote latency by source, both series present before the first quote', async () => {
    const m = createQuoteMetrics();
    const before = await m.registry.metrics();
    expect(before).toContain('quote_service_quote_latency_seconds_count{source="cache"} 0');
    expect(before).toContain('quote_service_quote_latency_seconds_count{source="rpc"} 0');
    expect(before).toContain('quote_service_quote_latency_seconds_count{source="external"} 0');
    m.quoteLatency.cache.observe(0.0004);
    m.quoteLatency.cache.observe(0.003);
    m.quoteLatency.rpc.observe(0.15);
    const text = await m.registry.metrics();
    expect(text).toContain('quote_service_quote_latency_seconds_count{source="cache"} 2');
    expect(text).toContain('quote_service_quote_latency_seconds_bucket{le="0.0005",source="cache"} 1');
    expect(text).toContain('quote_service_quote_latency_seconds_count{source="rpc"} 1');
    expect(text).toContain('quote_service_quote_latency_seconds_bucket{le="0.2",source="rpc"} 1');
    expect(text).toContain('quote_service_quote_latency_seconds_bucket{le="0.1",source="rpc"} 0');
    for (const le of LATENCY_SECONDS_BUCKETS) {
      expect(text).toContain(`quote_service_quote_latency_seconds_bucket{le="${le}",source="cache"}`);
    }
  });

  it('times a quote with a resolved series', async () => {
    const m = createQuoteMetrics();
    const end = m.quoteLatency.rpc.startTimer();
    end();
    expect(await m.registry.metrics()).toContain('quote_service_quote_latency_seconds_count{source="rpc"} 1');
  });

  it('starts with the circuit breaker closed and records half-open and open', async () => {
    const m = createQuoteMetrics();
    expect(await m.registry.metrics()).toMatch(/^quote_service_circuit_breaker_state 0$/m);
    m.circuitBreakerState.set(CircuitBreakerStateValue.halfOpen);
    expect(await m.registry.metrics()).toMatch(/^quote_service_circuit_breaker_state 1$/m);
    m.circuitBreakerState.set(CircuitBreakerStateValue.open);
    expect(await m.registry.metrics()).toMatch(/^quote_service_circuit_breaker_state 2$/m);
  });

  it('gives each registry its own series', async () => {
    const a = createQuoteMetrics();
    const b = createQuoteMetrics();
    a.quotes.inc(4);
    expect(await a.registry.metrics()).toContain('quote_service_quotes_total 4');
    expect(await b.registry.metrics()).toContain('quote_service_quotes_total 0');
  });

  it.skipIf(promtoolMissing)('passes promtool check metrics, with and without the Node process metrics', async () => {
    for (const defaultMetrics of [false, true]) {
      const m = createQuoteMetrics({ defaultMetrics });
      record(m);
      const r = runPromtool(['check', 'metrics'], await m.registry.metrics());
      expect(`${r.stdout}${r.stderr}`.trim()).toBe('');
      expect(r.status).toBe(0);
    }
  });
});
