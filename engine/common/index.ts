/**
 * engine/common: helpers several services share, with no feature of their own: the health status
 * vocabulary, and (moved here from the feature folders that first needed them) retry backoff, the
 * circuit breaker, the due timer, the latest-per-pair stream writer, the metrics HTTP server and
 * its operational answers. It sits beside obs and config, below every feature folder.
 */
export { Backoff, Jitter, DEFAULT_BACKOFF_BASE_MS, DEFAULT_BACKOFF_CAP_MS, DEFAULT_BACKOFF_FACTOR, type BackoffOptions } from './backoff.js';
export {
  CircuitBreaker,
  CircuitState,
  DEFAULT_FAILURE_THRESHOLD,
  DEFAULT_HALF_OPEN_SUCCESSES,
  DEFAULT_RESET_TIMEOUT_MS,
  type CircuitBreakerOptions,
} from './circuit-breaker.js';
export { CHeapTrim } from './c-heap-trim.js';
export { DueTimer } from './due-timer.js';
export { errorBody } from './error-body.js';
export { LatestPerPairWriter, type MessageSink } from './latest-per-pair-writer.js';
export { MetricsHttpServer, type MetricsHttpServerOptions } from './metrics-http-server.js';
export { heapProfileResponse, metricsResponse, opsFailure, type OpsResponse } from './ops-endpoints.js';
export { HealthStatus, healthHttpStatus } from './health-status.js';
export { ClientAddressKeys, remoteAddressesReadNatively, type RemoteAddressSource } from './client-address-key.js';
export { DEFAULT_MAX_CLIENTS, DEFAULT_RATE_LIMIT_MAX_BYTES, DEFAULT_RATE_LIMIT_RPS, RateLimiter, type RateLimiterOptions } from './rate-limiter.js';
