/**
 * engine/common: helpers several services share, with no feature of their own: the health status
 * vocabulary, and (moved here from the feature folders that first needed them) retry backoff, the
 * circuit breaker, the due timer, the latest-per-pair stream writer, the metrics HTTP server and
 * its operational answers. It sits beside obs and config, below every feature folder.
 */
export { errorBody } from './error-body.js';
export { HealthStatus, healthHttpStatus } from './health-status.js';
