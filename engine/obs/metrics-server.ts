/**
 * A Prometheus scrape endpoint on its own port (spec 02: 9090 for the quote service, 9091 for the
 * scanner): `GET /metrics` serves one or more registries in the text exposition format; anything
 * else is 404. node:http is enough here: a scrape every few seconds is not a hot path, and keeping
 * it off the quote server's socket keeps scrapes out of quote latency.
 */
import { createServer, type Server } from 'node:http';

import { Registry } from 'prom-client';

import { ErrorCode } from '../errors.js';
import { closeServer, listenOn } from './http-listen.js';

export interface MetricsServerOptions {
  registries: readonly Registry[];
  /** Bind address; default 127.0.0.1. */
  host?: string;
  /** Called before every scrape (refresh gauges that are computed, not counted). */
  beforeScrape?: () => void;
}

export class MetricsServer {
  private readonly server: Server;
  private readonly registry: Registry;
  private readonly host: string;
  private boundPort = 0;

  constructor(options: MetricsServerOptions) {
    this.host = options.host ?? '127.0.0.1';
    this.registry = options.registries.length === 1 ? options.registries[0]! : Registry.merge([...options.registries]);
    const beforeScrape = options.beforeScrape;
    this.server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (req.method !== 'GET' || path !== '/metrics') {
        res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { code: ErrorCode.NotFound, message: 'not found' } }));
        return;
      }
      try {
        beforeScrape?.();
      } catch {
        // a failing refresh must not cost the scrape: the counters are still worth reading
      }
      this.registry.metrics().then(
        (text) => res.writeHead(200, { 'Content-Type': this.registry.contentType }).end(text),
        (err: unknown) => res.writeHead(500, { 'Content-Type': 'text/plain' }).end(String(err)),
      );
    });
    this.server.keepAliveTimeout = 5_000;
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
}
