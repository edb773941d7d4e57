/**
 * Settings of `tidepool rpc-proxy`. Spec 03 names five of them (`endpoints`,
 * `max_connections_per_endpoint`, `health_check_interval`, `request_timeout`, `retry_count`); their
 * keys in a config file are the spec's names. The rest are ours, named the same way. Precedence and
 * error reporting are the shared loader's (flag > environment variable > config file > default).
 */
import { authSchema } from '../auth/index.js';
import { duration, int, loadConfig, num, oneOf, port, serverTlsSchema, setting, SettingIssue, str, uniqueList, type ConfigValues, type LoadedConfig, type LoadOptions, type SettingParser } from '../config/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { LOG_LEVELS } from '../obs/index.js';
import { proxyAuthIssues } from './client-auth.js';

/** docs/architecture.md's port of the RPC proxy (spec 03 gives its paths, not a port). */
export const DEFAULT_RPC_PROXY_PORT = 8083;
/** The simulator's JSON-RPC, so that the proxy runs out of the box beside `tidepool sim`. */
export const DEFAULT_RPC_PROXY_ENDPOINTS: readonly string[] = Object.freeze(['http://127.0.0.1:8899']);
export const DEFAULT_MAX_CONNECTIONS_PER_ENDPOINT = 100;
export const DEFAULT_HEALTH_CHECK_INTERVAL_MS = 30_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
export const DEFAULT_RETRY_COUNT = 2;
/** 10 slots, 4 s at 400 ms a slot: a node further behind serves state a trader cannot act on. */
export const DEFAULT_MAX_SLOT_LAG = 10;
export const DEFAULT_FAILURE_THRESHOLD = 3;
/** A Solana node's own request body limit (`MAX_REQUEST_BODY_SIZE`): what passes the proxy passes the node. */
export const DEFAULT_MAX_BODY_BYTES = 50 * 1024;
/** Calls one batch may hold (as RPC providers bound them): a larger batch is refused with one error. */
export const DEFAULT_MAX_BATCH_ITEMS = 100;
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;
/** Calls a second one client may make (token bucket, burst 2 × rate); 0: no limit. */
export const DEFAULT_RATE_LIMIT_RPS = 0;
/**
 * Answer and notification bytes a WebSocket client may leave unread in the proxy before it is
 * disconnected: 300 clients that never read hold at most 300 MiB.
 */
export const DEFAULT_MAX_WS_BUFFERED_BYTES = 1024 * 1024;
/** Endpoints are told apart by a bit each in a 32-bit mask on the request path. */
export const MAX_ENDPOINTS = 32;

/**
 * A list of http(s) (or ws(s)) URLs. Errors name the item by index and never echo the URL: RPC
 * URLs carry API keys in their path or query.
 */
function endpointList(protocols: readonly string[], min: number): SettingParser<string[]> {
  return (raw) => {
    const items = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(/[\s,]+/).filter((s) => s !== '') : null;
    if (items === null) throw new SettingIssue('expected a list of URLs (comma-separated, or a JSON array in a file)');
    if (items.length < min) throw new SettingIssue(`expected at least ${min} URL${min === 1 ? '' : 's'}, got ${items.length}`);
    if (items.length > MAX_ENDPOINTS) throw new SettingIssue(`expected at most ${MAX_ENDPOINTS} URLs, got ${items.length}`);
    const seen = new Set<string>();
    return items.map((item, i) => {
      if (typeof item !== 'string') throw new SettingIssue(`item ${i} is not a URL`);
      let url: URL;
      try {
        url = new URL(item);
      } catch {
        throw new SettingIssue(`item ${i} is not a URL`);
      }
      if (!protocols.includes(url.protocol)) throw new SettingIssue(`item ${i} is not a ${protocols.map((p) => p.slice(0, -1)).join(' or ')} URL`);
      const href = url.href;
      if (seen.has(href)) throw new SettingIssue(`item ${i} is listed twice`);
      seen.add(href);
      return item;
    });
  };
}

export const rpcProxySchema = {
  endpoints: setting({
    description: 'upstream Solana JSON-RPC HTTP URLs, balanced round robin (default the simulator, http://127.0.0.1:8899); never logged: they may carry API keys',
    parse: endpointList(['http:', 'https:'], 1),
    default: [...DEFAULT_RPC_PROXY_ENDPOINTS],
    env: 'RPC_PROXY_ENDPOINTS',
    flag: 'endpoints',
    secret: true,
  }),
  ws_endpoints: setting({
    description: "upstream PubSub WebSocket URLs, one per endpoint in the same order (default: each endpoint's, http→ws, https→wss, port + 1 when the URL names a port, as Solana clients derive it)",
    parse: endpointList(['ws:', 'wss:'], 0),
    default: [] as string[],
    env: 'RPC_PROXY_WS_ENDPOINTS',
    flag: 'ws-endpoints',
    secret: true,
  }),
  max_connections_per_endpoint: setting({ description: 'keep-alive HTTP connections to one endpoint, at most', parse: int({ min: 1, max: 10_000 }), default: DEFAULT_MAX_CONNECTIONS_PER_ENDPOINT, env: 'RPC_PROXY_MAX_CONNECTIONS_PER_ENDPOINT', flag: 'max-connections-per-endpoint' }),
  health_check_interval: setting({ description: 'time between two health checks (getHealth + getSlot) of every endpoint', parse: duration({ min: 10 }), default: DEFAULT_HEALTH_CHECK_INTERVAL_MS, env: 'RPC_PROXY_HEALTH_CHECK_INTERVAL', flag: 'health-check-interval' }),
  request_timeout: setting({ description: 'deadline of one upstream attempt (queueing, connect and answer) and of a health check', parse: duration({ min: 1 }), default: DEFAULT_REQUEST_TIMEOUT_MS, env: 'RPC_PROXY_REQUEST_TIMEOUT', flag: 'request-timeout' }),
  retry_count: setting({ description: 'more attempts of a read, each on another endpoint, after a network error, timeout, HTTP 5xx or 429 (writes are never sent twice)', parse: int({ min: 0, max: 10 }), default: DEFAULT_RETRY_COUNT, env: 'RPC_PROXY_RETRY_COUNT', flag: 'retry-count' }),
  max_slot_lag: setting({ description: 'slots an endpoint may be behind the best endpoint before it is taken out of rotation', parse: int({ min: 0, max: 1_000_000 }), default: DEFAULT_MAX_SLOT_LAG, env: 'RPC_PROXY_MAX_SLOT_LAG', flag: 'max-slot-lag' }),
  failure_threshold: setting({ description: 'consecutive failed requests (network error, timeout, 5xx) that take an endpoint out before its next health check', parse: int({ min: 1, max: 1000 }), default: DEFAULT_FAILURE_THRESHOLD, env: 'RPC_PROXY_FAILURE_THRESHOLD', flag: 'failure-threshold' }),
  max_body_bytes: setting({ description: 'largest request body (POST /rpc) and WebSocket message accepted', parse: int({ min: 256, max: 64 * 1024 * 1024 }), default: DEFAULT_MAX_BODY_BYTES, env: 'RPC_PROXY_MAX_BODY_BYTES', flag: 'max-body-bytes' }),
  max_batch_items: setting({ description: 'calls one JSON-RPC batch may hold; a larger batch is answered with one error, none of its calls sent', parse: int({ min: 1, max: 100_000 }), default: DEFAULT_MAX_BATCH_ITEMS, env: 'RPC_PROXY_MAX_BATCH_ITEMS', flag: 'max-batch-items' }),
  rate_limit_rps: setting({ description: 'calls per second per client (token bucket, burst 2 x rate; keyed by API key, JWT subject, else remote address; an HTTP request or a WebSocket message is one call); over it: HTTP 429 with Retry-After, a JSON-RPC error on the WebSocket; 0: no limit', parse: num({ min: 0 }), default: DEFAULT_RATE_LIMIT_RPS, env: 'RPC_PROXY_RATE_LIMIT_RPS', flag: 'rate-limit-rps' }),
  max_ws_buffered_bytes: setting({ description: 'answer and notification bytes a WebSocket client may leave unread before the proxy disconnects it', parse: int({ min: 64 * 1024, max: 1024 * 1024 * 1024 }), default: DEFAULT_MAX_WS_BUFFERED_BYTES, env: 'RPC_PROXY_MAX_WS_BUFFERED_BYTES', flag: 'max-ws-buffered-bytes' }),
  host: setting({ description: 'bind address', parse: str({ nonEmpty: true }), default: '127.0.0.1', env: 'RPC_PROXY_HOST', flag: 'host' }),
  port: setting({ description: 'port of /rpc, /rpc/ws, /rpc/health, /rpc/metrics, /health, /ready', parse: port(), default: DEFAULT_RPC_PROXY_PORT, env: 'RPC_PROXY_PORT', flag: 'port' }),
  shutdown_timeout: setting({ description: 'on SIGTERM, how long requests in flight may take to finish', parse: duration(), default: DEFAULT_SHUTDOWN_TIMEOUT_MS, env: 'RPC_PROXY_SHUTDOWN_TIMEOUT', flag: 'shutdown-timeout' }),
  'log.level': setting({ description: 'log level', parse: oneOf(LOG_LEVELS), default: 'info' as (typeof LOG_LEVELS)[number], env: 'LOG_LEVEL', flag: 'log-level' }),
  // HTTPS/WSS on the port when tls.certFile / tls.keyFile are set (engine/config server-tls-settings.ts).
  ...serverTlsSchema,
  // Who may call POST /rpc and /rpc/ws (client-auth.ts): on by itself off loopback.
  ...authSchema,
  'auth.apiKeys': setting({ description: 'API keys callers may present (x-api-key header or api-key query parameter) instead of a JWT; comma-separated', parse: uniqueList(str({ nonEmpty: true })), default: [] as string[], env: 'RPC_PROXY_API_KEYS', flag: 'api-keys', secret: true }),
};

export type RpcProxyConfig = ConfigValues<typeof rpcProxySchema>;

/** The defaults, as a complete configuration (tests override what they need). */
export function defaultRpcProxyConfig(overrides: Partial<RpcProxyConfig> = {}): RpcProxyConfig {
  return { ...loadConfig(rpcProxySchema, { env: {} }).values, ...overrides };
}

/**
 * The PubSub URL of an RPC URL as Solana clients derive it (web3.js `makeWebsocketUrl`): http →
 * ws, https → wss, and the next port when the URL names one (8899 → 8900).
 */
export function pubsubUrlOf(rpcUrl: string): string {
  const url = new URL(rpcUrl);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  if (url.port !== '') url.port = String(Number(url.port) + 1);
  return url.href;
}

/** Loads and validates the settings, the checks across settings included. Throws TpError(TP_ERR_CONFIG_INVALID). */
export function loadRpcProxyConfig(options: LoadOptions = {}): LoadedConfig<typeof rpcProxySchema> {
  const loaded = loadConfig(rpcProxySchema, options);
  const v = loaded.values;
  const issues: string[] = [];
  if (v.ws_endpoints.length > 0 && v.ws_endpoints.length !== v.endpoints.length) {
    issues.push(`ws_endpoints: ${v.ws_endpoints.length} URLs for ${v.endpoints.length} endpoints; give one per endpoint, in the same order, or none`);
  }
  issues.push(...proxyAuthIssues(v, v.host));
  if (issues.length > 0) {
    throw new TpError(ErrorCode.ConfigInvalid, `invalid configuration:\n  ${issues.join('\n  ')}`, { context: { issues } });
  }
  return loaded;
}
