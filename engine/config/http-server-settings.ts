/**
 * The `http.*` settings every service with a node:http port shares (issue 11, item 9): header,
 * request and idle timeouts and a connection cap, applied by engine/obs `createLimitedServer` to
 * each of the service's node:http servers (metrics, health, stats ports). The uWS quote port has
 * its own limits (engine/quote).
 */
import { setting, type ConfigValues } from './loader.js';
import { duration, int } from './setting-types.js';

/** What `createLimitedServer` takes (engine/obs HttpServerLimits). */
export interface HttpLimitValues {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
}

export const DEFAULT_HTTP_LIMITS: Readonly<HttpLimitValues> = Object.freeze({
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1_024,
});

export const httpServerSchema = {
  'http.headersTimeout': setting({
    description: 'node:http ports: time a client has to send the request line and headers; a slower (slowloris) socket is closed',
    parse: duration({ min: 1 }),
    default: DEFAULT_HTTP_LIMITS.headersTimeoutMs,
    env: 'HTTP_HEADERS_TIMEOUT',
    flag: 'http-headers-timeout',
  }),
  'http.requestTimeout': setting({
    description: 'node:http ports: time a client has to send the whole request, body included (at least http.headersTimeout)',
    parse: duration({ min: 1 }),
    default: DEFAULT_HTTP_LIMITS.requestTimeoutMs,
    env: 'HTTP_REQUEST_TIMEOUT',
    flag: 'http-request-timeout',
  }),
  'http.keepAliveTimeout': setting({
    description: 'node:http ports: how long an idle keep-alive connection is kept open',
    parse: duration({ min: 1 }),
    default: DEFAULT_HTTP_LIMITS.keepAliveTimeoutMs,
    env: 'HTTP_KEEP_ALIVE_TIMEOUT',
    flag: 'http-keep-alive-timeout',
  }),
  'http.maxConnections': setting({
    description: 'node:http ports: open connections at most per port; more are closed at accept',
    parse: int({ min: 1, max: 1_000_000 }),
    default: DEFAULT_HTTP_LIMITS.maxConnections,
    env: 'HTTP_MAX_CONNECTIONS',
    flag: 'http-max-connections',
  }),
};

/** The limits of a service's loaded `http.*` settings (keys as in `httpServerSchema`, or under a prefix). */
export function httpLimitsOf(values: Partial<ConfigValues<typeof httpServerSchema>>, prefix = ''): HttpLimitValues {
  const v = values as Record<string, number | undefined>;
  return {
    headersTimeoutMs: v[`${prefix}http.headersTimeout`] ?? DEFAULT_HTTP_LIMITS.headersTimeoutMs,
    requestTimeoutMs: v[`${prefix}http.requestTimeout`] ?? DEFAULT_HTTP_LIMITS.requestTimeoutMs,
    keepAliveTimeoutMs: v[`${prefix}http.keepAliveTimeout`] ?? DEFAULT_HTTP_LIMITS.keepAliveTimeoutMs,
    maxConnections: v[`${prefix}http.maxConnections`] ?? DEFAULT_HTTP_LIMITS.maxConnections,
  };
}
