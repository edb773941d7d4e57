/**
 * The aggregator's settings: every flag and environment variable of spec 01 ("Configuration"),
 * plus the ones it leaves unnamed (bind host, default provider uptime, bus switch, oracle feed,
 * upstream update interval, shutdown timeout, log level). Precedence and error reporting are the
 * shared loader's (flag > environment variable > config file > default; docs/architecture.md §3).
 * OTEL_EXPORTER_OTLP_ENDPOINT is read by engine/obs/tracing.ts, not here.
 */
import { busAuthSchema, healthSchema, httpServerSchema, loadConfig, serverTlsSchema, upstreamTlsSchema, setting, type ConfigValues, type LoadedConfig, type LoadOptions } from '../config/index.js';
import { bool, busServer, duration, int, num, oneOf, port, str, upstreamAddress, url } from '../config/index.js';
import { parseUpstreamAddress, upstreamTargetsOf } from '../config/index.js';
import { authIssues, authSchema } from '../auth/index.js';
import { streamSizeSchema } from '../bus/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { LOG_LEVELS } from '../obs/index.js';
import { DEFAULT_STREAM_LIMITS } from '../quote-grpc/index.js';

/** Spec 01 ports and upstream defaults. */
export const DEFAULT_AGGREGATOR_HTTP_PORT = 8080;
export const DEFAULT_AGGREGATOR_GRPC_PORT = 50051;
export const DEFAULT_LOCAL_QUOTE_ADDR = 'localhost:50052';
export const DEFAULT_EXTERNAL_QUOTE_ADDR = 'localhost:50053';
/** Spec 01 Limits: GetAggregatedQuote answers within 150 ms, whatever the per-source timeouts say. */
export const GET_AGGREGATED_QUOTE_TIMEOUT_MS = 150;

export const aggregatorSchema = {
  httpPort: setting({ description: 'HTTP port (GET /health, /stats, /metrics)', parse: port(), default: DEFAULT_AGGREGATOR_HTTP_PORT, env: 'AGGREGATOR_HTTP_PORT', flag: 'http-port' }),
  grpcPort: setting({ description: 'gRPC port of QuoteAggregatorService', parse: port(), default: DEFAULT_AGGREGATOR_GRPC_PORT, env: 'AGGREGATOR_GRPC_PORT', flag: 'grpc-port' }),
  host: setting({ description: 'bind address of the gRPC and HTTP ports', parse: str({ nonEmpty: true }), default: '127.0.0.1', env: 'AGGREGATOR_HOST', flag: 'host' }),
  localQuoteAddr: setting({ description: 'local quote service (StreamBatchQuotes), host:port; https:// or grpcs:// before it for TLS, http:// or grpc:// for plaintext, none: as tls.upstream says', parse: upstreamAddress(), default: DEFAULT_LOCAL_QUOTE_ADDR, env: 'LOCAL_QUOTE_SERVICE_ADDR', flag: 'local-quote-addr' }),
  externalQuoteAddr: setting({ description: 'external quote service (StreamBatchQuotes), host:port; https:// or grpcs:// before it for TLS, http:// or grpc:// for plaintext, none: as tls.upstream says', parse: upstreamAddress(), default: DEFAULT_EXTERNAL_QUOTE_ADDR, env: 'EXTERNAL_QUOTE_SERVICE_ADDR', flag: 'external-quote-addr' }),
  busUrl: setting({ description: 'message bus (NATS) URL for SwapRouteEvent publishing', parse: busServer(), default: 'nats://localhost:4222', env: 'BUS_URL', flag: 'bus-url' }),
  ...busAuthSchema,
  /** The MARKET_SWAP_ROUTES stream's 5 GiB, scaled (BUS_STREAM_MAX_BYTES_SCALE; engine/bus platform-streams.ts). */
  busStreamMaxBytesScale: streamSizeSchema['bus.streamMaxBytesScale'],
  busEnabled: setting({ description: 'publish SwapRouteEvents to the bus; false: count them as dropped', parse: bool(), default: true, env: 'BUS_ENABLED', flag: 'bus-enabled' }),
  localTimeout: setting({ description: 'how long GetAggregatedQuote waits for the local quote', parse: duration({ min: 1 }), default: 10, env: 'LOCAL_TIMEOUT', flag: 'local-timeout' }),
  externalTimeout: setting({ description: 'how long GetAggregatedQuote waits for the external quote', parse: duration({ min: 1 }), default: 100, env: 'EXTERNAL_TIMEOUT', flag: 'external-timeout' }),
  enableConfidenceScoring: setting({ description: 'score quotes with the 5-factor confidence; false: best = larger output', parse: bool(), default: true, env: 'ENABLE_CONFIDENCE_SCORING', flag: 'enable-confidence-scoring' }),
  defaultProviderUptime: setting({ description: 'provider uptime (fraction) for quotes that report none', parse: num({ min: 0, max: 1 }), default: 0.95, env: 'DEFAULT_PROVIDER_UPTIME', flag: 'default-provider-uptime' }),
  oracleUrl: setting({ description: 'oracle price feed (confidence oracle factor)', parse: url(), default: 'http://127.0.0.1:8890/price/v3', env: 'ORACLE_URL', flag: 'oracle-url' }),
  upstreamUpdateInterval: setting({ description: 'update_interval_ms asked of the upstreams; held quotes expire after max(3 x this, 2s)', parse: duration({ min: 10 }), default: 1000, env: 'UPSTREAM_UPDATE_INTERVAL', flag: 'upstream-update-interval' }),
  streamMaxStreamsPerClient: setting({ description: 'open StreamAggregatedQuotes calls per client (verified JWT subject with auth on, else address) at most; past it RESOURCE_EXHAUSTED', parse: int({ min: 1, max: 100_000 }), default: DEFAULT_STREAM_LIMITS.maxStreamsPerClient, env: 'AGGREGATOR_STREAM_MAX_STREAMS_PER_CLIENT', flag: 'stream-max-streams-per-client' }),
  streamMaxStreams: setting({ description: 'open StreamAggregatedQuotes calls of the server at most; past it RESOURCE_EXHAUSTED', parse: int({ min: 1, max: 100_000 }), default: DEFAULT_STREAM_LIMITS.maxStreams, env: 'AGGREGATOR_STREAM_MAX_STREAMS', flag: 'stream-max-streams' }),
  streamMaxPairsPerStream: setting({ description: 'pairs per StreamAggregatedQuotes call at most; past it INVALID_ARGUMENT', parse: int({ min: 1, max: 1000 }), default: DEFAULT_STREAM_LIMITS.maxPairsPerStream, env: 'AGGREGATOR_STREAM_MAX_PAIRS_PER_STREAM', flag: 'stream-max-pairs-per-stream' }),
  streamMinInterval: setting({ description: 'least update_interval_ms a StreamAggregatedQuotes call may ask (0 still means 1 s); below it INVALID_ARGUMENT', parse: duration({ min: 10 }), default: DEFAULT_STREAM_LIMITS.minIntervalMs, env: 'AGGREGATOR_STREAM_MIN_INTERVAL', flag: 'stream-min-interval' }),
  streamShedDelay: setting({ description: 'event-loop delay (p99 over 250 ms) above which the streams skip their interval re-sends', parse: duration({ min: 1 }), default: 20, env: 'AGGREGATOR_STREAM_SHED_DELAY', flag: 'stream-shed-delay' }),
  streamShedUtilization: setting({ description: 'event-loop utilization (0 to 1) above which the streams skip their interval re-sends', parse: num({ min: 0, max: 1, exclusiveMin: true }), default: 0.85, env: 'AGGREGATOR_STREAM_SHED_UTILIZATION', flag: 'stream-shed-utilization' }),
  shutdownTimeout: setting({ description: 'graceful shutdown budget (streams, upstreams, publisher flush)', parse: duration({ min: 0 }), default: 5000, env: 'SHUTDOWN_TIMEOUT', flag: 'shutdown-timeout' }),
  'log.level': setting({ description: 'log level', parse: oneOf(LOG_LEVELS), default: 'info' as (typeof LOG_LEVELS)[number], env: 'LOG_LEVEL', flag: 'log-level' }),
  upstreamToken: setting({ description: 'JWT sent as `authorization: Bearer` to both upstream quote services (empty: none)', parse: str(), default: '', env: 'TIDEPOOL_JWT_TOKEN', flag: 'upstream-token', secret: true }),
  /** JWT bearer auth of QuoteAggregatorService (engine/auth). */
  ...authSchema,
  /** Timeouts and connection cap of the HTTP port (node:http; engine/obs createLimitedServer). */
  ...httpServerSchema,
  /** Upstreams whose quotes are mostly errors count as unhealthy (engine/config health-settings.ts). */
  ...healthSchema,
  /** TLS on the gRPC and HTTP ports (tls.certFile / tls.keyFile; engine/config server-tls-settings.ts). */
  ...serverTlsSchema,
  /** TLS towards the quote services whose address has no scheme, and the CA of the TLS ones (tls.upstream / tls.upstreamCaFile). */
  ...upstreamTlsSchema,
};

export type AggregatorConfig = ConfigValues<typeof aggregatorSchema>;

/** The defaults as a complete configuration (tests override what they need). */
export function defaultAggregatorConfig(overrides: Partial<AggregatorConfig> = {}): AggregatorConfig {
  return { ...loadConfig(aggregatorSchema, { env: {} }).values, ...overrides };
}

/** Whether two upstream addresses reach the same host:port, whatever their schemes say. */
function sameUpstream(a: string, b: string): boolean {
  const x = parseUpstreamAddress(a);
  const y = parseUpstreamAddress(b);
  return typeof x !== 'string' && typeof y !== 'string' ? x.hostPort === y.hostPort : a === b;
}

/** Loads and validates the settings, including checks across settings. Throws TP_ERR_CONFIG_INVALID. */
export function loadAggregatorConfig(options: LoadOptions = {}): LoadedConfig<typeof aggregatorSchema> {
  const loaded = loadConfig(aggregatorSchema, options);
  const v = loaded.values;
  const issues: string[] = [];
  if (v.httpPort !== 0 && v.httpPort === v.grpcPort) issues.push(`httpPort: ${v.httpPort} is also the gRPC port (-grpc-port)`);
  if (sameUpstream(v.localQuoteAddr, v.externalQuoteAddr)) issues.push(`externalQuoteAddr: ${v.externalQuoteAddr} is also the local quote address`);
  // A CA file no upstream would use, or one that cannot be read, stops the aggregator at start.
  try {
    upstreamTargetsOf(v, { localQuoteAddr: v.localQuoteAddr, externalQuoteAddr: v.externalQuoteAddr });
  } catch (err) {
    issues.push(err instanceof Error ? err.message : String(err));
  }
  issues.push(...authIssues(v, v.host));
  if (issues.length > 0) {
    throw new TpError(ErrorCode.ConfigInvalid, `invalid configuration:\n  ${issues.join('\n  ')}`, { context: { issues } });
  }
  return loaded;
}
