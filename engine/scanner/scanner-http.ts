/**
 * The scanner's HTTP endpoints (spec 02, health port 8081):
 *   GET  /health        200 {status:"ok"} while the block-entry stream is connected, else 503
 *                       {status:"disconnected"}; both with connection and freshness fields. A
 *                       scanner that publishes to the bus (split deployment) also answers 503
 *                       {status:"bus_unavailable"} while the bus is not connected (spec 02,
 *                       "network partition of scanner": failing health check), with field `bus`
 *   GET  /stats         scanner statistics (ScannerStats)
 *   GET  /config        the configuration in effect, secrets masked, and the monitored pools
 *   POST /config/pools  body {"pools": ["<base58>", ...]} (or a bare array): replaces the monitored
 *                       pools at once, no restart; 400 naming what is wrong, nothing changed
 *   GET  /metrics       the scanner registry (also on the metrics port)
 * Errors are docs/architecture.md §3's JSON `{"error":{"code","message"}}`. Bodies are bounded (1 MiB).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

import { httpStatusOf } from '../error-status.js';
import { ErrorCode, TpError } from '../errors.js';
import { closeServer, listenOn } from '../obs/index.js';
import type { Scanner } from './scanner.js';

const MAX_BODY_BYTES = 1 << 20;

export interface ScannerHttpOptions {
  scanner: Scanner;
  /** The configuration to show at /config (already redacted). */
  config: () => Record<string, unknown>;
  host?: string;
  /** The bus connection status ('connected', 'reconnecting', ...) when events go to the bus. */
  busStatus?: () => string;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

/** An error body with the code table's status (engine/error-status.ts). */
function sendError(res: ServerResponse, code: ErrorCode, message: string): void {
  sendJson(res, httpStatusOf(code), { error: { code, message } });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new TpError(ErrorCode.ConfigInvalid, `body over ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The pool list of a POST /config/pools body; TpError(ConfigInvalid) naming the problem. */
export function parsePoolsBody(text: string): string[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new TpError(ErrorCode.ConfigInvalid, `body is not JSON: ${(err as Error).message}`);
  }
  const pools = Array.isArray(json) ? json : (json as { pools?: unknown } | null)?.pools;
  if (!Array.isArray(pools)) throw new TpError(ErrorCode.ConfigInvalid, 'body must be {"pools": ["<base58 address>", ...]} or an array of addresses');
  return pools as string[];
}

export class ScannerHttpServer {
  private readonly server: Server;
  private readonly host: string;
  private boundPort = 0;

  constructor(private readonly options: ScannerHttpOptions) {
    this.host = options.host ?? '127.0.0.1';
    this.server = createServer((req, res) => {
      this.route(req, res).catch((err: unknown) => {
        if (!res.headersSent) sendError(res, ErrorCode.Internal, (err as Error).message);
      });
    });
  }

  get port(): number {
    return this.boundPort;
  }

  /** Binds `port` (0: any free port); resolves with the bound port. */
  async start(port: number): Promise<number> {
    this.boundPort = await listenOn(this.server, this.host, port, 'scanner HTTP');
    return this.boundPort;
  }

  /** Stops listening and closes idle and open connections. Idempotent. */
  close(): Promise<void> {
    return closeServer(this.server);
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    const scanner = this.options.scanner;
    if (req.method === 'GET' && path === '/health') {
      const s = scanner.stats();
      const connected = s.stream.connected;
      const bus = this.options.busStatus?.();
      const busUp = bus === undefined || bus === 'connected';
      sendJson(res, connected && busUp ? 200 : 503, {
        status: !connected ? 'disconnected' : busUp ? 'ok' : 'bus_unavailable',
        connected,
        ...(bus === undefined ? {} : { bus }),
        lastSlot: s.lastSlot,
        lastEntryAgeMs: s.lastEntryAgeMs,
        monitoredPools: s.monitoredPools,
        connections: s.stream.connections,
        connectionErrors: s.stream.connectionErrors,
      });
      return;
    }
    if (req.method === 'GET' && path === '/stats') {
      sendJson(res, 200, scanner.stats());
      return;
    }
    if (req.method === 'GET' && path === '/config') {
      sendJson(res, 200, { ...this.options.config(), 'pools.monitored': scanner.pools });
      return;
    }
    if (path === '/config/pools') {
      if (req.method !== 'POST') {
        res.setHeader('Allow', 'POST');
        sendError(res, ErrorCode.MethodNotAllowed, 'use POST with {"pools": [...]}');
        return;
      }
      try {
        const pools = parsePoolsBody(await readBody(req));
        scanner.setPools(pools);
        sendJson(res, 200, { pools: scanner.pools.length });
      } catch (err) {
        if (err instanceof TpError) sendError(res, err.code, err.message);
        else throw err;
      }
      return;
    }
    if (req.method === 'GET' && path === '/metrics') {
      const registry = scanner.metrics.registry;
      const text = await registry.metrics();
      res.writeHead(200, { 'Content-Type': registry.contentType }).end(text);
      return;
    }
    sendError(res, ErrorCode.NotFound, `no route ${req.method ?? ''} ${path ?? ''}`);
  }
}
