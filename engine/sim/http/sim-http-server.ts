import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isIP } from 'node:net';

import { ErrorCode, TpError } from '../../errors.js';
import { createLogger, type Logger } from '../../obs/index.js';
import { HttpError, HttpErrorCode, sendError } from './http-io.js';
import { Router, type RouteHandler, type RouteRegistry } from './router.js';

/**
 * The simulator's own HTTP server (block engine, fault admin, and the aggregator-style /quote
 * API): node:http on loopback only, since the fault admin can break the chain at will. Features
 * plug in with `route(method, path, handler)`.
 */

export const SIM_HTTP_DEFAULT_HOST = '127.0.0.1';
export const SIM_HTTP_DEFAULT_PORT = 8890;
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 2000;

export interface SimHttpServerOptions {
  /** A loopback address (127.0.0.0/8, ::1, localhost). Default 127.0.0.1. */
  host?: string;
  /** Default 8890; 0 picks a free port (see start()). */
  port?: number;
  /** How long close() lets requests in flight finish before cutting connections. Default 2000 ms. */
  shutdownTimeoutMs?: number;
  logger?: Logger;
}

export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost') return true;
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1' || bare.toLowerCase().startsWith('::ffff:127.');
  return false;
}

export class SimHttpServer implements RouteRegistry {
  private readonly router = new Router();
  private readonly host: string;
  private readonly requestedPort: number;
  private readonly shutdownTimeoutMs: number;
  private readonly log: Logger;
  private server: Server | undefined;
  private boundPort = 0;

  constructor(options: SimHttpServerOptions = {}) {
    this.host = options.host ?? SIM_HTTP_DEFAULT_HOST;
    this.requestedPort = options.port ?? SIM_HTTP_DEFAULT_PORT;
    this.shutdownTimeoutMs = options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
    this.log = options.logger ?? createLogger({ name: 'sim-http' });
    if (!isLoopbackHost(this.host)) {
      throw new TpError(ErrorCode.ConfigInvalid, `the simulator HTTP server binds loopback only, got host ${this.host}`, {
        context: { setting: 'host', value: this.host },
      });
    }
    if (!Number.isInteger(this.requestedPort) || this.requestedPort < 0 || this.requestedPort > 65535) {
      throw new TpError(ErrorCode.ConfigInvalid, `port must be in 0..65535, got ${this.requestedPort}`);
    }
  }

  /** Adds a route; `path` may hold `:name` segments (see Router). Routes may be added after start(). */
  route(method: string, path: string, handler: RouteHandler): this {
    this.router.route(method, path, handler);
    return this;
  }

  /** The bound port (after start()). */
  get port(): number {
    return this.boundPort;
  }

  /** `http://host:port` (after start()). */
  get url(): string {
    const host = this.host.includes(':') && !this.host.startsWith('[') ? `[${this.host}]` : this.host;
    return `http://${host}:${this.boundPort}`;
  }

  /** Binds and starts serving; resolves with the bound port. */
  async start(): Promise<number> {
    if (this.server !== undefined) return this.boundPort;
    const server = createServer({ keepAliveTimeout: 5000 }, (req, res) => {
      void this.handle(req, res);
    });
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error): void => {
        reject(new TpError(ErrorCode.Io, `simulator HTTP server cannot bind ${this.host}:${this.requestedPort}: ${err.message}`, { cause: err, context: { host: this.host, port: this.requestedPort } }));
      };
      server.once('error', onError);
      server.listen(this.requestedPort, this.host, () => {
        server.off('error', onError);
        resolve();
      });
    });
    server.on('error', (err) => this.log.error({ err }, 'simulator HTTP server error'));
    this.server = server;
    this.boundPort = (server.address() as AddressInfo).port;
    this.log.info({ host: this.host, port: this.boundPort }, 'simulator HTTP server listening');
    return this.boundPort;
  }

  /** Stops accepting, lets requests in flight finish for up to shutdownTimeoutMs, then cuts the rest. */
  async close(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => server.closeAllConnections(), this.shutdownTimeoutMs);
      server.close(() => {
        clearTimeout(timer);
        resolve();
      });
      server.closeIdleConnections();
    });
    this.log.info({ port: this.boundPort }, 'simulator HTTP server closed');
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://sim.local');
    } catch {
      sendError(res, 400, HttpErrorCode.InvalidParameter, 'malformed request URL');
      return;
    }
    const match = this.router.match(req.method ?? 'GET', url.pathname);
    if (match.kind === 'none') {
      sendError(res, 404, HttpErrorCode.NotFound, `no route for ${url.pathname}`);
      return;
    }
    if (match.kind === 'method') {
      sendError(res, 405, HttpErrorCode.MethodNotAllowed, `${req.method} is not allowed on ${url.pathname}`, {
        allow: match.allowed.join(', '),
      });
      return;
    }
    try {
      await match.handler(req, res, { url, params: match.params });
    } catch (err) {
      this.fail(req, res, err);
    }
  }

  private fail(req: IncomingMessage, res: ServerResponse, err: unknown): void {
    if (res.headersSent) {
      this.log.error({ err, path: req.url }, 'route failed after answering');
      res.destroy();
      return;
    }
    if (err instanceof HttpError) {
      sendError(res, err.status, err.code, err.message, err.headers);
      return;
    }
    this.log.error({ err, method: req.method, path: req.url }, 'route failed');
    sendError(res, 500, HttpErrorCode.Internal, 'internal error');
  }
}
