/**
 * The quote service's metrics port (spec 02: 9090): `GET /metrics` and `GET /debug/pprof/heap` over
 * node:http, apart from the quote port so scrapes and profiles never queue behind quote traffic
 * and the port can stay private when the quote port is public.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

import { DEFAULT_HTTP_LIMITS, type HttpLimitValues } from '../config/index.js';
import { closeServer, createLimitedServer, listenOn, requestTarget } from '../obs/index.js';
import { httpStatusOf } from '../error-status.js';
import { ErrorCode } from '../errors.js';
import { errorBody } from './error-body.js';
import { heapProfileResponse, opsFailure, type OpsResponse } from './ops-endpoints.js';

export interface MetricsHttpServerOptions {
  /** The `/metrics` answer (registry text with refreshed gauges). */
  metrics: () => Promise<OpsResponse>;
  /** Bind address; default 127.0.0.1. */
  host?: string;
  /** Timeouts and connection cap (the `http.*` settings); default DEFAULT_HTTP_LIMITS. */
  httpLimits?: HttpLimitValues;
}

export class MetricsHttpServer {
  private readonly server: Server;
  private readonly host: string;
  private readonly metrics: () => Promise<OpsResponse>;
  private boundPort = 0;

  constructor(options: MetricsHttpServerOptions) {
    this.host = options.host ?? '127.0.0.1';
    this.metrics = options.metrics;
    this.server = createLimitedServer((req, res) => this.handle(req, res), options.httpLimits ?? DEFAULT_HTTP_LIMITS);
  }

  get port(): number {
    return this.boundPort;
  }

  /** Binds `port` (0: any free port); resolves with the bound port. */
  async start(port: number): Promise<number> {
    this.boundPort = await listenOn(this.server, this.host, port, 'metrics server');
    return this.boundPort;
  }

  /** Stops listening and closes idle and open connections. Idempotent. */
  close(): Promise<void> {
    return closeServer(this.server);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const { path, query } = requestTarget(req);
    let answer: Promise<OpsResponse> | undefined;
    if (req.method === 'GET' && path === '/metrics') answer = this.metrics();
    else if (req.method === 'GET' && path === '/debug/pprof/heap') answer = heapProfileResponse(query.get('format') ?? '');
    if (answer === undefined) {
      res.writeHead(httpStatusOf(ErrorCode.NotFound), { 'Content-Type': 'application/json' }).end(errorBody(ErrorCode.NotFound, 'not found'));
      return;
    }
    answer.catch(() => opsFailure()).then((r) => {
      if (res.destroyed) return;
      res.writeHead(r.status, Object.fromEntries(r.headers)).end(r.body);
    }, () => undefined);
  }
}
