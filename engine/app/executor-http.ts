/**
 * The executor's HTTP surface, shared by `tidepool executor` and the paper trading of `tidepool
 * start`: GET /health, GET /ready (the caller's dependencies), GET /metrics (its registry),
 * GET /stats (its ExecutorService's counts and last results, bigints as decimal strings).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { Registry } from 'prom-client';

export interface ExecutorHttpOptions {
  host: string;
  port: number;
  registry: Registry;
  stats: () => object;
  /** Fields /health adds to its status (the deployment mode). */
  health?: () => object;
  ready: () => Promise<{ ok: boolean; detail: object }>;
}

function jsonText(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

export async function serveExecutorHttp(o: ExecutorHttpOptions): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    void (async () => {
      if (req.url === '/health') return void res.writeHead(200, { 'content-type': 'application/json' }).end(jsonText({ status: 'ok', ...o.health?.() }));
      if (req.url === '/ready') {
        const { ok, detail } = await o.ready();
        return void res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(jsonText({ status: ok ? 'ready' : 'not_ready', ...detail }));
      }
      if (req.url === '/metrics') return void res.writeHead(200, { 'content-type': o.registry.contentType }).end(await o.registry.metrics());
      if (req.url === '/stats') return void res.writeHead(200, { 'content-type': 'application/json' }).end(jsonText(o.stats()));
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'TP_ERR_NOT_FOUND', message: `no route ${req.url ?? ''}` } }));
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = o.host.includes(':') ? `[${o.host}]` : o.host;
  return { url: `http://${host}:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
