/**
 * The external quote service's metrics port (default 9093): `GET /metrics` (Prometheus text) and
 * `GET /health` (JSON, camelCase). /health answers 200 while quotes can be had (breaker closed or
 * half-open; `status` "degraded" when half-open or paused by a 429) and 503 while the circuit
 * breaker is open, so a probe sees a service that can only send error quotes. `GET /ready`: 200
 * {status:"ready"} while the provider is reachable, 503 {status:"not_ready", reason} while the
 * circuit breaker is open or no poll in the uptime window succeeded (before the first poll it is
 * ready: nothing says the provider is down).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

import { HealthStatus, healthHttpStatus } from '../common/index.js';
import { httpStatusOf } from '../error-status.js';
import { ErrorCode } from '../errors.js';
import { DEFAULT_HTTP_LIMITS, type HttpLimitValues } from '../config/index.js';
import { closeServer, createLimitedServer, listenOn, requestTarget } from '../obs/index.js';

export { HealthStatus };

/** Why the external quote service is not ready (the provider is not reachable); undefined when ready. */
export function externalNotReady(h: ExternalHealth): string | undefined {
  const p = h.provider;
  if (p.circuitBreaker === 'open') return `provider ${p.name} circuit breaker open`;
  if (p.pollsInWindow > 0 && p.upPollsInWindow === 0) return `provider ${p.name}: no successful poll in the last ${p.uptimeWindowMs} ms`;
  return undefined;
}

/** The /health body. */
export interface ExternalHealth {
  status: HealthStatus;
  provider: {
    name: string;
    /** The quote URL without its query (no parameters, no key). */
    url: string;
    /** null before any poll in the window. */
    uptimeRatio: number | null;
    uptimeWindowMs: number;
    pollsInWindow: number;
    upPollsInWindow: number;
    polls: number;
    latencyMs: { last: number | null; ewma: number | null };
    /** Polls by outcome other than ok, since start. */
    errors: Record<string, number>;
    circuitBreaker: 'closed' | 'open' | 'half-open';
    /** Unix ms until which polling is paused by a 429; null when not paused. */
    rateLimitedUntilUnixMs: number | null;
    requestsInFlight: number;
  };
  activeStreams: number;
  trackedPairs: number;
}

export interface ExternalHttpServerOptions {
  metrics: () => Promise<string>;
  metricsContentType: string;
  health: () => ExternalHealth;
  host?: string;
  /** Timeouts and connection cap (the `http.*` settings); default DEFAULT_HTTP_LIMITS. */
  httpLimits?: HttpLimitValues;
}

export class ExternalHttpServer {
  private readonly server: Server;
  private readonly host: string;
  private readonly options: ExternalHttpServerOptions;
  private boundPort = 0;

  constructor(options: ExternalHttpServerOptions) {
    this.options = options;
    this.host = options.host ?? '127.0.0.1';
    this.server = createLimitedServer((req, res) => this.handle(req, res), options.httpLimits ?? DEFAULT_HTTP_LIMITS);
  }

  get port(): number {
    return this.boundPort;
  }

  async start(port: number): Promise<number> {
    this.boundPort = await listenOn(this.server, this.host, port, 'external quotes metrics server');
    return this.boundPort;
  }

  /** Idempotent. */
  close(): Promise<void> {
    return closeServer(this.server);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const { path } = requestTarget(req);
    if (req.method === 'GET' && path === '/health') {
      const health = this.options.health();
      res.writeHead(healthHttpStatus(health.status), { 'content-type': 'application/json' }).end(JSON.stringify(health));
      return;
    }
    if (req.method === 'GET' && path === '/ready') {
      const reason = externalNotReady(this.options.health());
      res.writeHead(reason === undefined ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify(reason === undefined ? { status: 'ready' } : { status: 'not_ready', reason }));
      return;
    }
    if (req.method === 'GET' && path === '/metrics') {
      this.options.metrics().then(
        (text) => {
          if (!res.destroyed) res.writeHead(200, { 'content-type': this.options.metricsContentType }).end(text);
        },
        () => {
          if (!res.destroyed) res.writeHead(httpStatusOf(ErrorCode.Internal), { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: ErrorCode.Internal, message: 'metrics failed' } }));
        },
      );
      return;
    }
    res.writeHead(httpStatusOf(ErrorCode.NotFound), { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: ErrorCode.NotFound, message: 'not found' } }));
  }
}
