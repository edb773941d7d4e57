/**
 * Layouts shared by the parse worker and its pool (leaf module: no imports): the result record a
 * worker writes per batch, the monitored-key table, the per-worker counters and the doorbell.
 *
 * Result record: the payload of one record in a worker's results ring (byte-ring.ts), u32 words.
 * The ring record's slot and receivedAt are the batch's own, copied from the input record.
 *   RES_HEADER_WORDS words of batch fields, then RES_MATCH_COUNT matches of MATCH_STRIDE words:
 *   one per (transaction, monitored key among its static keys) pair, in payload order.
 */
export const RES_STATUS = 0; // ParseStatus of the batch; not Ok -> no matches (records unusable)
export const RES_TX_COUNT = 1;
export const RES_ENTRY_COUNT = 2;
export const RES_MATCH_COUNT = 3;
export const RES_KEYS_VERSION = 4; // key-table version the batch was matched against
export const RES_ERROR_OFFSET = 5; // COUNT_ERROR_OFFSET of the parse (meaningful when not Ok)
export const RES_HEADER_WORDS = 6;

export const MATCH_TX = 0; // transaction index in payload order
export const MATCH_POOL = 1; // pool id: the key's index in the key table
export const MATCH_KEY_INDEX = 2; // static account key index of the pool in the transaction
export const MATCH_SIG_OFFSET = 3; // offset of signature 0 in the batch payload
export const MATCH_SIGNATURE = 4; // 16 words: the 64 signature bytes (the transaction id)
export const MATCH_STRIDE = 20;
export const SIGNATURE_WORDS = 16;

/**
 * Key table: the monitored pool keys, on a SharedArrayBuffer the pool writes and workers read.
 *   Int32 words KT_HEADER_WORDS, then KT capacity x 32 key bytes. Pool id = index in the table.
 * KT_VERSION is a sequence lock: odd while the writer is changing the table.
 */
export const KT_VERSION = 0;
export const KT_COUNT = 1;
export const KT_CAPACITY = 2;
export const KT_HEADER_WORDS = 4;
export const KT_HEADER_BYTES = KT_HEADER_WORDS * 4;

/** Per-worker counters (one Int32Array of WS_WORDS per worker, written by that worker only). */
export const WS_BATCHES = 0;
export const WS_TXS = 1;
export const WS_MATCHES = 2;
export const WS_PARSE_ERRORS = 3;
export const WS_RESULT_DROPS = 4; // results lost because the results ring was full
export const WS_KEY_RELOADS = 5;
export const WS_WORDS = 8;

/**
 * Doorbell: one per pool, rung by any worker after it publishes a result, so the main thread
 * waits on one word (Atomics.waitAsync) instead of one per results ring. Same protocol as the
 * ring's WAITING/SIGNAL pair (byte-ring.ts).
 */
export const BELL_SIGNAL = 0;
export const BELL_WAITING = 1;
export const BELL_WORDS = 2;
