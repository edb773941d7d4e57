/** The simulator's ShredStream gRPC endpoint (SubscribeEntries, SendHeartbeat). */
export {
  ShredstreamServer,
  SHREDSTREAM_DEFAULT_HOST,
  SHREDSTREAM_DEFAULT_PORT,
  HEARTBEAT_DEFAULT_TTL_MS,
  DEFAULT_MAX_QUEUED_BYTES_PER_SUBSCRIBER,
  type ShredstreamServerOptions,
  type ShredstreamStats,
} from './shredstream-server.js';
export { MAX_HEARTBEAT_REGIONS, type HeartbeatRecord } from './heartbeat.js';
export { encodeEntryMessage } from './entry-message.js';
