/**
 * engine/platform: the trading platform of spec 03 around the quote engine. What the rest of the
 * engine may use, by part:
 * - state: PostgreSQL (db/), the key-value key space (kv/), wallets (wallets/), the configuration
 *   validator (config-validator/), and how the services keep it (heartbeats, scanner_metrics rows);
 * - rpc-proxy/: `tidepool rpc-proxy`, one Solana JSON-RPC front over several RPC endpoints.
 */
export * from './db/index.js';
export * from './kv/index.js';
export * from './wallets/index.js';
export * from './config-validator/index.js';
export * from './rpc-proxy/index.js';
export { ChainClient, PREFLIGHT_FAILURE, type ChainClientOptions, type LandedTransaction, type PrioritizationFee, type SignatureStatusInfo, type SimulationOutcome, type TokenAccountInfo } from './chain-client.js';
export { DEFAULT_DATA_DIR, databaseSchema, redisSchema, scannerMetricsSchema, walletSchema } from './platform-config.js';
export { databaseOptions, databaseStatus, openPlatformState, type PlatformState, type PlatformStateSettings } from './platform-state.js';
export { ScannerMetricsRecorder, quantileBetween, type ScannerMetricsRecorderOptions } from './scanner-metrics-recorder.js';
export { startServiceState, type ServiceState, type ServiceStateOptions } from './service-state.js';
export { startEmbeddedPlatform, type EmbeddedPlatform, type EmbeddedPlatformOptions } from './embedded-platform.js';
export { openQuoteCache, openSplitQuoteCache, startSplitServiceState, type QuoteCacheHandle, type SplitServiceStateOptions } from './split-service-state.js';
export * from './planner/index.js';
export * from './executor/index.js';
export * from './market/index.js';
export * from './backtest/index.js';
export { assertSchema, invalidMessage, messageSchemaPath, parseMessageJson, schemaViolationsOf } from './message-schema.js';
