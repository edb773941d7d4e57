/**
 * The quote service's settings: every field and environment variable of spec 02's "Quote service
 * configuration", plus the ones the spec leaves unnamed (bind host, metrics port, RPC fallback
 * deadline, heap profiling, log level). Precedence and error reporting are the shared loader's
 * (flag > environment variable > config file > default; docs/architecture.md §3).
 */
import { busAuthSchema, healthSchema, heapProfileSchema, serverTlsSchema, httpServerSchema, loadConfig, setting, type ConfigValues, type LoadedConfig, type LoadOptions } from '../config/index.js';
import { bool, busServer, duration, int, jetStreamName, num, oneOf, port, SettingIssue, str, uniqueList, url, type SettingParser } from '../config/index.js';
import { isPubkey } from '../chain/index.js';
import { authIssues, authSchema } from '../auth/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { DEFAULT_MAX_QUOTE_AGE_SLOTS } from '../swap-builder/index.js';
import { LOG_LEVELS } from '../obs/index.js';
import {
  DEFAULT_CACHE_FIRST_TIMEOUT_MS,
  DEFAULT_FALLBACK_BACKOFF_MAX_MS,
  DEFAULT_FALLBACK_CONCURRENCY,
  DEFAULT_FALLBACK_DEADLINE_MS,
  DEFAULT_FALLBACK_RPS,
  DEFAULT_INTERMEDIATE_MINTS,
  DEFAULT_RATE_LIMIT_MAX_BYTES,
  DEFAULT_SHED_DELAY_MS,
  DEFAULT_SHED_UTILIZATION,
  DEFAULT_SLIPPAGE_BPS,
  MAX_SLIPPAGE_BPS,
} from '../quote/index.js';


import {
  DEFAULT_GRPC_PORT,
  DEFAULT_MAX_PAIRS_PER_STREAM,
  DEFAULT_MAX_QUOTES_PER_SECOND_PER_CLIENT,
  DEFAULT_MAX_STREAMS,
  DEFAULT_MAX_STREAMS_PER_CLIENT,
  DEFAULT_MIN_STREAM_INTERVAL_MS,
  MAX_STREAM_PAIRS,
  MIN_STREAM_INTERVAL_MS,
} from '../quote-grpc/index.js';


export const DEFAULT_QUOTE_PORT = 8080;
export const DEFAULT_QUOTE_METRICS_PORT = 9090;

/** The simulator's GET /quote (engine/sim/quote-api, HTTP port 8890): the external fallback's default. */
export const DEFAULT_EXTERNAL_QUOTE_URL = 'http://127.0.0.1:8890/quote';
/** Deadline of one external-aggregator fallback. */
export const DEFAULT_EXTERNAL_FALLBACK_TIMEOUT_MS = 2000;
/** Intermediate tokens a two-hop route may go through, at most (each costs the route search two legs). */
export const MAX_INTERMEDIATE_MINTS = 8;

/** A mint address: base58 of 32 bytes. */
const mint = (): SettingParser<string> => (raw) => {
  if (typeof raw !== 'string' || !isPubkey(raw.trim())) throw new SettingIssue(`expected a base58 mint address, got ${JSON.stringify(raw)}`);
  return raw.trim();
};

/** The intermediate mints: a list of mints, or `none` (direct routes only; an empty variable reads as unset). */
const intermediateMints = (): SettingParser<string[]> => {
  const mints = uniqueList(mint(), { max: MAX_INTERMEDIATE_MINTS });
  return (raw) => (typeof raw === 'string' && raw.trim().toLowerCase() === 'none' ? [] : mints(raw));
};

/** Seconds as spec 02 writes them (`REFRESH_SECONDS 30`): a positive integer. */
const seconds = (): SettingParser<number> => int({ min: 1, max: 86_400 });

export const quoteSchema = {
  port: setting({ description: 'quote HTTP port (GET /quote, /health, /metrics, /debug/pprof/heap)', parse: port(), default: DEFAULT_QUOTE_PORT, env: 'PORT', flag: 'port' }),
  'grpc.port': setting({ description: 'gRPC port of the local upstream quote stream (tidepool.v1.QuoteService.StreamBatchQuotes); 0: any free port', parse: port(), default: DEFAULT_GRPC_PORT, env: 'GRPC_PORT', flag: 'grpc-port' }),
  ...serverTlsSchema,
  host: setting({ description: 'bind address of the HTTP and metrics ports', parse: str({ nonEmpty: true }), default: '127.0.0.1', env: 'QUOTE_HOST', flag: 'host' }),
  refreshSeconds: setting({ description: 'seconds between background refreshes (spec 02 RefreshSeconds)', parse: seconds(), default: 30, env: 'REFRESH_SECONDS', flag: 'refresh-seconds' }),
  slippageBps: setting({ description: 'slippage tolerance in basis points of a quote that names none (spec 02 SlippageBps): its minimum output (ExactIn) or maximum input (ExactOut)', parse: int({ min: 0, max: MAX_SLIPPAGE_BPS }), default: DEFAULT_SLIPPAGE_BPS, env: 'SLIPPAGE_BPS', flag: 'slippage-bps' }),
  rateLimitRps: setting({ description: 'requests per second per client (token bucket, burst 2 x rate)', parse: num({ min: 0, exclusiveMin: true }), default: 20, env: 'RATE_LIMIT_RPS', flag: 'rate-limit-rps' }),
  'rateLimit.maxBytes': setting({ description: 'memory bound of the rate limiter (its per-client buckets), in bytes; the oldest clients are forgotten past it', parse: int({ min: 4096, max: 1024 * 1024 * 1024 }), default: DEFAULT_RATE_LIMIT_MAX_BYTES, env: 'RATE_LIMIT_MAX_BYTES', flag: 'rate-limit-max-bytes' }),
  'stream.maxStreamsPerClient': setting({ description: 'open quote streams (StreamBatchQuotes) per client (verified JWT subject with auth on, else address) at most; past it RESOURCE_EXHAUSTED', parse: int({ min: 1, max: 100_000 }), default: DEFAULT_MAX_STREAMS_PER_CLIENT, env: 'STREAM_MAX_STREAMS_PER_CLIENT', flag: 'stream-max-streams-per-client' }),
  'stream.maxStreams': setting({ description: 'open quote streams of the server at most; past it RESOURCE_EXHAUSTED', parse: int({ min: 1, max: 100_000 }), default: DEFAULT_MAX_STREAMS, env: 'STREAM_MAX_STREAMS', flag: 'stream-max-streams' }),
  'stream.maxPairsPerStream': setting({ description: 'pairs per quote stream at most (quote.proto allows 1,000); past it INVALID_ARGUMENT', parse: int({ min: 1, max: MAX_STREAM_PAIRS }), default: DEFAULT_MAX_PAIRS_PER_STREAM, env: 'STREAM_MAX_PAIRS_PER_STREAM', flag: 'stream-max-pairs-per-stream' }),
  'stream.minInterval': setting({ description: 'least update_interval_ms a quote stream may ask (0 still means 1 s); below it INVALID_ARGUMENT', parse: duration({ min: MIN_STREAM_INTERVAL_MS }), default: DEFAULT_MIN_STREAM_INTERVAL_MS, env: 'STREAM_MIN_INTERVAL', flag: 'stream-min-interval' }),
  'stream.maxQuotesPerSecondPerClient': setting({ description: 'quotes a second computed and pushed for all the quote streams of one client together (token bucket, burst a tenth of a second); past it the pushes wait, coalesced to the latest per pair', parse: num({ min: 0, exclusiveMin: true }), default: DEFAULT_MAX_QUOTES_PER_SECOND_PER_CLIENT, env: 'STREAM_MAX_QUOTES_PER_SECOND_PER_CLIENT', flag: 'stream-max-quotes-per-second-per-client' }),
  'stream.shedDelay': setting({ description: 'event-loop delay (p99 over 250 ms) above which quote streams shed their interval pushes', parse: duration({ min: 1 }), default: DEFAULT_SHED_DELAY_MS, env: 'STREAM_SHED_DELAY', flag: 'stream-shed-delay' }),
  'stream.shedUtilization': setting({ description: 'event-loop utilization (0 to 1, over 250 ms) above which quote streams shed their interval pushes', parse: num({ min: 0, max: 1, exclusiveMin: true }), default: DEFAULT_SHED_UTILIZATION, env: 'STREAM_SHED_UTILIZATION', flag: 'stream-shed-utilization' }),
  'rpc.endpoints': setting({ description: 'Solana JSON-RPC endpoints used by the RPC fallback', parse: uniqueList(url()), default: [] as string[], env: 'RPC_ENDPOINTS', flag: 'rpc-endpoints' }),
  'rpc.fallbackDeadline': setting({ description: 'deadline of one RPC fallback quote; past it the answer is 504', parse: duration({ min: 1 }), default: DEFAULT_FALLBACK_DEADLINE_MS, env: 'RPC_FALLBACK_DEADLINE', flag: 'rpc-fallback-deadline' }),
  'rpc.fallbackConcurrency': setting({ description: 'RPC fallback reads in flight at most, for the whole process; one more is refused (503)', parse: int({ min: 1, max: 10_000 }), default: DEFAULT_FALLBACK_CONCURRENCY, env: 'RPC_FALLBACK_CONCURRENCY', flag: 'rpc-fallback-concurrency' }),
  'rpc.fallbackRps': setting({ description: 'RPC fallback reads started per second at most, for the whole process (identical reads in flight are shared)', parse: num({ min: 0, exclusiveMin: true }), default: DEFAULT_FALLBACK_RPS, env: 'RPC_FALLBACK_RPS', flag: 'rpc-fallback-rps' }),
  'rpc.fallbackBackoffMax': setting({ description: 'longest pause of the RPC fallback after failed reads (250 ms doubled per consecutive failure, one probe read after each pause)', parse: duration({ min: 1 }), default: DEFAULT_FALLBACK_BACKOFF_MAX_MS, env: 'RPC_FALLBACK_BACKOFF_MAX', flag: 'rpc-fallback-backoff-max' }),
  'bus.enabled': setting({ description: 'consume pool state updates from the message bus', parse: bool(), default: true, env: 'BUS_ENABLED', flag: 'bus-enabled' }),
  'bus.servers': setting({ description: 'message bus (NATS) servers', parse: uniqueList(busServer()), default: ['nats://127.0.0.1:4222'], env: 'BUS_SERVERS', flag: 'bus-servers' }),
  ...busAuthSchema,
  'bus.streamName': setting({ description: 'JetStream stream of pool state updates', parse: jetStreamName(), default: 'POOL_UPDATES', env: 'BUS_STREAM_NAME', flag: 'bus-stream-name' }),
  'bus.consumerName': setting({ description: 'durable consumer name', parse: jetStreamName(), default: 'quote-service', env: 'BUS_CONSUMER_NAME', flag: 'bus-consumer-name' }),
  'bus.maxAge': setting({ description: 'age after which the stream discards a message', parse: duration({ min: 1000 }), default: 60_000, flag: 'bus-max-age' }),
  'cache.enabled': setting({ description: 'serve quotes from the pool cache; false: RPC only', parse: bool(), default: true, env: 'CACHE_ENABLED', flag: 'cache-enabled' }),
  'cache.stalenessThreshold': setting({ description: 'age past which a cached pool is stale', parse: duration(), default: 30_000, env: 'CACHE_STALENESS_THRESHOLD', flag: 'cache-staleness-threshold' }),
  'cache.maxPoolCount': setting({ description: 'pools kept in the cache (least recently updated evicted past it)', parse: int({ min: 1, max: 1_000_000 }), default: 1000, env: 'CACHE_MAX_POOL_COUNT', flag: 'cache-max-pool-count' }),
  'cache.evictionInterval': setting({ description: 'interval of the eviction tick that removes stale pools', parse: duration({ min: 1 }), default: 60_000, flag: 'cache-eviction-interval' }),
  'hybridMode.enabled': setting({ description: 'fall back to RPC when the cache cannot answer', parse: bool(), default: true, env: 'HYBRID_MODE', flag: 'hybrid-mode' }),
  'hybridMode.cacheFirstTimeout': setting({ description: 'a cache attempt slower than this counts as a circuit breaker failure', parse: duration(), default: DEFAULT_CACHE_FIRST_TIMEOUT_MS, env: 'CACHE_FIRST_TIMEOUT', flag: 'cache-first-timeout' }),
  'hybridMode.validateInterval': setting({ description: 'interval of the cache-versus-RPC validation', parse: duration({ min: 1000 }), default: 300_000, flag: 'validate-interval' }),
  'swap.maxQuoteAgeSlots': setting({ description: 'POST /swap/v1/swap and /swap-instructions refuse a quote older than this many slots (its contextSlot against the RPC node\'s slot)', parse: int({ min: 1, max: 100_000 }), default: DEFAULT_MAX_QUOTE_AGE_SLOTS, env: 'SWAP_MAX_QUOTE_AGE_SLOTS', flag: 'swap-max-quote-age-slots' }),
  'swap.lookupTables': setting({ description: 'address lookup tables swaps that do not fit without them are compiled with (v0); tables you keep with the pools\' accounts', parse: uniqueList(str({ nonEmpty: true })), default: [] as string[], env: 'SWAP_LOOKUP_TABLES', flag: 'swap-lookup-tables' }),
  'routes.intermediateMints': setting({ description: 'intermediate tokens of two-hop routes (mints, comma separated; none: direct routes only)', parse: intermediateMints(), default: [...DEFAULT_INTERMEDIATE_MINTS], env: 'INTERMEDIATE_MINTS', flag: 'intermediate-mints' }),
  'externalFallback.enabled': setting({ description: 'after the cache and the RPC fallback, ask the external aggregator (externalFallback.quoteUrl)', parse: bool(), default: true, env: 'EXTERNAL_FALLBACK', flag: 'external-fallback' }),
  'externalFallback.quoteUrl': setting({ description: 'the external aggregator\'s GET /quote URL for the last fallback (Jupiter Swap API shape; the simulator\'s by default)', parse: url(), default: DEFAULT_EXTERNAL_QUOTE_URL, env: 'EXTERNAL_FALLBACK_URL', flag: 'external-fallback-url' }),
  'externalFallback.timeout': setting({ description: 'deadline of one external-aggregator fallback', parse: duration({ min: 1 }), default: DEFAULT_EXTERNAL_FALLBACK_TIMEOUT_MS, env: 'EXTERNAL_FALLBACK_TIMEOUT', flag: 'external-fallback-timeout' }),
  'metrics.port': setting({ description: 'Prometheus /metrics port (also serves /debug/pprof/heap)', parse: port(), default: DEFAULT_QUOTE_METRICS_PORT, env: 'METRICS_PORT', flag: 'metrics-port' }),
  ...heapProfileSchema,
  'log.level': setting({ description: 'log level', parse: oneOf(LOG_LEVELS), default: 'info' as (typeof LOG_LEVELS)[number], env: 'LOG_LEVEL', flag: 'log-level' }),
  /** JWT bearer auth of the gRPC stream (engine/auth). */
  ...authSchema,
  /** Timeouts and connection cap of the metrics port (node:http; engine/obs createLimitedServer). */
  ...httpServerSchema,
  /** /health judges recent answers (engine/config health-settings.ts). */
  ...healthSchema,
};

export type QuoteServiceConfig = ConfigValues<typeof quoteSchema>;

/** The defaults, as a complete configuration (tests override what they need). */
export function defaultQuoteConfig(overrides: Partial<QuoteServiceConfig> = {}): QuoteServiceConfig {
  return { ...loadConfig(quoteSchema, { env: {} }).values, ...overrides };
}

/**
 * Loads and validates the quote service's settings, including the checks that span settings.
 * Throws TpError(TP_ERR_CONFIG_INVALID) naming every offending setting.
 */
export function loadQuoteConfig<S extends typeof quoteSchema = typeof quoteSchema>(options: LoadOptions = {}, schema: S = quoteSchema as S): LoadedConfig<S> {
  const loaded = loadConfig(schema, options);
  const v = loaded.values as QuoteServiceConfig;
  const issues: string[] = [];
  if (!v['cache.enabled'] && v['rpc.endpoints'].length === 0) {
    issues.push('cache.enabled: false leaves only the RPC fallback, but rpc.endpoints (RPC_ENDPOINTS) is empty: nothing could answer a quote');
  }
  if (v.port !== 0 && v.port === v['metrics.port']) {
    issues.push(`metrics.port: ${v['metrics.port']} is also the quote port (PORT)`);
  }
  if (v['grpc.port'] !== 0 && (v['grpc.port'] === v.port || v['grpc.port'] === v['metrics.port'])) {
    issues.push(`grpc.port: ${v['grpc.port']} is also the ${v['grpc.port'] === v.port ? 'quote port (PORT)' : 'metrics port (METRICS_PORT)'}`);
  }
  issues.push(...authIssues(v, v.host));
  if (issues.length > 0) {
    throw new TpError(ErrorCode.ConfigInvalid, `invalid configuration:\n  ${issues.join('\n  ')}`, { context: { issues } });
  }
  return loaded;
}
