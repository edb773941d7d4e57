/**
 * The limits every node:http server of the engine runs with (issue 11, item 9: the metrics ports,
 * the scanner's health port, the aggregator's and the external service's HTTP ports). Node's own
 * defaults hold a slowloris socket (headers sent a byte at a time) for 60 s and an idle keep-alive
 * socket for 5 s with no cap on connections; with a few thousand such sockets one client can
 * exhaust the process's descriptors. `applyHttpLimits` is the one place they are set:
 * - headersTimeout: the whole request head must arrive within it, else the socket is closed
 *   (Node answers 408 when it can);
 * - requestTimeout: the whole request, body included;
 * - keepAliveTimeout: how long an idle keep-alive socket is kept between requests (Node 20 adds a
 *   1 s grace against races with clients reusing the socket);
 * - maxConnections: sockets beyond it are refused (closed at accept).
 * The values come from the `http.*` settings (engine/config/http-server-settings.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';

export interface HttpServerLimits {
  /** ms for the request head (request line and headers). */
  headersTimeoutMs: number;
  /** ms for the whole request, body included; at least headersTimeoutMs. */
  requestTimeoutMs: number;
  /** ms an idle keep-alive socket is kept open. */
  keepAliveTimeoutMs: number;
  /** Open sockets at most; more are closed at accept. */
  maxConnections: number;
}

/**
 * Sets the limits on `server` (before or after listen). Node checks both request timeouts on a
 * timer of `connectionsCheckingInterval` (30 s by default, fixed at construction), so a server
 * should be made by `createLimitedServer` for timeouts shorter than that to be enforced promptly.
 */
export function applyHttpLimits(server: Server, limits: HttpServerLimits): void {
  server.headersTimeout = limits.headersTimeoutMs;
  // Node requires requestTimeout >= headersTimeout when both are set (0 turns it off).
  server.requestTimeout = Math.max(limits.requestTimeoutMs, limits.headersTimeoutMs);
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.maxConnections = limits.maxConnections;
}

/** How often Node checks header and request timeouts: a quarter of the header timeout, 10 ms to 1 s. */
function connectionsCheckingIntervalOf(limits: HttpServerLimits): number {
  return Math.max(10, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 4)));
}

/**
 * `http.createServer(handler)` with `limits` applied: what every engine node:http server is made by.
 * With `tls` (PEM certificate and key, engine/config server-tls-settings.ts) it is an HTTPS server.
 */
export function createLimitedServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  limits: HttpServerLimits,
  tls?: { cert: string; key: string } | undefined,
): Server {
  const options = { connectionsCheckingInterval: connectionsCheckingIntervalOf(limits) };
  const server: Server = tls === undefined ? createServer(options, handler) : createTlsServer({ ...options, cert: tls.cert, key: tls.key }, handler);
  applyHttpLimits(server, limits);
  return server;
}
