import { Pool } from 'undici';
import { ErrorCode, isTpError, type TpError, invalidArgument } from '../errors.js';

import { maskUrl } from '../secret-mask.js';

/**
 * One JSON-RPC HTTP endpoint as every chain client of the engine opens it (issue 24 item 4): the
 * URL's user info becomes HTTP Basic auth (the connection pool is keyed by the origin, which has no
 * user info, so it would otherwise be dropped), query keys (`?api-key=`) stay in the request path,
 * and `name` is the URL with its secrets masked: the only form of it that goes into errors and logs.
 */
export interface RpcEndpoint {
  /** The URL with its secrets masked (errors, logs, metrics). */
  readonly name: string;
  readonly pool: Pool;
  /** Path and query of the URL (the query keeps an API key). */
  readonly path: string;
  readonly headers: Record<string, string>;
}

export interface RpcEndpointOptions {
  /** Connect, headers and body timeout, each. */
  timeoutMs: number;
  connections: number;
  /** Sent with every request beside the content type and the Basic auth. */
  headers?: Readonly<Record<string, string>>;
}

/** Opens `url` (http or https; TpError ArgumentInvalid naming the masked URL otherwise). */
function notHttpUrl(url: string): TpError {
  const masked = maskUrl(url);
  return invalidArgument('url', masked, `not an http(s) RPC URL: ${masked}`);
}

export function openRpcEndpoint(url: string, options: RpcEndpointOptions): RpcEndpoint {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw notHttpUrl(url);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw notHttpUrl(url);
  return {
    name: maskUrl(url),
    pool: new Pool(u.origin, {
      connections: options.connections,
      keepAliveTimeout: 30_000,
      connectTimeout: options.timeoutMs,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    }),
    path: `${u.pathname}${u.search}`,
    headers: { 'content-type': 'application/json', ...options.headers, ...basicAuthHeader(u) },
  };
}

/** `{authorization: 'Basic ...'}` of a URL's user info; `{}` without one. */
export function basicAuthHeader(url: URL): { authorization?: string } {
  if (url.username === '' && url.password === '') return {};
  const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  return { authorization: `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}` };
}

/**
 * Whether a failed call may succeed at another endpoint: no answer (network, timeout) or a server
 * in trouble (HTTP 429 or 5xx, with or without a JSON-RPC error in its body: providers answer a
 * rate limit with both). A JSON-RPC error on a 200, or a malformed answer, is the node's verdict.
 */
export function failsOver(err: unknown): boolean {
  if (!isTpError(err, ErrorCode.RpcFailed)) return false;
  const f = err.context;
  if (f.kind === 'network' || f.kind === 'timeout') return true;
  return typeof f.httpStatus === 'number' && (f.httpStatus === 429 || f.httpStatus >= 500);
}
