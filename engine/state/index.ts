/**
 * engine/state: the platform's shared state (spec 03): PostgreSQL (db/), the key-value key space
 * (kv/), and how services keep it (opening it from configuration, heartbeats, scanner_metrics rows).
 */
export * from './db/index.js';
export * from './kv/index.js';
export { DEFAULT_DATA_DIR, databaseSchema, redisSchema, scannerMetricsSchema, walletSchema } from './platform-config.js';
export { databaseOptions, databaseStatus, openPlatformState, type PlatformState, type PlatformStateSettings } from './platform-state.js';
export { ScannerMetricsRecorder, quantileBetween, type ScannerMetricsRecorderOptions } from './scanner-metrics-recorder.js';
export { startServiceState, type ServiceState, type ServiceStateOptions } from './service-state.js';
export { startEmbeddedPlatform, type EmbeddedPlatform, type EmbeddedPlatformOptions } from './embedded-platform.js';
export { openQuoteCache, openSplitKeySpace, openSplitQuoteCache, startSplitServiceState, type QuoteCacheHandle, type SplitServiceStateOptions } from './split-service-state.js';
