/**
 * The scanner's HTTP endpoints (spec 02, health port 8081):
 *   GET  /health        200 {status:"ok"} while the block-entry stream is connected, else 503
 *                       {status:"disconnected"}; both with connection and freshness fields. A
 *                       scanner that publishes to the bus (split deployment) also answers 503
 *                       {status:"bus_unavailable"} while the bus is not connected (spec 02,
 *                       "network partition of scanner": failing health check), with field `bus`
 *   GET  /ready         readiness: 200 {status:"ready"} once its inputs are live (block-entry stream
 *                       connected, and the bus when it publishes there), else 503
 *                       {status:"not_ready", reason} naming what is not
 *   GET  /stats         scanner statistics (ScannerStats)
 *   GET  /config        the configuration in effect, secrets masked, and the monitored pools
 *   POST /config/pools  body {"pools": ["<base58>", ...]} (or a bare array): replaces the monitored
 *                       pools at once, no restart; 400 naming what is wrong (an empty list too),
 *                       nothing changed; 413 over 1 MiB (body drained, then the connection closed);
 *                       401 without a valid JWT bearer token when auth is on (`authorizeWrite`)
 *   GET  /metrics       the scanner registry (also on the metrics port)
 * Errors are docs/architecture.md §3's JSON `{"error":{"code","message"}}`. Bodies are bounded (1 MiB;
 * pools-request.ts).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

import { httpStatusOf } from '../error-status.js';
import { ErrorCode, TpError } from '../errors.js';
import { maskSecrets } from '../secret-mask.js';
import { DEFAULT_HTTP_LIMITS, type HttpLimitValues } from '../config/index.js';
import { closeServer, createLimitedServer, listenOn } from '../obs/index.js';
import { parsePoolsBody, readLimitedBody } from './pools-request.js';
import { ScannerHealth, type ScannerHealthSettings } from './scanner-health.js';
import type { Scanner } from './scanner.js';


export interface ScannerHttpOptions {
  scanner: Scanner;
  /** The configuration to show at /config (already redacted). */
  config: () => Record<string, unknown>;
  host?: string;
  /** The bus connection status ('connected', 'reconnecting', ...) when events go to the bus. */
  busStatus?: () => string;
  /** Timeouts and connection cap (the `http.*` settings); default DEFAULT_HTTP_LIMITS. */
  httpLimits?: HttpLimitValues;
  /**
   * Checks the Authorization header of a write (POST /config/pools); rejects with
   * TP_ERR_UNAUTHENTICATED. Absent: writes are open (auth off, e.g. bound to loopback).
   */
  authorizeWrite?: (authorization: string | undefined) => Promise<void>;
  /** What /health judges besides the connections (scanner-health.ts); default thresholds when absent. */
  health?: ScannerHealthSettings;
}

/** Every body is masked (engine/secret-mask.ts): no URL credential, token or key leaves this port. */
function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(maskSecrets(body)));
}

/** An error body with the code table's status (engine/error-status.ts). */
function sendError(res: ServerResponse, code: ErrorCode, message: string): void {
  sendJson(res, httpStatusOf(code), { error: { code, message } });
}

export class ScannerHttpServer {
  private readonly server: Server;
  private readonly host: string;
  private boundPort = 0;
  /** The health signals, for /health here and for any other probe (/ready) that wants them. */
  readonly health: ScannerHealth;

  constructor(private readonly options: ScannerHttpOptions) {
    this.host = options.host ?? '127.0.0.1';
    this.health = new ScannerHealth(options.scanner, options.health, options.busStatus);
    this.server = createLimitedServer((req, res) => {
      this.route(req, res).catch((err: unknown) => {
        if (!res.headersSent) sendError(res, ErrorCode.Internal, (err as Error).message);
      });
    }, options.httpLimits ?? DEFAULT_HTTP_LIMITS);
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
      const { healthy, body } = this.health.check();
      sendJson(res, healthy ? 200 : 503, body);
      return;
    }
    if (req.method === 'GET' && path === '/ready') {
      const reasons: string[] = [];
      if (!scanner.stats().stream.connected) reasons.push('block-entry stream not connected');
      const bus = this.options.busStatus?.();
      if (bus !== undefined && bus !== 'connected') reasons.push(`pool update bus is ${bus}`);
      sendJson(res, reasons.length === 0 ? 200 : 503, reasons.length === 0 ? { status: 'ready' } : { status: 'not_ready', reason: reasons.join('; ') });
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
        await this.options.authorizeWrite?.(req.headers.authorization);
        const pools = parsePoolsBody(await readLimitedBody(req));
        scanner.setPools(pools);
        sendJson(res, 200, { pools: scanner.pools.length });
      } catch (err) {
        if (!(err instanceof TpError)) throw err;
        // A refused request may leave body bytes unread: close the connection after the answer
        // (Node drains what is left before closing), so nothing is taken for the next request.
        if (!req.complete || err.code === ErrorCode.PayloadTooLarge) res.setHeader('Connection', 'close');
        sendError(res, err.code, err.message);
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
