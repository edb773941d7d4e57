/**
 * The console's HTTP side (node:http): the page and its ES modules (no build step), uPlot's dist
 * files straight from its npm package, a quote pass-through, and the live WebSocket.
 *
 *   GET /                         the page (static/index.html); /app.js, /*.js, /style.css beside it
 *   GET /vendor/uplot/uPlot.esm.js, /vendor/uplot/uPlot.min.css   from node_modules/uplot/dist
 *   GET /api/quote?…              the quote service's GET /quote, same query, same answer and status
 *   GET /api/state                the whole console state as JSON (what a WebSocket gets first)
 *   GET /api/strategies           the planner's GET /strategies (status, open grid orders, position, P&L)
 *   PATCH /api/strategies/{id}    the planner's PATCH /strategies/{id} (the page's pause / resume)
 *                                 Both pass the caller's Authorization header on (the planner checks
 *                                 the same JWTs) and the planner's answer back unchanged; 503 without
 *                                 a planner (CONSOLE_PLANNER_URL).
 *   GET /health                   200 {"status":"ok"} (open, like every service's probe)
 *   WS  /ws                       {type:"snapshot"} then one message per change (console-hub.ts)
 *
 * Authentication is the engine's (engine/auth): with auth on, /api/* needs `Authorization: Bearer
 * <jwt>` and /ws the token as its second WebSocket subprotocol (`tidepool.bearer`, `<jwt>`: browsers
 * cannot set headers on a WebSocket); without one, 401 TP_ERR_UNAUTHENTICATED. The page and its
 * scripts hold no data and stay open, so the page can ask for the token.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, extname, join, resolve, sep } from 'node:path';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';

import type { JwtVerifier } from '../auth/index.js';
import { clientErrorOf } from '../error-status.js';
import { ErrorCode, TpError } from '../errors.js';
import { packagePath } from '../package-files.js';
import { closeServer, listenOn, requestTarget, type Logger } from '../obs/index.js';
import { readLimitedBody } from '../scanner/index.js';
import type { ConsoleHub, ConsoleMessage } from './console-hub.js';

export const WS_BEARER_PROTOCOL = 'tidepool.bearer';
/** A pause / resume body is a few bytes; the planner takes parameter changes directly. */
export const MAX_STRATEGY_PATCH_BYTES = 4 * 1024;
const STRATEGY_PATH = /^\/api\/strategies\/[0-9a-fA-F-]{36}$/;
/** A client further behind than this many bytes is dropped (it reconnects and gets a snapshot). */
export const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;
/** Every WebSocket is pinged this often; one that has not answered the previous ping is cut. */
export const PING_INTERVAL_MS = 30_000;

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** engine/console/static of the package. */
export function staticDir(): string {
  return packagePath('engine', 'console', 'static');
}

/** uPlot's dist directory, resolved through Node's module resolution (no CDN). */
export function uplotDir(): string {
  return dirname(createRequire(import.meta.url).resolve('uplot/dist/uPlot.esm.js'));
}

export interface ConsoleServerOptions {
  hub: ConsoleHub;
  /** The quote service's base URL (its GET /quote). */
  quoteUrl: string;
  /** The planner's base URL (its /strategies API); undefined or empty: no strategies view. */
  plannerUrl?: string | undefined;
  host: string;
  port: number;
  /** Set when auth is on. */
  verifier?: JwtVerifier | undefined;
  logger: Logger;
  /** Default PING_INTERVAL_MS (tests shorten it). */
  pingIntervalMs?: number;
}

export class ConsoleServer {
  private readonly server: Server;
  private readonly wss = new WebSocketServer({ noServer: true, handleProtocols: (protocols) => (protocols.has(WS_BEARER_PROTOCOL) ? WS_BEARER_PROTOCOL : false) });
  private readonly files: Map<string, { type: string; body: Buffer }>;
  private unsubscribe: (() => void) | undefined;
  private closed: Promise<void> | undefined;
  private pinger: NodeJS.Timeout | undefined;
  /** Sockets that answered the last ping (a half-open TCP connection never does). */
  private readonly alive = new WeakSet<WebSocket>();

  constructor(private readonly options: ConsoleServerOptions) {
    this.files = loadFiles();
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        options.logger.warn({ err }, 'console request failed');
        if (!res.headersSent) sendError(res, ErrorCode.Internal, 'internal error');
        else res.destroy();
      });
    });
    this.server.on('upgrade', (req, socket, head) => {
      this.upgrade(req, socket, head).catch(() => socket.destroy());
    });
  }

  get authEnabled(): boolean {
    return this.options.verifier !== undefined;
  }

  /** Listens; resolves with the bound port. */
  async start(): Promise<number> {
    const port = await listenOn(this.server, this.options.host, this.options.port, 'console');
    this.unsubscribe = this.options.hub.subscribe((m) => this.broadcast(m));
    this.pinger = setInterval(() => {
      for (const ws of this.wss.clients) {
        if (!this.alive.has(ws)) {
          ws.terminate();
          continue;
        }
        this.alive.delete(ws);
        ws.ping();
      }
    }, this.options.pingIntervalMs ?? PING_INTERVAL_MS);
    this.pinger.unref();
    return port;
  }

  close(): Promise<void> {
    this.closed ??= (async () => {
      this.unsubscribe?.();
      clearInterval(this.pinger);
      for (const ws of this.wss.clients) ws.close(1001, 'console stopping');
      this.wss.close();
      await closeServer(this.server);
    })();
    return this.closed;
  }

  private broadcast(message: ConsoleMessage): void {
    if (this.wss.clients.size === 0) return;
    const text = JSON.stringify(message);
    for (const ws of this.wss.clients) {
      if (ws.readyState !== ws.OPEN) continue;
      if (ws.bufferedAmount > MAX_BUFFERED_BYTES) {
        ws.terminate();
        continue;
      }
      ws.send(text);
    }
  }

  /** undefined when the request may go on; else why not (never the token itself). */
  private async denied(token: string | undefined): Promise<string | undefined> {
    const verifier = this.options.verifier;
    if (verifier === undefined) return undefined;
    if (token === undefined || token === '') return 'a bearer token is required';
    try {
      await verifier.verify(token);
      return undefined;
    } catch (err) {
      return (err as Error).message;
    }
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    if (requestTarget(req).path !== '/ws') {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const protocols = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
    const at = protocols.indexOf(WS_BEARER_PROTOCOL);
    const why = await this.denied(at >= 0 ? protocols[at + 1] : undefined);
    if (why !== undefined) {
      const body = JSON.stringify({ error: { code: ErrorCode.Unauthenticated, message: why } });
      socket.end(`HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
      this.alive.add(ws);
      ws.on('pong', () => this.alive.add(ws));
      ws.on('error', () => ws.terminate());
      ws.send(JSON.stringify({ type: 'snapshot', state: this.options.hub.snapshot() } satisfies ConsoleMessage));
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { path, query } = requestTarget(req);
    const strategyPatch = req.method === 'PATCH' && STRATEGY_PATH.test(path);
    if (req.method !== 'GET' && req.method !== 'HEAD' && !strategyPatch) {
      res.setHeader('Allow', 'GET, HEAD');
      sendError(res, ErrorCode.MethodNotAllowed, `${req.method} is not served; use GET (PATCH /api/strategies/{id} only)`);
      return;
    }
    if (path === '/health') {
      sendJson(res, 200, { status: 'ok', auth: this.authEnabled });
      return;
    }
    if (path.startsWith('/api/')) {
      const header = req.headers.authorization;
      const why = await this.denied(header?.startsWith('Bearer ') ? header.slice(7).trim() : undefined);
      if (why !== undefined) {
        res.setHeader('WWW-Authenticate', 'Bearer');
        sendError(res, ErrorCode.Unauthenticated, why);
        return;
      }
      if (path === '/api/quote') return this.quote(query, res);
      if (path === '/api/state') return sendJson(res, 200, this.options.hub.snapshot());
      if (path === '/api/strategies' || strategyPatch) return this.planner(req, path.slice('/api'.length), res);
      sendError(res, ErrorCode.NotFound, `no such path ${path}`);
      return;
    }
    const file = this.files.get(path === '/' ? '/index.html' : path);
    if (file === undefined) {
      sendError(res, ErrorCode.NotFound, `no such path ${path}`);
      return;
    }
    res.writeHead(200, { 'Content-Type': file.type, 'Content-Length': file.body.length, 'Cache-Control': 'no-cache' });
    res.end(req.method === 'HEAD' ? undefined : file.body);
  }

  /** The planner's answer to the same strategy request (method, body, Authorization), passed through with its status. */
  private async planner(req: IncomingMessage, path: string, res: ServerResponse): Promise<void> {
    const base = this.options.plannerUrl;
    if (base === undefined || base === '') {
      sendError(res, ErrorCode.Unavailable, 'no planner configured: set CONSOLE_PLANNER_URL (tidepool console --planner-url)');
      return;
    }
    let body: string | undefined;
    if (req.method === 'PATCH') {
      try {
        body = await readLimitedBody(req, MAX_STRATEGY_PATCH_BYTES);
      } catch (err) {
        const e = err instanceof TpError ? err : new TpError(ErrorCode.BadParameter, 'request body not read');
        sendError(res, e.code, e.message);
        return;
      }
    }
    const authorization = req.headers.authorization;
    let upstream: Response;
    try {
      upstream = await fetch(`${base}${path}`, {
        method: req.method === 'PATCH' ? 'PATCH' : 'GET',
        headers: { ...(authorization === undefined ? {} : { authorization }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body }),
        signal: AbortSignal.timeout(5_000),
      });
    } catch (err) {
      sendError(res, ErrorCode.Unavailable, `planner at ${base} did not answer: ${(err as Error).message}`);
      return;
    }
    const answer = Buffer.from(await upstream.arrayBuffer());
    res.writeHead(upstream.status, { 'Content-Type': upstream.headers.get('content-type') ?? 'application/json', 'Content-Length': answer.length });
    res.end(req.method === 'HEAD' ? undefined : answer);
  }

  /** The quote service's answer to the same query, passed through with its status. */
  private async quote(query: URLSearchParams, res: ServerResponse): Promise<void> {
    let upstream: Response;
    try {
      upstream = await fetch(`${this.options.quoteUrl}/quote?${query.toString()}`, { signal: AbortSignal.timeout(5_000) });
    } catch (err) {
      sendError(res, ErrorCode.Unavailable, `quote service at ${this.options.quoteUrl} did not answer: ${(err as Error).message}`);
      return;
    }
    const body = Buffer.from(await upstream.arrayBuffer());
    res.writeHead(upstream.status, { 'Content-Type': upstream.headers.get('content-type') ?? 'application/json', 'Content-Length': body.length });
    res.end(body);
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function sendError(res: ServerResponse, code: ErrorCode, message: string): void {
  const e = clientErrorOf(code, message);
  sendJson(res, e.http, { error: { code: e.code, message: e.message } });
}

/** The page's files and uPlot's, read once at start (a few tens of kB). */
function loadFiles(): Map<string, { type: string; body: Buffer }> {
  const out = new Map<string, { type: string; body: Buffer }>();
  const dir = staticDir();
  for (const name of ['index.html', 'app.js', 'panels.js', 'strategies.js', 'format.js', 'style.css']) {
    const path = resolve(dir, name);
    if (!path.startsWith(dir + sep) || !existsSync(path)) continue;
    out.set(`/${name}`, { type: TYPES[extname(name)] ?? 'application/octet-stream', body: readFileSync(path) });
  }
  const uplot = uplotDir();
  out.set('/vendor/uplot/uPlot.esm.js', { type: TYPES['.js']!, body: readFileSync(join(uplot, 'uPlot.esm.js')) });
  out.set('/vendor/uplot/uPlot.min.css', { type: TYPES['.css']!, body: readFileSync(join(uplot, 'uPlot.min.css')) });
  return out;
}
