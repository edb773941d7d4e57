export {
  createLogger,
  resolveLogLevel,
  LOG_LEVELS,
  REDACTED_PATHS,
  type CreateLoggerOptions,
  type Logger,
  type LogLevel,
} from './logger.js';
export { LATENCY_MS_BUCKETS, LATENCY_SECONDS_BUCKETS } from './buckets.js';
export { createMetricsRegistry, DEFAULT_METRICS_DROPPED, type MetricsRegistryOptions } from './registry.js';
export { createScannerMetrics, SCANNER_METRIC_NAMES, type ScannerMetrics } from './scanner-metrics.js';
export {
  createQuoteMetrics,
  QUOTE_METRIC_NAMES,
  QuoteSource,
  CircuitBreakerStateValue,
  type QuoteMetrics,
  type LatencySeries,
} from './quote-metrics.js';
export { hasPromtool, runPromtool, type PromtoolResult } from './promtool.js';
export { initTracing, rpcSpanName, rpcAttributes, tracer, type Tracing } from './tracing.js';
export { grpcMetadataGetter, grpcMetadataSetter } from './trace-context.js';
export { HEAP_PROFILE_FILENAMES, acquireHeapSampling, heapProfilePprofGzip, heapSamplingActive, releaseHeapSampling, sampleHeapProfile } from './heap-profile.js';
export { bindAsIs, closeServer, listenOn, requestTarget, type BindPort } from './http-listen.js';
export { LogThrottle } from './log-throttle.js';
export { applyHttpLimits, createLimitedServer, type HttpServerLimits } from './http-limits.js';
export { OutcomeWindow, judgeOutcomes, type HealthThresholds, type OutcomeCounts, type WindowedOutcomes } from './outcome-window.js';
export { PreboundCounter, PreboundCounterChild, PreboundHistogram, PreboundHistogramChild } from './prebound-metrics.js';
