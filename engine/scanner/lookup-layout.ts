/**
 * Layout of the lookup directory (leaf module: no imports): what the pool's thread knows about
 * address lookup tables, on a SharedArrayBuffer it writes and the parse workers read in place.
 *
 *   ┌ header ───┬ slots ──────────────────┬ records ───────────────────┬ map blocks ────────┐
 *   │ Int32 x 8 │ slots x [rec+1, key lo] │ capacity x [key, len, blk] │ blocks x 256 x u16 │
 *   └───────────┴─────────────────────────┴────────────────────────────┴────────────────────┘
 *
 * - slots: an open-addressing hash table (linear probing, at most half full) over the table
 *   addresses. SLOT_RECORD holds record + 1 (0 = empty), SLOT_KEY_LO the address's first four
 *   bytes, so a probe rejects most other addresses without touching the record.
 * - records: one per known table: its 32-byte address, how many addresses it is known to hold,
 *   and the map block of its monitored pools (LD_NO_BLOCK when it holds none: most tables).
 * - map blocks: per address index 0..255 of a table, the monitored pool id there or LD_NO_POOL.
 *
 * LD_VERSION is a sequence lock (as in the key table): odd while the writer changes anything.
 * LD_KEYS_VERSION is the key-table version the pool ids refer to; a worker uses the directory
 * only when it equals the key-table version it matched the batch against.
 */
export const LD_VERSION = 0;
export const LD_CAPACITY = 1; // records
export const LD_SLOTS = 2; // hash slots, a power of two >= 2 x capacity
export const LD_BLOCKS = 3; // map blocks
export const LD_COUNT = 4; // tables stored
export const LD_KEYS_VERSION = 5;
export const LD_HEADER_WORDS = 8;
export const LD_HEADER_BYTES = LD_HEADER_WORDS * 4;

export const SLOT_RECORD = 0;
export const SLOT_KEY_LO = 1;
export const SLOT_WORDS = 2;

export const REC_KEY = 0; // 8 words: the table's 32-byte address
export const REC_LENGTH = 8; // addresses the table is known to hold (0..256)
export const REC_BLOCK = 9; // map block, or LD_NO_BLOCK
export const REC_WORDS = 10;

export const LD_NO_BLOCK = -1;
/** Entries of a map block: a lookup index is a u8. */
export const BLOCK_ENTRIES = 256;
export const BLOCK_BYTES = BLOCK_ENTRIES * 2;
/** Map block value: no monitored pool at this index. Pool ids are therefore below it. */
export const LD_NO_POOL = 0xffff;
/** Most monitored keys a directory can map (pool ids 0..LD_NO_POOL-1). */
export const LD_MAX_KEYS = LD_NO_POOL;
/** Addresses a lookup table holds at most. */
export const LOOKUP_TABLE_ADDRESSES = 256;
