/**
 * engine/quote-service: the quote service of spec 02 assembled: its configuration, the factory
 * that puts the engine behind both transports with their metrics port, and readiness.
 */
export { DEFAULT_EXTERNAL_FALLBACK_TIMEOUT_MS, DEFAULT_EXTERNAL_QUOTE_URL, DEFAULT_QUOTE_METRICS_PORT, DEFAULT_QUOTE_PORT, defaultQuoteConfig, loadQuoteConfig, quoteSchema, type QuoteServiceConfig } from './quote-config.js';
export { createFallbackLoader, fallbackLoaderFromConfig } from './rpc-loader.js';
export { createQuoteCache, createQuoteService, QUOTE_GRPC_PORT_SETTING, QUOTE_METRICS_PORT_SETTING, QUOTE_PORT_SETTING, type QuoteService, type QuoteServiceDeps, type QuoteServicePorts } from './quote-service.js';
