/**
 * Layouts shared by the parse worker and its pool (leaf module: no imports): the result record a
 * worker writes per batch, the monitored-key table, the per-worker counters and the doorbell.
 * (The lookup directory's layout is in lookup-layout.ts.)
 *
 * Result record: the payload of one record in a worker's results ring (engine/threads/byte-ring.ts), u32 words.
 * The ring record's slot and receivedAt are the batch's own, copied from the input record.
 *
 *   ┌ header ──────────┬ matches ───────────────────────┬ unresolved ───────────────────────────┐
 *   │ RES_HEADER_WORDS │ RES_MATCH_COUNT x MATCH_STRIDE │ RES_UNRESOLVED_COUNT variable records │
 *   └──────────────────┴────────────────────────────────┴───────────────────────────────────────┘
 *
 * Matches: one per (transaction, monitored pool among its accounts) pair. Static keys first, in
 *   payload order; a v0 transaction's accounts loaded through address lookup tables follow its
 *   static ones when the lookup directory settled them (MATCH_FLAGS has MATCH_VIA_LOOKUP).
 * Unresolved: one per v0 transaction whose lookups the worker could not settle (a table not in
 *   the directory, an index past a table's known length, keys changed meanwhile): what the pool's
 *   thread needs to resolve it by RPC, copied out of the batch (whose bytes are released at once).
 */
export const RES_STATUS = 0; // ParseStatus of the batch; not Ok -> no matches (records unusable)
export const RES_TX_COUNT = 1;
export const RES_ENTRY_COUNT = 2;
export const RES_MATCH_COUNT = 3;
export const RES_KEYS_VERSION = 4; // key-table version the batch was matched against
export const RES_ERROR_OFFSET = 5; // COUNT_ERROR_OFFSET of the parse (meaningful when not Ok)
export const RES_UNRESOLVED_COUNT = 6;
export const RES_UNRESOLVED_WORDS = 7; // words of the unresolved section
export const RES_TICK_COUNT = 8; // entries without transactions (ticks): a slot ends with its last tick
export const RES_HEADER_WORDS = 9;

export const MATCH_TX = 0; // transaction index in payload order
export const MATCH_POOL = 1; // pool id: the key's index in the key table
/** Account index of the pool in the transaction: static keys, then loaded writable, then loaded readonly. */
export const MATCH_KEY_INDEX = 2;
export const MATCH_SIG_OFFSET = 3; // offset of signature 0 in the batch payload
export const MATCH_SIGNATURE = 4; // 16 words: the 64 signature bytes (the transaction id)
export const MATCH_FLAGS = 20; // MATCH_VIA_* bits
export const MATCH_STRIDE = 21;
export const SIGNATURE_WORDS = 16;
/** MATCH_FLAGS bit: the pool is an account loaded through an address lookup table. */
export const MATCH_VIA_LOOKUP = 1;

/**
 * Unresolved record, UNRES_FIXED_WORDS words and then UNRES_LOOKUP_COUNT lookups, each
 * LOOKUP_HEADER_WORDS words (table address, index counts) and its index bytes (writable, then
 * readonly) padded to a word. UNRES_WORDS is the record's length, so readers can skip it.
 */
export const UNRES_WORDS = 0;
export const UNRES_TX = 1;
export const UNRES_REASON = 2; // UnresolvedReason
export const UNRES_STATIC_KEYS = 3; // static account keys: loaded accounts are numbered from here
export const UNRES_LOOKUP_COUNT = 4;
export const UNRES_SIG_OFFSET = 5;
export const UNRES_SIGNATURE = 6; // 16 words
export const UNRES_FIXED_WORDS = 22;
export const LOOKUP_KEY = 0; // 8 words: the table's address
export const LOOKUP_COUNTS = 8; // writable index count | readonly index count << 16
export const LOOKUP_HEADER_WORDS = 9;
/**
 * Lookups copied per transaction at most. A transaction within Solana's 1232-byte limit has at
 * most 35 (34 bytes each); one with more cannot land and is counted (WS_LOOKUP_REFUSED), not sent.
 */
export const MAX_TX_LOOKUPS = 64;

/** Why a worker left a transaction's lookups to the pool's thread. */
export const UnresolvedReason = {
  /** A table is not in the lookup directory. */
  UnknownTable: 1,
  /** An index is past a table's known length (the table may have been extended). */
  IndexPastLength: 2,
  /** The monitored keys changed and the directory's pool ids refer to other keys. */
  KeysChanged: 3,
  /** The directory kept changing while the worker read it. */
  Busy: 4,
} as const;
export type UnresolvedReason = (typeof UnresolvedReason)[keyof typeof UnresolvedReason];

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
export const WS_LOOKUP_TXS = 6; // v0 transactions with address-table lookups
export const WS_LOOKUP_RESOLVED = 7; // of those, settled in the worker through the lookup directory
export const WS_LOOKUP_MATCHES = 8; // matches of pools loaded through a lookup (included in WS_MATCHES)
export const WS_UNRESOLVED = 9; // unresolved records written (left to the pool's thread)
export const WS_LOOKUP_REFUSED = 10; // transactions with more than MAX_TX_LOOKUPS lookups
export const WS_WORDS = 16;

/**
 * Doorbell: one per pool, rung by any worker after it publishes a result, so the main thread
 * waits on one word (Atomics.waitAsync) instead of one per results ring. Same protocol as the
 * ring's WAITING/SIGNAL pair (engine/threads/byte-ring.ts).
 */
export const BELL_SIGNAL = 0;
export const BELL_WAITING = 1;
export const BELL_WORDS = 2;
