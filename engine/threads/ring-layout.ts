/**
 * Layout of the SharedArrayBuffer behind a ByteRing (byte-ring.ts). Leaf module: no imports.
 *
 *   SharedArrayBuffer
 *   ┌──────────── header: HEADER_BYTES, an Int32Array of HEADER_WORDS ────────────┬── data: capacity bytes ──┐
 *   │ producer line (words 0..15)         │ consumer line (words 16..31)          │ records, 8-aligned       │
 *   │ HEAD WRITTEN DROPPED DROPPED_BYTES  │ TAIL READ WAITING                     │                          │
 *   │ OVERSIZE CLOSED CAPACITY SIGNAL     │                                       │                          │
 *   └─────────────────────────────────────┴───────────────────────────────────────┴──────────────────────────┘
 *
 * The words the producer writes and the words the consumer writes sit on different 64-byte cache
 * lines, so the two threads do not invalidate each other's line on every record.
 * HEAD and TAIL are free-running byte counters (wrapping at 2^32, kept in Int32 words); the data
 * offset of a counter is `counter & (capacity - 1)`.
 */

/** Producer-owned: bytes published (free-running). Stored with Atomics.store after the record. */
export const HEAD = 0;
/** Producer-owned: records accepted by tryWrite. */
export const WRITTEN = 1;
/** Producer-owned: records refused by tryWrite (ring full or record too large). */
export const DROPPED = 2;
/** Producer-owned: payload bytes of the refused records (wraps at 2^32). */
export const DROPPED_BYTES = 3;
/** Producer-owned: refusals because the record can never fit (also counted in DROPPED). */
export const OVERSIZE = 4;
/** Producer-owned: 1 once the producer closed the ring; the consumer drains what is left and stops. */
export const CLOSED = 5;
/** Set once at creation: data capacity in bytes (a power of two). */
export const CAPACITY = 6;
/** Bumped by the producer to wake a parked consumer (the word Atomics.wait/notify act on). */
export const SIGNAL = 7;

/** Consumer-owned: bytes released (free-running). Stored with Atomics.store after the record was used. */
export const TAIL = 16;
/** Consumer-owned: records released. */
export const READ = 17;
/** Consumer-owned: 1 while the consumer is (about to be) parked in Atomics.wait on HEAD. */
export const WAITING = 18;

export const HEADER_WORDS = 32;
export const HEADER_BYTES = HEADER_WORDS * 4;

/**
 * Record layout in the data area (offsets from the record's start; every record starts 8-aligned):
 *   +0  u32 payload length, or SKIP_MARKER
 *   +4  u32 reserved (0)
 *   +8  u32 slot, low word
 *   +12 u32 slot, high word
 *   +16 f64 receivedAt (the producer's clock, milliseconds)
 *   +24 payload, then zero to 7 padding bytes to the next multiple of 8
 */
export const REC_LENGTH = 0;
export const REC_SLOT_LO = 8;
export const REC_SLOT_HI = 12;
export const REC_RECEIVED_AT = 16;
export const RECORD_HEADER_BYTES = 24;
export const RECORD_ALIGN = 8;

/**
 * Length word of a skip record: the rest of the data area up to its end is unused and the next
 * record starts at offset 0. Written when a record does not fit before the end (records are never
 * split, so the consumer always gets one contiguous view).
 */
export const SKIP_MARKER = 0xffffffff;

export const MIN_CAPACITY = 64;
/** Largest capacity: keeps HEAD - TAIL (at most the capacity) a non-negative Int32. */
export const MAX_CAPACITY = 2 ** 30;
