/**
 * Prometheus metrics of the RPC proxy (`GET /rpc/metrics`). Requests, errors and latency of the
 * upstream attempts by endpoint and method; the calls clients made; each endpoint's health; the
 * WebSocket clients and subscriptions. `endpoint` labels are endpoint names (host:port), never
 * URLs (they may carry API keys); `method` labels are bounded (rpc-methods.ts `methodLabel`).
 * Gauges that mirror state are read at scrape time through `collect`.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

import { LATENCY_SECONDS_BUCKETS, PreboundCounter, PreboundHistogram, createMetricsRegistry, type MetricsRegistryOptions } from '../obs/index.js';

export const RPC_PROXY_METRIC_NAMES = {
  calls: 'rpc_proxy_calls_total',
  callDuration: 'rpc_proxy_call_duration_seconds',
  requests: 'rpc_proxy_requests_total',
  errors: 'rpc_proxy_errors_total',
  requestDuration: 'rpc_proxy_request_duration_seconds',
  retries: 'rpc_proxy_retries_total',
  endpointUp: 'rpc_proxy_endpoint_up',
  endpointSlot: 'rpc_proxy_endpoint_slot',
  endpointSlotLag: 'rpc_proxy_endpoint_slot_lag',
  endpointLatency: 'rpc_proxy_endpoint_health_check_latency_seconds',
  healthChecks: 'rpc_proxy_health_checks_total',
  wsClients: 'rpc_proxy_ws_clients',
  wsSubscriptions: 'rpc_proxy_ws_subscriptions',
  wsResubscriptions: 'rpc_proxy_ws_resubscriptions_total',
  wsNotifications: 'rpc_proxy_ws_notifications_total',
  rateLimited: 'rpc_proxy_rate_limited_total',
  wsSlowClientsClosed: 'rpc_proxy_ws_slow_clients_closed_total',
} as const;

/** How an upstream attempt failed (`kind` of rpc_proxy_errors_total), or how the proxy refused a call. */
export const ErrorKind = {
  /** The request never left: connection refused, DNS, connect timeout, or a timeout while queued. */
  Connect: 'connect',
  /** The connection failed after the request was handed to it. */
  Network: 'network',
  /** No answer within request_timeout after the request was handed to the connection. */
  Timeout: 'timeout',
  /** An HTTP status other than 200. */
  Http: 'http',
  /** A JSON-RPC error answer (HTTP 200; single calls only, a batch's items are not looked into). */
  Rpc: 'rpc',
  /** Answered by the proxy without an upstream (endpoint `none`): bad JSON, invalid call, body too large, shutting down. */
  ParseError: 'parse_error',
  InvalidRequest: 'invalid_request',
  TooLarge: 'too_large',
  ShuttingDown: 'shutting_down',
  /** A caller without a valid JWT or API key (auth on). */
  Unauthenticated: 'unauthenticated',
} as const;
export type ErrorKind = (typeof ErrorKind)[keyof typeof ErrorKind];

/** The `endpoint` label of what the proxy answers itself. */
export const NO_ENDPOINT = 'none';

/** Read at scrape time. */
export interface RpcProxyMetricsSources {
  endpoints(): readonly { name: string; up: boolean; slot: bigint | null; slotLag: number | null; latencyMs: number | null }[];
  wsClients(): number;
  /** Client subscriptions by the endpoint holding them (`none`: being placed). */
  wsSubscriptions(): ReadonlyMap<string, number>;
}

export interface RpcProxyMetrics {
  readonly registry: Registry;
  /** Calls clients made, by method and transport (`http` or `ws`); batch items count one each. Per call: prebound. */
  readonly calls: PreboundCounter<'method' | 'transport'>;
  /** From a call's arrival to its answer being written, retries included, by method. Per call: prebound. */
  readonly callDuration: PreboundHistogram<'method'>;
  /** Upstream HTTP requests (attempts), by endpoint and method (`batch` for a batch). Per call: prebound. */
  readonly requests: PreboundCounter<'endpoint' | 'method'>;
  readonly errors: Counter<'endpoint' | 'method' | 'kind'>;
  /** Per call: prebound. */
  readonly requestDuration: PreboundHistogram<'endpoint' | 'method'>;
  /** Attempts after a call's first, by the endpoint tried and method. */
  readonly retries: Counter<'endpoint' | 'method'>;
  readonly healthChecks: Counter<'endpoint' | 'outcome'>;
  readonly wsResubscriptions: Counter<'endpoint'>;
  readonly wsNotifications: Counter<'endpoint'>;
  /** Calls refused over their client's rate limit, by transport (`http`: requests, `ws`: messages). */
  readonly rateLimited: Counter<'transport'>;
  /** WebSocket clients disconnected for leaving more than max_ws_buffered_bytes unread. */
  readonly wsSlowClientsClosed: Counter;
}

export function createRpcProxyMetrics(sources: RpcProxyMetricsSources, options: MetricsRegistryOptions = {}): RpcProxyMetrics {
  const registry = createMetricsRegistry(options);
  const n = RPC_PROXY_METRIC_NAMES;
  const registers = [registry];
  // The per-call series: label children bound once, a few arithmetic operations a call (prebound-metrics.ts).
  const calls = new PreboundCounter(n.calls, 'JSON-RPC calls received from clients, by method and transport (batch items count one each).', ['method', 'transport'] as const, registers);
  const callDuration = new PreboundHistogram(n.callDuration, 'Time from a call arriving to its answer being sent, retries included, by method.', ['method'] as const, LATENCY_SECONDS_BUCKETS, registers);
  const requests = new PreboundCounter(n.requests, 'Upstream HTTP requests (attempts), by endpoint and method ("batch" for a batch request).', ['endpoint', 'method'] as const, registers);
  const errors = new Counter({ name: n.errors, help: 'Failed upstream attempts by endpoint, method and kind; endpoint "none": calls the proxy refused itself.', labelNames: ['endpoint', 'method', 'kind'] as const, registers });
  const requestDuration = new PreboundHistogram(n.requestDuration, 'Duration of upstream HTTP attempts, answered or not, by endpoint and method.', ['endpoint', 'method'] as const, LATENCY_SECONDS_BUCKETS, registers);
  const retries = new Counter({ name: n.retries, help: 'Attempts after the first of a call, by the endpoint tried and method.', labelNames: ['endpoint', 'method'] as const, registers });
  const healthChecks = new Counter({ name: n.healthChecks, help: 'Health checks (getHealth + getSlot) by endpoint and outcome (up, down, lagging).', labelNames: ['endpoint', 'outcome'] as const, registers });
  const wsResubscriptions = new Counter({ name: n.wsResubscriptions, help: 'Client subscriptions subscribed again on another endpoint after theirs failed, by the new endpoint.', labelNames: ['endpoint'] as const, registers });
  const wsNotifications = new Counter({ name: n.wsNotifications, help: 'Subscription notifications relayed to clients, by the endpoint they came from.', labelNames: ['endpoint'] as const, registers });
  const rateLimited = new Counter({ name: n.rateLimited, help: 'Calls refused over their client\'s rate limit (rate_limit_rps), by transport: HTTP requests (429) and WebSocket messages.', labelNames: ['transport'] as const, registers });
  const wsSlowClientsClosed = new Counter({ name: n.wsSlowClientsClosed, help: 'WebSocket clients disconnected for leaving more than max_ws_buffered_bytes of answers and notifications unread.', registers });
  new Gauge({
    name: n.endpointUp,
    help: 'Whether the endpoint is in rotation (1) or out of it (0: down, lagging, or not checked yet).',
    labelNames: ['endpoint'] as const,
    registers,
    collect() {
      for (const e of sources.endpoints()) this.labels(e.name).set(e.up ? 1 : 0);
    },
  });
  new Gauge({
    name: n.endpointSlot,
    help: 'The processed slot the endpoint reported at its last health check.',
    labelNames: ['endpoint'] as const,
    registers,
    collect() {
      for (const e of sources.endpoints()) if (e.slot !== null) this.labels(e.name).set(Number(e.slot));
    },
  });
  new Gauge({
    name: n.endpointSlotLag,
    help: 'Slots the endpoint was behind the best endpoint at the last health check.',
    labelNames: ['endpoint'] as const,
    registers,
    collect() {
      for (const e of sources.endpoints()) if (e.slotLag !== null) this.labels(e.name).set(e.slotLag);
    },
  });
  new Gauge({
    name: n.endpointLatency,
    help: 'Round trip of the endpoint\'s last health check getSlot, in seconds.',
    labelNames: ['endpoint'] as const,
    registers,
    collect() {
      for (const e of sources.endpoints()) if (e.latencyMs !== null) this.labels(e.name).set(e.latencyMs / 1000);
    },
  });
  new Gauge({
    name: n.wsClients,
    help: 'WebSocket clients connected to /rpc/ws.',
    registers,
    collect() {
      this.set(sources.wsClients());
    },
  });
  new Gauge({
    name: n.wsSubscriptions,
    help: 'Open client subscriptions, by the endpoint holding them ("none": being placed on an endpoint).',
    labelNames: ['endpoint'] as const,
    registers,
    collect() {
      this.reset();
      for (const e of sources.endpoints()) this.labels(e.name).set(0);
      for (const [endpoint, count] of sources.wsSubscriptions()) this.labels(endpoint).set(count);
    },
  });
  return { registry, calls, callDuration, requests, errors, requestDuration, retries, healthChecks, wsResubscriptions, wsNotifications, rateLimited, wsSlowClientsClosed };
}
