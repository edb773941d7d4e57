/**
 * The aggregator's HTTP side interface (spec 01, -http-port): GET /health (200 serving or
 * degraded, 503 not serving), GET /ready (200 {status:"ready"} once an upstream is connected and
 * healthy, else 503 {status:"not_ready", reason}), GET /stats, GET /metrics (Prometheus text). JSON is camelCase with
 * u64 values as decimal strings; errors are {"error":{"code","message"}}; other paths are 404.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

import { httpStatusOf } from '../error-status.js';
import { ErrorCode } from '../errors.js';
import { DEFAULT_HTTP_LIMITS, type HttpLimitValues, type ServerTls } from '../config/index.js';
import { closeServer, createLimitedServer, listenOn, requestTarget } from '../obs/index.js';
import { ServingStatusName } from './wire-types.js';

export interface AggregatorHttpHandlers {
  /** The health body and whether the aggregator can serve quotes at all. */
  health(): { status: ServingStatusName; body: object };
  stats(): object;
  /** Why the aggregator is not ready (no upstream connected); undefined when ready. */
  notReady?(): string | undefined;
  /** Prometheus text exposition and its content type. */
  metrics(): Promise<{ contentType: string; body: string }>;
}

/** /health's `status` field. */
export const HTTP_STATUS_OF: Record<ServingStatusName, 'serving' | 'degraded' | 'not_serving'> = {
  [ServingStatusName.Serving]: 'serving',
  [ServingStatusName.Degraded]: 'degraded',
  [ServingStatusName.NotServing]: 'not_serving',
};

const json = (value: unknown): string => JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'Content-Type': contentType, 'Cache-Control': 'no-store' }).end(body);
}

/** An error body with the code table's status (engine/error-status.ts). */
function sendError(res: ServerResponse, code: ErrorCode, message: string): void {
  send(res, httpStatusOf(code), 'application/json', json({ error: { code, message } }));
}

export class AggregatorHttpServer {
  private readonly server: Server;

  constructor(
    private readonly handlers: AggregatorHttpHandlers,
    private readonly host: string,
    /** Timeouts and connection cap (the `http.*` settings). */
    httpLimits: HttpLimitValues = DEFAULT_HTTP_LIMITS,
    /** Serve HTTPS with this certificate and key (tls.certFile / tls.keyFile); undefined: plain HTTP. */
    tls?: ServerTls | undefined,
  ) {
    this.server = createLimitedServer((req, res) => this.handle(req, res), httpLimits, tls);
  }

  /** Binds `port` (0: any free port); resolves with the bound port. */
  start(port: number): Promise<number> {
    return listenOn(this.server, this.host, port, 'aggregator HTTP server');
  }

  /** Stops listening and closes connections. Idempotent. */
  close(): Promise<void> {
    return closeServer(this.server);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const { path } = requestTarget(req);
    if (path !== '/health' && path !== '/ready' && path !== '/stats' && path !== '/metrics') {
      sendError(res, ErrorCode.NotFound, `no such path: ${path}`);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      sendError(res, ErrorCode.MethodNotAllowed, `method ${req.method} not allowed on ${path}`);
      return;
    }
    try {
      if (path === '/health') {
        const { status, body } = this.handlers.health();
        send(res, status === ServingStatusName.NotServing ? 503 : 200, 'application/json', json(body));
      } else if (path === '/ready') {
        const reason = this.handlers.notReady?.();
        send(res, reason === undefined ? 200 : 503, 'application/json', json(reason === undefined ? { status: 'ready' } : { status: 'not_ready', reason }));
      } else if (path === '/stats') {
        send(res, 200, 'application/json', json(this.handlers.stats()));
      } else {
        this.handlers.metrics().then(
          (m) => send(res, 200, m.contentType, m.body),
          () => sendError(res, ErrorCode.Internal, 'metrics unavailable'),
        );
      }
    } catch {
      sendError(res, ErrorCode.Internal, 'internal error');
    }
  }
}
