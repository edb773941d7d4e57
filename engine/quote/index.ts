/**
 * engine/quote: the quote service's cache path, circuit breaker, rate limiter and uWebSockets.js
 * HTTP server (spec 02, ARCHITECTURE.md §3).
 */
export { quoteFromCache, type Quote, type RouteHop } from './cache-quoter.js';
export {
  CircuitBreaker,
  CircuitState,
  DEFAULT_FAILURE_THRESHOLD,
  DEFAULT_HALF_OPEN_SUCCESSES,
  DEFAULT_RESET_TIMEOUT_MS,
  type CircuitBreakerOptions,
} from './circuit-breaker.js';
export { QuoteErrorCode, isQuoteError, quoteError } from './errors.js';
export { DEFAULT_MAX_CLIENTS, DEFAULT_RATE_LIMIT_RPS, RateLimiter, type RateLimiterOptions } from './rate-limiter.js';
export { QuoteHttpServer, parseQuoteQuery, quoteToJson, type QuoteHttpServerOptions } from './quote-http-server.js';
