/**
 * The external quote service's metrics port (default 9093): `GET /metrics` (Prometheus text) and
 * `GET /health` (JSON, camelCase). /health answers 200 while quotes can be had (breaker closed or
 * half-open; `status` "degraded" when half-open or paused by a 429) and 503 while the circuit
 * breaker is open, so a probe sees a service that can only send error quotes.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

import { HealthStatus, healthHttpStatus } from '../common/index.js';
import { httpStatusOf } from '../error-status.js';
import { ErrorCode } from '../errors.js';
import { closeServer, listenOn, requestTarget } from '../obs/index.js';

export { HealthStatus };

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
}

export class ExternalHttpServer {
  private readonly server: Server;
  private readonly host: string;
  private readonly options: ExternalHttpServerOptions;
  private boundPort = 0;

  constructor(options: ExternalHttpServerOptions) {
    this.options = options;
    this.host = options.host ?? '127.0.0.1';
    this.server = createServer((req, res) => this.handle(req, res));
    this.server.keepAliveTimeout = 5_000;
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
