/**
 * engine/quote: the quote service (spec 02): cache path, RPC fallback, circuit breaker, rate
 * limiter, uWebSockets.js HTTP server, metrics port, configuration and the service factory.
 */
export { quoteFromCache } from './cache-quoter.js';
export { QuoteSource, quoteOfAnswer, type Quote, type QuoteAnswer, type RouteHop, type RouteQuote } from './quote-answer.js';
export { INTERNAL_FAILURE, badParameter, isQuoteFailure, quoteFailure, type QuoteFailure } from './quote-failure.js';
export type { QuoteRequest, RouteFilter } from './quote-request.js';
export type { ExternalQuoter, ExternalRoute } from './external-quoter.js';
export { DEFAULT_INTERMEDIATE_MINTS, chooseRoute, routeQuoteOf, type HopChoice, type HopFinder, type PoolFacts } from './route-search.js';
export { ALL_DEXES_MASK, DIRECT_ONLY_BIT, NO_FILTER_KEY, allowsDex, allowsMultiHop, routeFilterKey } from './route-filter.js';
export { CacheRouteSearch, FILTERED_OUT_MESSAGE, type CacheRoute } from './cache-route-search.js';
export { HealthStatus, QuoteEngine, type QuoteEngineOptions, type QuoteHealth, type QuoteResult } from './quote-engine.js';
export { DEFAULT_QUOTE_MEMO_ENTRIES, QuoteMemo, type MemoizedQuote, type QuoteMemoOptions } from './quote-memo.js';
export { QuoteBodyWriter, quoteBodyParts, type QuoteBodyParts } from './quote-body.js';
export { QuoteErrorCode, isQuoteError, quoteError } from './errors.js';
export { STATUS, httpErrorOf, httpErrorOfFailure, type HttpError } from './http-errors.js';
export { DEFAULT_MAX_CLIENTS, DEFAULT_RATE_LIMIT_RPS, RateLimiter, type RateLimiterOptions } from './rate-limiter.js';
export { ValidatedPubkeys, parseQuoteQuery, quoteToJson, type PubkeyCheck } from './quote-json.js';
export { QuoteHttpServer, type QuoteHttpServerOptions } from './quote-http-server.js';
export { DEFAULT_DIRECTORY_MAX_POOLS, PoolDirectory, type PoolIdentity } from './pool-directory.js';
export { RpcQuoter, updateOfLoadedPool, type RpcQuote, type RpcQuoterOptions } from './rpc-quoter.js';
export {
  DEFAULT_CACHE_FIRST_TIMEOUT_MS,
  DEFAULT_EXTERNAL_FALLBACK_TIMEOUT_MS,
  DEFAULT_EXTERNAL_QUOTE_URL,
  DEFAULT_FALLBACK_DEADLINE_MS,
  DEFAULT_GRPC_PORT,
  DEFAULT_QUOTE_METRICS_PORT,
  DEFAULT_QUOTE_PORT,
  defaultQuoteConfig,
  loadQuoteConfig,
  quoteSchema,
  type QuoteServiceConfig,
} from './quote-config.js';
export { createFallbackLoader, fallbackLoaderFromConfig } from './rpc-loader.js';
export { DEFAULT_VALIDATION_SAMPLE_SIZE, PoolValidator, differsFromCache, type PoolValidatorOptions, type ValidationRound } from './pool-validator.js';
export { PoolUpdateHandler, type PoolUpdateHandlerOptions, type PoolUpdateOutcome } from './pool-update-handler.js';
export { createQuoteCache, createQuoteService, type QuoteService, type QuoteServiceDeps, type QuoteServicePorts } from './quote-service.js';
export { DEFAULT_STREAM_SHUTDOWN_TIMEOUT_MS } from './stream-calls.js';
export { QUOTE_STREAM_SERVER_OPTIONS, QuoteStreamServer, type QuoteStreamServerOptions } from './quote-stream-server.js';
export { QuoteSubscription, type QuoteSink } from './quote-subscription.js';
export {
  DEFAULT_STREAM_INTERVAL_MS,
  MAX_STREAM_PAIRS,
  MIN_STREAM_INTERVAL_MS,
  StreamRequestError,
  parseStreamRequest,
  quoteErrorOf,
  type StreamPair,
  type StreamRequest,
} from './quote-stream-request.js';
export { DEFAULT_SLIPPAGE_BPS, MAX_SLIPPAGE_BPS, slippageOf, type Slippage } from './slippage.js';
export {
  QuoteSourceName,
  WireSwapMode,
  maxInputAmount,
  minOutputAmount,
  type UpstreamQuote,
  type WireBatchQuoteRequest,
  type WirePairAmount,
  type WireQuote,
  type WireQuoteError,
  type WireQuoteRequest,
  type WireRouteHop,
} from './quote-wire.js';
export { decodeSharedQuote, encodeSharedQuote, isSharedQuoteRequest, type SharedQuoteCache } from './shared-quote-cache.js';
export { PoolContextReader } from './pool-context-reader.js';
export { PoolRefresher } from './pool-refresher.js';
export { pairId } from './quote-wire.js';
export { StreamCalls } from './stream-calls.js';
export {
  DEFAULT_STREAM_LIMITS,
  StreamAdmission,
  checkStreamShape,
  clientOfPeer,
  streamClientKey,
  isStreamRefusal,
  type StreamLimits,
  type StreamRefusal,
  type StreamTicket,
} from './stream-limits.js';
export { LoadMonitor, acquireLoadMonitor, releaseLoadMonitor, type LoadSignal, type LoadThresholds } from './load-monitor.js';
export { StreamPacer, type PacedWork } from './stream-pacer.js';
export { LimitedPoolLoader, type FallbackLimitsOptions, type FallbackLimiterStats } from './fallback-limiter.js';
