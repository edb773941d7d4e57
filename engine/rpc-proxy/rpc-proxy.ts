import { serverTlsOf } from '../config/index.js';
import { ErrorCode, TpError } from '../errors.js';
import type { Logger } from '../obs/index.js';
import { RateLimiter } from '../common/index.js';
import { CallRouter } from './call-router.js';
import { createProxyAuthorizer, proxyAuthIssues } from './client-auth.js';
import { EndpointSet } from './endpoint-set.js';
import { HealthChecker } from './health-checker.js';
import { pubsubUrlOf, type RpcProxyConfig } from './rpc-proxy-config.js';
import { createRpcProxyMetrics, type RpcProxyMetrics } from './rpc-proxy-metrics.js';
import { RpcProxyServer } from './rpc-proxy-server.js';
import { SubscriptionHub } from './subscription-hub.js';
import { EndpointState, UpstreamEndpoint, endpointNames } from './upstream-endpoint.js';

/**
 * The RPC proxy in one object: the endpoints with their connection pools, the health checker,
 * the call router, the subscription hub, the metrics and the server. Nothing listens or checks
 * until start().
 */

/** `/rpc/health`: the proxy and each endpoint (camelCase; slots as decimal strings). */
export interface RpcProxyHealth {
  /** ok: every endpoint in rotation; degraded: some; unavailable: none (HTTP 503). */
  status: 'ok' | 'degraded' | 'unavailable';
  draining: boolean;
  /** The best slot of the last health check round. */
  bestSlot: string | null;
  maxSlotLag: number;
  healthCheckIntervalMs: number;
  healthCheckRounds: number;
  endpoints: EndpointHealth[];
  wsClients: number;
  wsSubscriptions: number;
}

export interface EndpointHealth {
  name: string;
  state: EndpointState;
  inRotation: boolean;
  /** Why it is out, or what failed at the last check; null when up. */
  reason: string | null;
  slot: string | null;
  slotLag: number | null;
  /** getSlot round trip at the last check. */
  latencyMs: number | null;
  lastCheckUnixMs: number | null;
  lastChangeUnixMs: number;
  consecutiveFailures: number;
  /** Requests proxied to it (attempts), and the failed ones by kind. */
  requests: number;
  errors: Record<'connect' | 'network' | 'timeout' | 'http' | 'rpc', number>;
  inFlight: number;
  connections: { open: number; busy: number; queued: number };
  /** Client subscriptions held on it. */
  wsSubscriptions: number;
}

export interface RpcProxy {
  readonly config: RpcProxyConfig;
  readonly endpoints: readonly UpstreamEndpoint[];
  readonly metrics: RpcProxyMetrics;
  readonly health: HealthChecker;
  /** The bound port (after start). */
  readonly port: number;
  /** Runs the first health check round, then listens. Resolves with the bound port. */
  start(): Promise<number>;
  healthReport(): RpcProxyHealth;
  /**
   * Graceful stop: stops listening and taking calls, lets the calls in flight finish within
   * `shutdown_timeout`, closes the WebSockets (1001) and the upstream connections. Idempotent.
   */
  close(): Promise<void>;
}

export interface RpcProxyOptions {
  logger?: Logger;
  /** Also export Node's process metrics (the service does; tests do not). */
  defaultMetrics?: boolean;
  /** How long an HTTP call waits for its answer before the proxy answers it (tests shorten it); default DEFAULT_RESPONSE_LIMIT_MS. */
  responseLimitMs?: number;
}

export function createRpcProxy(config: RpcProxyConfig, options: RpcProxyOptions = {}): RpcProxy {
  const log = options.logger;
  const authIssues = proxyAuthIssues(config, config.host);
  if (authIssues.length > 0) throw new TpError(ErrorCode.ConfigInvalid, `invalid configuration:\n  ${authIssues.join('\n  ')}`, { context: { issues: authIssues } });
  const authorize = createProxyAuthorizer(config, config.host);
  const names = endpointNames(config.endpoints);
  const endpoints = config.endpoints.map(
    (url, index) =>
      new UpstreamEndpoint({
        index,
        name: names[index]!,
        url,
        wsUrl: config.ws_endpoints[index] ?? pubsubUrlOf(url),
        maxConnections: config.max_connections_per_endpoint,
      }),
  );
  const set = new EndpointSet(endpoints, { failureThreshold: config.failure_threshold, ...(log === undefined ? {} : { logger: log }) });
  // The metrics' gauges read the hub, made after them (it counts into them), at scrape time.
  const sources: { hub: SubscriptionHub | null } = { hub: null };
  const metrics = createRpcProxyMetrics(
    {
      endpoints: () => endpoints.map((e) => ({ name: e.name, up: e.state === EndpointState.Up, slot: e.slot, slotLag: e.slotLag, latencyMs: e.latencyMs })),
      wsClients: () => sources.hub?.clientCount ?? 0,
      wsSubscriptions: () => sources.hub?.subscriptionsByEndpoint() ?? new Map(),
    },
    { defaultMetrics: options.defaultMetrics ?? false },
  );
  const health = new HealthChecker(set, {
    intervalMs: config.health_check_interval,
    timeoutMs: config.request_timeout,
    maxSlotLag: config.max_slot_lag,
    metrics,
  });
  const router = new CallRouter({ set, metrics, retryCount: config.retry_count, requestTimeoutMs: config.request_timeout });
  const theHub = new SubscriptionHub({ set, metrics, timeoutMs: config.request_timeout, maxPayload: 64 * 1024 * 1024, ...(log === undefined ? {} : { logger: log }) });
  sources.hub = theHub;

  const healthReport = (): RpcProxyHealth => {
    const inRotation = set.inRotation;
    const subs = theHub.subscriptionsByEndpoint();
    let total = 0;
    for (const n of subs.values()) total += n;
    return {
      status: inRotation === endpoints.length ? 'ok' : inRotation > 0 ? 'degraded' : 'unavailable',
      draining: closing !== undefined,
      bestSlot: health.bestSlot === null ? null : health.bestSlot.toString(),
      maxSlotLag: config.max_slot_lag,
      healthCheckIntervalMs: config.health_check_interval,
      healthCheckRounds: health.rounds,
      endpoints: endpoints.map((e) => ({
        name: e.name,
        state: e.state,
        inRotation: e.inRotation,
        reason: e.reason,
        slot: e.slot === null ? null : e.slot.toString(),
        slotLag: e.slotLag,
        latencyMs: e.latencyMs === null ? null : Math.round(e.latencyMs * 1000) / 1000,
        lastCheckUnixMs: e.lastCheckUnixMs,
        lastChangeUnixMs: e.lastChangeUnixMs,
        consecutiveFailures: e.consecutiveFailures,
        requests: e.requests,
        errors: { ...e.errors },
        inFlight: e.inFlight,
        connections: e.connections(),
        wsSubscriptions: subs.get(e.name) ?? 0,
      })),
      wsClients: theHub.clientCount,
      wsSubscriptions: total,
    };
  };

  // TLS on the port when tls.certFile / tls.keyFile are set: checked here, before anything listens.
  const tls = serverTlsOf(config);
  const server = new RpcProxyServer({
    host: config.host,
    tls,
    maxBodyBytes: config.max_body_bytes,
    maxBatchItems: config.max_batch_items,
    // Per client, keyed as the quote service keys its clients; 0: no limit.
    rateLimiter: config.rate_limit_rps > 0 ? new RateLimiter({ rps: config.rate_limit_rps }) : undefined,
    maxWsBufferedBytes: config.max_ws_buffered_bytes,
    ...(options.responseLimitMs === undefined ? {} : { responseLimitMs: options.responseLimitMs }),
    ...(authorize === undefined ? {} : { authorize }),
    router,
    hub: theHub,
    metrics,
    health: () => ({ body: JSON.stringify(healthReport()), ok: set.inRotation > 0 }),
    metricsText: async () => ({ text: await metrics.registry.metrics(), contentType: metrics.registry.contentType }),
    ...(log === undefined ? {} : { logger: log }),
  });

  let closing: Promise<void> | undefined;
  let started = false;
  return {
    config,
    endpoints,
    metrics,
    health,
    get port() {
      return server.port;
    },
    async start() {
      if (closing !== undefined) throw new TpError(ErrorCode.RpcProxyUnavailable, 'the rpc proxy was closed; create a new one to start again', { context: { reason: 'closed' } });
      await health.start();
      // Closed during the first health round: the port is not bound any more.
      if (closing !== undefined) throw new TpError(ErrorCode.Aborted, 'rpc proxy: closed while it started', { context: { reason: 'closed' } });
      const port = await server.start(config.port);
      started = true;
      log?.info({ port, endpoints: endpoints.map((e) => ({ name: e.name, state: e.state, reason: e.reason })) }, 'rpc proxy listening');
      return port;
    },
    healthReport,
    close() {
      closing ??= (async () => {
        if (started) await server.drain(config.shutdown_timeout);
        server.close();
        theHub.close();
        await health.stop();
        // Calls still in flight past the drain are cut.
        await Promise.all(endpoints.map((e) => (e.inFlight > 0 ? e.destroy() : e.close())));
      })();
      return closing;
    },
  };
}
