/**
 * engine/external: the external upstream quote service (spec 01, :50053) — an aggregator-style
 * GET /quote API polled within its rate limit, behind a circuit breaker, served over
 * tidepool.v1.QuoteService.StreamBatchQuotes. What the rest of the engine may use.
 */
export { createExternalQuoteService, EXTERNAL_GRPC_PORT_SETTING, EXTERNAL_METRICS_PORT_SETTING, type ExternalEndpoints, type ExternalQuoteService, type ExternalQuoteServiceDeps } from './external-quote-service.js';
export {
  DEFAULT_EXTERNAL_GRPC_PORT,
  DEFAULT_EXTERNAL_METRICS_PORT,
  DEFAULT_QUOTE_URL,
  defaultExternalConfig,
  externalSchema,
  loadExternalConfig,
  providerNameOf,
  type ExternalQuotesConfig,
} from './external-config.js';
export { HealthStatus, type ExternalHealth } from './external-http-server.js';
export { EXTERNAL_METRIC_NAMES, type ExternalMetrics } from './external-metrics.js';
export { PollOutcomeKind, type PollOutcome, type PollRequest } from './provider-client.js';
export { parseQuoteResponse, hopFeeInInputUnits, type ProviderQuote, type ProviderHop } from './provider-response.js';
export { DEX_LABELS, ProviderFallbackQuoter, routeOfProviderQuote, type ProviderFallbackQuoterOptions } from './fallback-quoter.js';
