/**
 * Binding and closing a node:http server the same way everywhere (the metrics ports, the scanner's
 * health port): a bind failure becomes TpError(TP_ERR_IO) naming what could not listen, and close
 * also ends keep-alive connections so a SIGTERM does not wait for idle scrapers.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { ErrorCode, TpError } from '../errors.js';

/** Binds `port` (0: any free port) on `host`; resolves with the bound port. */
export function listenOn(server: Server, host: string, port: number, what: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(new TpError(ErrorCode.Io, `${what} cannot listen on ${host}:${port}: ${err.message}`, { cause: err, context: { host, port } }));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/**
 * Binds one of a service's serving ports with `bind` (resolving with the bound port). A service
 * host passes its own (`ServiceHost.listen`: a failure is TP_ERR_IO naming `port.setting`);
 * `bindAsIs` binds without it.
 */
export type BindPort = (port: { what: string; host: string; port: number; setting: string }, bind: () => Promise<number>) => Promise<number>;

/** Binds as is (a service run without a host). */
export const bindAsIs: BindPort = (_port, bind) => bind();

/** Stops listening and closes idle and open connections. Idempotent. */
export function closeServer(server: Server): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * The path and query of a request, never throwing: `new URL(req.url, base)` throws on a request
 * target such as `//[`, which in a request handler is an uncaught exception that ends the process.
 */
export function requestTarget(req: IncomingMessage): { path: string; query: URLSearchParams } {
  const target = req.url ?? '/';
  const q = target.indexOf('?');
  return q < 0 ? { path: target, query: new URLSearchParams() } : { path: target.slice(0, q), query: new URLSearchParams(target.slice(q + 1)) };
}
