/**
 * engine/quote: the transport-free quote core (spec 02): the quote engine (cache path, memo, route
 * choice, circuit breaker, RPC and external fallbacks), what it is asked (`QuoteRequest`) and what
 * it answers (`QuoteAnswer`, with its JSON wire form in answer-json.ts), the pool directory and
 * refresh, rate limiting, and the quote.proto message types every gRPC party shares (quote-wire.ts).
 * Its transports are engine/quote-http (uWebSockets.js) and engine/quote-grpc; engine/quote-service
 * assembles all three.
 */
export { quoteFromCache } from './cache-quoter.js';
export { QuoteSource, quoteOfAnswer, type Quote, type QuoteAnswer, type QuoteBodyParts, type RouteHop, type RouteQuote } from './quote-answer.js';
export { INTERNAL_FAILURE, badParameter, isQuoteFailure, quoteFailure, type QuoteFailure } from './quote-failure.js';
export { MAX_BATCH_QUOTES, ValidatedPubkeys, type PubkeyCheck, type QuoteRequest, type RouteFilter } from './quote-request.js';
export type { ExternalQuoter, ExternalRoute } from './external-quoter.js';
export { DEFAULT_INTERMEDIATE_MINTS, chooseRoute, routeQuoteOf, type HopChoice, type HopFinder, type PoolFacts } from './route-search.js';
export { ALL_DEXES_MASK, DIRECT_ONLY_BIT, NO_FILTER_KEY, allowsDex, allowsMultiHop, parseDexList, routeFilterKey, routeFilterOf } from './route-filter.js';
export { CacheRouteSearch, FILTERED_OUT_MESSAGE, type CacheRoute } from './cache-route-search.js';
export { DEFAULT_CACHE_FIRST_TIMEOUT_MS, DEFAULT_FALLBACK_DEADLINE_MS, HealthStatus, QuoteEngine, type QuoteEngineOptions, type QuoteHealth, type QuoteResult } from './quote-engine.js';
export { DEFAULT_QUOTE_MEMO_ENTRIES, QuoteMemo, type QuoteMemoOptions } from './quote-memo.js';
export { MemoEntry } from './memo-entry.js';
export { QuoteBodyWriter, quoteBodyParts, quoteToJson } from './answer-json.js';
export { BodyBuffer } from './body-buffer.js';
export { QuoteErrorCode, isQuoteError, quoteError } from './errors.js';
// The per-client limiter lives in engine/common (the RPC proxy uses it too); exported here as before.
export { ClientAddressKeys, DEFAULT_MAX_CLIENTS, DEFAULT_RATE_LIMIT_MAX_BYTES, DEFAULT_RATE_LIMIT_RPS, RateLimiter, type RateLimiterOptions, type RemoteAddressSource } from '../common/index.js';
export { DEFAULT_DIRECTORY_MAX_POOLS, PoolDirectory, type PoolIdentity } from './pool-directory.js';
export { RpcQuoter, updateOfLoadedPool, type RpcQuote, type RpcQuoterOptions } from './rpc-quoter.js';
export { DEFAULT_VALIDATION_SAMPLE_SIZE, PoolValidator, differsFromCache, type PoolValidatorOptions, type ValidationRound } from './pool-validator.js';
export { PoolUpdateHandler, type PoolUpdateHandlerOptions, type PoolUpdateOutcome } from './pool-update-handler.js';
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
export { DEFAULT_SHED_DELAY_MS, DEFAULT_SHED_UTILIZATION, LoadMonitor, acquireLoadMonitor, releaseLoadMonitor, type LoadSignal, type LoadThresholds } from './load-monitor.js';
export { DEFAULT_FALLBACK_BACKOFF_MAX_MS, DEFAULT_FALLBACK_CONCURRENCY, DEFAULT_FALLBACK_RPS, LimitedPoolLoader, type FallbackLimitsOptions, type FallbackLimiterStats } from './fallback-limiter.js';
