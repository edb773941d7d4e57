/**
 * The external quote service's settings (`tidepool external-quotes`): spec 01 names the service and
 * its port (:50053); the rest is ours (engine/external/README.md). Precedence and error reporting
 * are the shared loader's (flag > environment variable > config file > default).
 */
import { isIP } from 'node:net';

import { httpServerSchema, loadConfig, serverTlsSchema, setting, type ConfigValues, type LoadedConfig, type LoadOptions } from '../config/index.js';
import { duration, int, num, oneOf, port, str, url } from '../config/index.js';
import { authIssues, authSchema } from '../auth/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { LOG_LEVELS } from '../obs/index.js';
import { DEFAULT_STREAM_LIMITS } from '../quote-grpc/index.js';

export const DEFAULT_EXTERNAL_GRPC_PORT = 50053;
export const DEFAULT_EXTERNAL_METRICS_PORT = 9093;
/** The simulator's /quote (engine/sim/quote-api), on its HTTP port 8890. */
export const DEFAULT_QUOTE_URL = 'http://127.0.0.1:8890/quote';
export const DEFAULT_PROVIDER_RPS = 10;
export const DEFAULT_POLL_INTERVAL_MS = 1000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 2000;
export const DEFAULT_UPTIME_WINDOW_MS = 5 * 60_000;
/** Provider name of a loopback quote URL: the simulator is the only provider that runs there. */
export const SIMULATOR_PROVIDER_NAME = 'simulator';

export const externalSchema = {
  grpcPort: setting({ description: 'gRPC port of tidepool.v1.QuoteService.StreamBatchQuotes', parse: port(), default: DEFAULT_EXTERNAL_GRPC_PORT, env: 'EXTERNAL_QUOTES_GRPC_PORT', flag: 'grpc-port' }),
  host: setting({ description: 'bind address of the gRPC and metrics ports', parse: str({ nonEmpty: true }), default: '127.0.0.1', env: 'EXTERNAL_QUOTES_HOST', flag: 'host' }),
  quoteUrl: setting({ description: 'the provider\'s GET /quote URL (Jupiter Swap API shape; query parameters in it are kept)', parse: url(), default: DEFAULT_QUOTE_URL, env: 'EXTERNAL_QUOTE_URL', flag: 'quote-url' }),
  apiKey: setting({ description: 'API key sent as x-api-key (empty: none)', parse: str(), default: '', env: 'EXTERNAL_QUOTE_API_KEY', flag: 'api-key', secret: true }),
  rateLimitRps: setting({ description: 'requests per second to the provider, at most (evenly paced)', parse: num({ min: 0, exclusiveMin: true, max: 10_000 }), default: DEFAULT_PROVIDER_RPS, env: 'EXTERNAL_QUOTE_RATE_LIMIT_RPS', flag: 'rate-limit-rps' }),
  pollInterval: setting({ description: 'least time between two polls of the same pair', parse: duration({ min: 1 }), default: DEFAULT_POLL_INTERVAL_MS, env: 'EXTERNAL_QUOTE_POLL_INTERVAL', flag: 'poll-interval' }),
  requestTimeout: setting({ description: 'deadline of one provider request (connect to last byte)', parse: duration({ min: 1 }), default: DEFAULT_REQUEST_TIMEOUT_MS, env: 'EXTERNAL_QUOTE_REQUEST_TIMEOUT', flag: 'request-timeout' }),
  providerName: setting({ description: 'provider name in quotes and /health (empty: the URL host, "simulator" for loopback)', parse: str(), default: '', env: 'EXTERNAL_QUOTE_PROVIDER_NAME', flag: 'provider-name' }),
  uptimeWindow: setting({ description: 'window of the provider uptime ratio', parse: duration({ min: 1000 }), default: DEFAULT_UPTIME_WINDOW_MS, env: 'EXTERNAL_QUOTE_UPTIME_WINDOW', flag: 'uptime-window' }),
  'stream.maxStreamsPerClient': setting({ description: 'open StreamBatchQuotes calls per client (verified JWT subject with auth on, else address) at most; past it RESOURCE_EXHAUSTED', parse: int({ min: 1, max: 100_000 }), default: DEFAULT_STREAM_LIMITS.maxStreamsPerClient, env: 'EXTERNAL_QUOTES_STREAM_MAX_STREAMS_PER_CLIENT', flag: 'stream-max-streams-per-client' }),
  'stream.maxStreams': setting({ description: 'open StreamBatchQuotes calls of the server at most; past it RESOURCE_EXHAUSTED', parse: int({ min: 1, max: 100_000 }), default: DEFAULT_STREAM_LIMITS.maxStreams, env: 'EXTERNAL_QUOTES_STREAM_MAX_STREAMS', flag: 'stream-max-streams' }),
  'stream.maxPairsPerStream': setting({ description: 'pairs per StreamBatchQuotes call at most; past it INVALID_ARGUMENT', parse: int({ min: 1, max: 1000 }), default: DEFAULT_STREAM_LIMITS.maxPairsPerStream, env: 'EXTERNAL_QUOTES_STREAM_MAX_PAIRS_PER_STREAM', flag: 'stream-max-pairs-per-stream' }),
  'stream.minInterval': setting({ description: 'least update_interval_ms a StreamBatchQuotes call may ask (0 still means 1 s); below it INVALID_ARGUMENT', parse: duration({ min: 10 }), default: DEFAULT_STREAM_LIMITS.minIntervalMs, env: 'EXTERNAL_QUOTES_STREAM_MIN_INTERVAL', flag: 'stream-min-interval' }),
  'metrics.port': setting({ description: 'HTTP port of GET /metrics (Prometheus) and GET /health', parse: port(), default: DEFAULT_EXTERNAL_METRICS_PORT, env: 'EXTERNAL_QUOTES_METRICS_PORT', flag: 'metrics-port' }),
  'log.level': setting({ description: 'log level', parse: oneOf(LOG_LEVELS), default: 'info' as (typeof LOG_LEVELS)[number], env: 'LOG_LEVEL', flag: 'log-level' }),
  /** JWT bearer auth of StreamBatchQuotes (engine/auth). */
  ...authSchema,
  /** Timeouts and connection cap of the metrics port (node:http; engine/obs createLimitedServer). */
  ...httpServerSchema,
  /** TLS on the gRPC port (tls.certFile / tls.keyFile; engine/config server-tls-settings.ts); the metrics port stays plain. */
  ...serverTlsSchema,
};

export type ExternalQuotesConfig = ConfigValues<typeof externalSchema>;

/** The defaults, as a complete configuration (tests override what they need). */
export function defaultExternalConfig(overrides: Partial<ExternalQuotesConfig> = {}): ExternalQuotesConfig {
  return { ...loadConfig(externalSchema, { env: {} }).values, ...overrides };
}

function isLoopback(hostname: string): boolean {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare === '::1';
}

/** The configured provider name, or the quote URL's host ("simulator" for a loopback host). */
export function providerNameOf(config: Pick<ExternalQuotesConfig, 'providerName' | 'quoteUrl'>): string {
  if (config.providerName.trim() !== '') return config.providerName.trim();
  const { hostname } = new URL(config.quoteUrl);
  return isLoopback(hostname) ? SIMULATOR_PROVIDER_NAME : hostname;
}

/**
 * Loads and validates the settings, including the checks that span settings. Throws
 * TpError(TP_ERR_CONFIG_INVALID) naming every offending setting.
 */
export function loadExternalConfig(options: LoadOptions = {}): LoadedConfig<typeof externalSchema> {
  const loaded = loadConfig(externalSchema, options);
  const v = loaded.values;
  const issues: string[] = [];
  if (v.grpcPort !== 0 && v.grpcPort === v['metrics.port']) {
    issues.push(`metrics.port: ${v['metrics.port']} is also the gRPC port (EXTERNAL_QUOTES_GRPC_PORT)`);
  }
  issues.push(...authIssues(v, v.host));
  if (issues.length > 0) {
    throw new TpError(ErrorCode.ConfigInvalid, `invalid configuration:\n  ${issues.join('\n  ')}`, { context: { issues } });
  }
  return loaded;
}
