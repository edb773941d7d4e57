/** The pool-state scanner (spec 02): what the rest of the engine may use. */
export { decodeEntryMessage, type EntryMessage } from './entry-message.js';
export {
  BlockStreamClient,
  DISCONNECTED_ALERT,
  DEFAULT_ALERT_AFTER_MS,
  DEFAULT_STABLE_AFTER_MS,
  DEFAULT_HEARTBEAT_FALLBACK_INTERVAL_MS,
  DEFAULT_HEARTBEAT_TIMEOUT_MS,
  MAX_HEARTBEAT_REGIONS,
  type BlockStreamClientOptions,
  type BlockStreamEvents,
  type BlockStreamStats,
  type HeartbeatOptions,
  type StreamEntry,
  type StreamEntryHandler,
} from './stream-client.js';
export {
  scannerSchema,
  loadScannerConfig,
  checkScannerConfig,
  blockStreamSettings,
  dexPrograms,
  monitoredPools,
  readPoolsFile,
  DEFAULT_HEARTBEAT_UDP_PORT,
  DEFAULT_POOLS_FILE,
  DEFAULT_GEYSER_URL,
  STATE_SOURCES,
  geyserEndpoint,
  type StateSource,
  type ScannerConfig,
} from './scanner-config.js';
export { DEFAULT_GEYSER_ARRAYS_AHEAD, GeyserStateSource, MAX_GEYSER_ARRAYS_AHEAD, type GeyserStateSourceOptions } from './geyser-state-source.js';
export { ByteRingReader, ByteRingWriter, RingRecord, byteRingStats, createByteRing, maxPayloadFor, type ByteRingStats } from '../threads/index.js';
export { ParsePool, type ParsePoolOptions, type ParsePoolStats } from './parse-pool.js';
export { ParseResult } from './parse-result.js';
export type { DrainSummary } from './parse-worker.js';
export { MATCH_VIA_LOOKUP, UnresolvedReason } from './match-layout.js';
export {
  LookupDirectory,
  createLookupDirectory,
  DEFAULT_LOOKUP_TABLES,
  type LookupDirectoryOptions,
  type LookupDirectoryStats,
  type LookupTableSource,
} from './lookup-directory.js';
export {
  LookupMatcher,
  type LookupMatch,
  type LookupFailure,
  type LookupFailureKind,
  type LookupMatcherHost,
  type LookupMatcherOptions,
  type LookupMatcherStats,
} from './lookup-matcher.js';
// The RPC client and account fetcher live in engine/rpc; re-exported for the scanner's users.
export {
  RpcClient,
  parseRpcEndpoints,
  MAX_KEYS_PER_CALL,
  type RpcFailure,
  type FetchQueueFull,
  isRpcFailure,
  AccountFetcher,
  type AccountData,
  type MultipleAccountsResult,
  type RpcClientOptions,
  type RpcFailureKind,
  type AccountFetcherOptions,
  type AccountFetcherStats,
  type AccountsSource,
} from '../rpc/index.js';
export { LookupTableCache, type LoadedAddresses } from './lookup-tables.js';
export { poolStateSubject, type PoolStateUpdateEvent } from './pool-state-event.js';
export { ScannerHttpServer } from './scanner-http.js';
export { readLimitedBody } from './pools-request.js';
export { DEFAULT_SCANNER_HEALTH, ScannerHealth, ScannerHealthStatus, type ScannerHealthReport, type ScannerHealthSettings } from './scanner-health.js';
export { Scanner, type PoolStateSink } from './scanner.js';
