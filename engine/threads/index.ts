/**
 * engine/threads: the cross-thread plumbing the hot path shares (docs/architecture.md §1: data crosses
 * threads through SharedArrayBuffer rings, not structured-clone messages). A leaf folder: it
 * imports nothing from the rest of the engine, so every layer (engine/rpc, engine/scanner, ...)
 * may use it.
 */
export {
  ByteRingReader,
  ByteRingWriter,
  RingRecord,
  byteRingStats,
  createByteRing,
  maxPayloadFor,
  type ByteRingStats,
} from './byte-ring.js';
