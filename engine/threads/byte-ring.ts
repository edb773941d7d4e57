/**
 * ByteRing: a single-producer single-consumer ring of variable-size byte records on a
 * SharedArrayBuffer, for data crossing threads on the hot path: entry batches going from the
 * stream client to a parse worker and parse results coming back (engine/scanner), account read
 * requests and answers between the main thread and the RPC worker (engine/rpc). Both ends are
 * built from the same SharedArrayBuffer, in any threads: `createByteRing(capacity)` once, then
 * `new ByteRingWriter(sab)` in the producing thread and `new ByteRingReader(sab)` in the consuming
 * one. Exactly one writer and one reader per ring.
 *
 *                 TAIL & mask                         HEAD & mask
 *                      │                                   │
 *   data ┌─────────────▼───────────────────────────────────▼─────────┬───────┐
 *        │   free      │ rec │ rec │ rec ........ │ rec │ rec │ free  │ SKIP  │
 *        └─────────────┴─────────────────────────────────────────────┴───────┘
 *        0             consumer reads from here     producer writes here     capacity
 *   rec = [u32 length | u32 0 | u32 slot lo | u32 slot hi | f64 receivedAt | payload | pad to 8]
 *   SKIP = a length word of SKIP_MARKER: the record after it did not fit before the end and
 *          starts at offset 0; the bytes from the marker to the end are unused.
 *
 * Choices:
 * - Records are never split across the end: a skip marker wastes the tail of the data area
 *   instead, so the reader can hand out one contiguous view and the parser reads the payload in
 *   place. The cost is that a record may need up to twice its size free, so records are limited to
 *   half the capacity (`maxPayloadBytes`); with that limit an empty ring always accepts a record.
 * - tryWrite never blocks and never grows anything: when the record does not fit it returns false
 *   and counts the refusal in the header (DROPPED, DROPPED_BYTES), readable from both threads.
 *   The caller drops the batch (spec 02 queueSizeLimit: dropped and counted, never buffered).
 * - tryRead returns a view into the SharedArrayBuffer, not a copy: the only copy of a batch is the
 *   producer's tryWrite. The view stays valid until release() (or the next tryRead/read), and the
 *   space is not given back to the producer before that, so a consumer releases as soon as it is
 *   done with the bytes. read(into) copies instead, for consumers that keep bytes longer.
 *
 * Memory ordering (the race reasoning): the producer writes a record with plain stores and then
 * publishes it with Atomics.store(HEAD); the consumer reads HEAD with Atomics.load before touching
 * the record. Atomics are sequentially consistent in the JavaScript memory model, so the plain
 * stores before the store to HEAD happen-before the plain loads after the load that sees it. The
 * same pairing on TAIL (consumer: plain loads of the record, then Atomics.store(TAIL); producer:
 * Atomics.load(TAIL), then plain stores into the freed bytes) keeps the producer from overwriting
 * bytes the consumer still reads. Each end caches the other's counter and reloads it only when the
 * cached value says "full" / "empty", so a record costs one atomic store on each side.
 */
import { invalidArgument } from '../errors.js';
import {
  CAPACITY,
  CLOSED,
  DROPPED,
  DROPPED_BYTES,
  HEAD,
  HEADER_BYTES,
  HEADER_WORDS,
  MAX_CAPACITY,
  MIN_CAPACITY,
  OVERSIZE,
  READ,
  REC_LENGTH,
  REC_RECEIVED_AT,
  REC_SLOT_HI,
  REC_SLOT_LO,
  RECORD_ALIGN,
  RECORD_HEADER_BYTES,
  SIGNAL,
  SKIP_MARKER,
  TAIL,
  WAITING,
  WRITTEN,
} from './ring-layout.js';

const TWO_32 = 4294967296;

/** Atomics.waitAsync (Node >= 16), missing from the ES2022 lib the project compiles against. */
type WaitAsync = (
  array: Int32Array,
  index: number,
  value: number,
  timeout?: number,
) => { async: false; value: 'not-equal' | 'timed-out' } | { async: true; value: Promise<'ok' | 'timed-out'> };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

/** Allocates the SharedArrayBuffer of a ring with `capacity` data bytes (a power of two). */
export function createByteRing(capacity: number): SharedArrayBuffer {
  if (!Number.isInteger(capacity) || capacity < MIN_CAPACITY || capacity > MAX_CAPACITY || (capacity & (capacity - 1)) !== 0) {
    throw invalidArgument('capacity', capacity, `ring capacity must be a power of two in [${MIN_CAPACITY}, ${MAX_CAPACITY}], got ${capacity}`);
  }
  const sab = new SharedArrayBuffer(HEADER_BYTES + capacity);
  new Int32Array(sab, 0, HEADER_WORDS)[CAPACITY] = capacity;
  return sab;
}

/** Largest payload a ring of `capacity` bytes accepts (records are at most half the ring). */
export function maxPayloadFor(capacity: number): number {
  return capacity / 2 - RECORD_HEADER_BYTES;
}

function recordBytes(payloadLength: number): number {
  return RECORD_HEADER_BYTES + ((payloadLength + RECORD_ALIGN - 1) & ~(RECORD_ALIGN - 1));
}

interface RingViews {
  header: Int32Array;
  words: Uint32Array;
  f64: Float64Array;
  bytes: Uint8Array;
  capacity: number;
}

function ringViews(sab: SharedArrayBuffer): RingViews {
  const header = new Int32Array(sab, 0, HEADER_WORDS);
  const capacity = Atomics.load(header, CAPACITY);
  if (capacity < MIN_CAPACITY || (capacity & (capacity - 1)) !== 0 || sab.byteLength !== HEADER_BYTES + capacity) {
    throw invalidArgument('sab', sab.byteLength, `not a ByteRing buffer (capacity word ${capacity}, ${sab.byteLength} bytes)`);
  }
  return {
    header,
    words: new Uint32Array(sab, HEADER_BYTES, capacity / 4),
    f64: new Float64Array(sab, HEADER_BYTES, capacity / 8),
    bytes: new Uint8Array(sab, HEADER_BYTES, capacity),
    capacity,
  };
}

export interface ByteRingStats {
  capacity: number;
  /** Records accepted by tryWrite. */
  written: number;
  /** Records released by the reader. */
  read: number;
  /** Records refused by tryWrite (full or oversize). */
  dropped: number;
  /** Payload bytes of the refused records. */
  droppedBytes: number;
  /** Refusals of records larger than maxPayloadBytes (also in `dropped`). */
  oversize: number;
  /** Bytes between TAIL and HEAD (records not yet released, skip space included). */
  usedBytes: number;
  closed: boolean;
}

/** Counters of a ring, readable from any thread (each word is read atomically, not all at once). */
export function byteRingStats(sab: SharedArrayBuffer): ByteRingStats {
  const h = new Int32Array(sab, 0, HEADER_WORDS);
  return {
    capacity: Atomics.load(h, CAPACITY),
    written: Atomics.load(h, WRITTEN) >>> 0,
    read: Atomics.load(h, READ) >>> 0,
    dropped: Atomics.load(h, DROPPED) >>> 0,
    droppedBytes: Atomics.load(h, DROPPED_BYTES) >>> 0,
    oversize: Atomics.load(h, OVERSIZE) >>> 0,
    usedBytes: (Atomics.load(h, HEAD) - Atomics.load(h, TAIL)) | 0,
    closed: Atomics.load(h, CLOSED) !== 0,
  };
}

/** What both ends of a ring see: the header and the typed views over the record area. */
abstract class RingEnd {
  readonly capacity: number;
  /** Largest payload a record may carry; larger ones are refused and counted as oversize. */
  readonly maxPayloadBytes: number;
  protected readonly header: Int32Array;
  protected readonly words: Uint32Array;
  protected readonly f64: Float64Array;
  protected readonly bytes: Uint8Array;
  protected readonly mask: number;

  constructor(sab: SharedArrayBuffer) {
    const v = ringViews(sab);
    this.header = v.header;
    this.words = v.words;
    this.f64 = v.f64;
    this.bytes = v.bytes;
    this.capacity = v.capacity;
    this.mask = v.capacity - 1;
    this.maxPayloadBytes = maxPayloadFor(v.capacity);
  }
}

/** The producing end. Not thread-safe: one writer per ring. */
export class ByteRingWriter extends RingEnd {
  private head: number;
  private tailCache: number;

  constructor(sab: SharedArrayBuffer) {
    super(sab);
    this.head = Atomics.load(this.header, HEAD);
    this.tailCache = Atomics.load(this.header, TAIL);
  }

  /**
   * Appends one record. Returns false, counting the refusal, when it does not fit now (or can
   * never fit: longer than maxPayloadBytes). Never blocks. `slot` is a u64: a non-negative safe
   * integer or a bigint below 2^64 (RangeError otherwise). `receivedAt` is carried as an f64.
   */
  tryWrite(slot: number | bigint, receivedAt: number, payload: Uint8Array): boolean {
    let lo: number;
    let hi: number;
    if (typeof slot === 'number') {
      if (!(Number.isSafeInteger(slot) && slot >= 0)) throw invalidArgument('slot', slot, `slot must be a u64, got ${slot}`);
      lo = slot % TWO_32;
      hi = (slot - lo) / TWO_32;
    } else {
      if (slot < 0n || slot >= 1n << 64n) throw invalidArgument('slot', slot.toString(), `slot must be a u64, got ${slot}`);
      lo = Number(slot & 0xffffffffn);
      hi = Number(slot >> 32n);
    }
    return this.tryWriteSlotWords(lo, hi, receivedAt, payload);
  }

  /**
   * tryWrite with the slot as its two u32 words (low, high), as a RingRecord carries it: passes a
   * record's exact u64 slot on without a bigint. The words are taken as they are (`>>> 0`).
   */
  tryWriteSlotWords(slotLo: number, slotHi: number, receivedAt: number, payload: Uint8Array): boolean {
    const lo = slotLo >>> 0;
    const hi = slotHi >>> 0;
    const length = payload.length;
    if (length > this.maxPayloadBytes) {
      this.refuse(length);
      Atomics.store(this.header, OVERSIZE, this.header[OVERSIZE]! + 1);
      return false;
    }
    const total = recordBytes(length);
    let pos = this.head & this.mask;
    const room = this.capacity - pos;
    const need = room >= total ? total : room + total;
    if (this.capacity - ((this.head - this.tailCache) | 0) < need) {
      this.tailCache = Atomics.load(this.header, TAIL);
      if (this.capacity - ((this.head - this.tailCache) | 0) < need) {
        this.refuse(length);
        return false;
      }
    }
    const words = this.words;
    if (room < total) {
      // room >= 8: positions and the capacity are multiples of 8.
      words[pos >>> 2] = SKIP_MARKER;
      this.head = (this.head + room) | 0;
      pos = 0;
    }
    const w = pos >>> 2;
    words[w + (REC_LENGTH >>> 2)] = length;
    words[w + 1] = 0;
    words[w + (REC_SLOT_LO >>> 2)] = lo;
    words[w + (REC_SLOT_HI >>> 2)] = hi;
    this.f64[(pos + REC_RECEIVED_AT) >>> 3] = receivedAt;
    this.bytes.set(payload, pos + RECORD_HEADER_BYTES);
    this.head = (this.head + total) | 0;
    const header = this.header;
    header[WRITTEN] = header[WRITTEN]! + 1;
    // Publish: every plain store above happens-before a reader's Atomics.load(HEAD) that sees it.
    Atomics.store(header, HEAD, this.head);
    // Wake protocol (see ByteRingReader.waitForData): HEAD is stored before WAITING is loaded. If
    // WAITING reads 0 here, the reader's store of 1 comes later in the single total order of
    // atomics, so its following load of HEAD sees this record and it does not sleep. If it
    // reads 1, bumping SIGNAL makes the reader's Atomics.wait(SIGNAL, old) return at once or
    // the notify wakes it. A reader that keeps up is never parked, and then no notify is paid.
    if (Atomics.load(header, WAITING) !== 0) {
      Atomics.add(header, SIGNAL, 1);
      Atomics.notify(header, SIGNAL);
    }
    return true;
  }

  /** Whether a payload of `length` bytes would be accepted now. */
  fits(length: number): boolean {
    if (length > this.maxPayloadBytes) return false;
    const total = recordBytes(length);
    const room = this.capacity - (this.head & this.mask);
    const need = room >= total ? total : room + total;
    this.tailCache = Atomics.load(this.header, TAIL);
    return this.capacity - ((this.head - this.tailCache) | 0) >= need;
  }

  /**
   * Marks the ring closed: the reader drains the records already written and then sees `closed`.
   * Nothing may be written after. Always notifies (close is rare; a parked reader must wake).
   */
  close(): void {
    Atomics.store(this.header, CLOSED, 1);
    Atomics.add(this.header, SIGNAL, 1);
    Atomics.notify(this.header, SIGNAL);
  }

  get dropped(): number {
    return this.header[DROPPED]! >>> 0;
  }
  get written(): number {
    return this.header[WRITTEN]! >>> 0;
  }

  private refuse(length: number): void {
    const header = this.header;
    header[DROPPED_BYTES] = (header[DROPPED_BYTES]! + length) | 0;
    Atomics.store(header, DROPPED, header[DROPPED]! + 1);
  }
}

/**
 * A record handed out by ByteRingReader.tryRead. One object per reader, overwritten by each read:
 * copy the fields to keep them. `payload` is a view into the ring, valid until release().
 */
export class RingRecord {
  payload: Uint8Array = new Uint8Array(0);
  slotLo = 0;
  slotHi = 0;
  receivedAt = 0;

  /** The slot as a number (exact below 2^53, which covers every slot Solana will reach). */
  get slot(): number {
    return this.slotHi * TWO_32 + this.slotLo;
  }
  /** The slot as an exact u64. Allocates: not for the hot path. */
  slotBigInt(): bigint {
    return (BigInt(this.slotHi) << 32n) | BigInt(this.slotLo);
  }
}

/** The consuming end. Not thread-safe: one reader per ring. */
export class ByteRingReader extends RingEnd {
  /** The record of the last tryRead/read (reused). */
  readonly record = new RingRecord();
  private tail: number;
  private headCache: number;
  /** Bytes of the record handed out and not yet released (0 when none). */
  private held = 0;

  constructor(sab: SharedArrayBuffer) {
    super(sab);
    this.tail = Atomics.load(this.header, TAIL);
    this.headCache = Atomics.load(this.header, HEAD);
  }

  /**
   * The next record, or null when the ring is empty. Releases the previous record first. The
   * returned object is `this.record`; its payload is a view into the ring valid until release().
   */
  tryRead(): RingRecord | null {
    if (this.held !== 0) this.release();
    const words = this.words;
    for (;;) {
      if (this.tail === this.headCache) {
        this.headCache = Atomics.load(this.header, HEAD);
        if (this.tail === this.headCache) return null;
      }
      const pos = this.tail & this.mask;
      const w = pos >>> 2;
      const length = words[w + (REC_LENGTH >>> 2)]!;
      if (length === SKIP_MARKER) {
        // Not published to TAIL yet: the skip is given back with the record after it.
        this.tail = (this.tail + this.capacity - pos) | 0;
        continue;
      }
      const record = this.record;
      record.slotLo = words[w + (REC_SLOT_LO >>> 2)]!;
      record.slotHi = words[w + (REC_SLOT_HI >>> 2)]!;
      record.receivedAt = this.f64[(pos + REC_RECEIVED_AT) >>> 3]!;
      record.payload = this.bytes.subarray(pos + RECORD_HEADER_BYTES, pos + RECORD_HEADER_BYTES + length);
      this.held = recordBytes(length);
      return record;
    }
  }

  /**
   * Copies the next record's payload into `into` and releases it at once. Returns the payload
   * length, or -1 when the ring is empty; `this.record` holds the slot and receivedAt (its payload
   * is then the filled part of `into`). RangeError when `into` is shorter than the payload (the
   * record stays in the ring).
   */
  read(into: Uint8Array): number {
    const record = this.tryRead();
    if (record === null) return -1;
    const length = record.payload.length;
    if (length > into.length) {
      this.held = 0; // not consumed: the next read returns it again
      throw invalidArgument('into', into.length, `read buffer of ${into.length} bytes is shorter than the ${length}-byte record`);
    }
    into.set(record.payload);
    record.payload = into.subarray(0, length);
    this.release();
    return length;
  }

  /** Gives the last record's space back to the producer. A no-op when nothing is held. */
  release(): void {
    if (this.held === 0) return;
    this.tail = (this.tail + this.held) | 0;
    this.held = 0;
    const header = this.header;
    header[READ] = header[READ]! + 1;
    // Every read of the record above happens-before the producer's Atomics.load(TAIL) seeing this.
    Atomics.store(header, TAIL, this.tail);
  }

  /** Whether a record is ready (reloads HEAD). */
  hasData(): boolean {
    if (this.tail !== this.headCache) return true;
    this.headCache = Atomics.load(this.header, HEAD);
    return this.tail !== this.headCache;
  }

  /** Whether the producer closed the ring (records written before close may remain). */
  get closed(): boolean {
    return Atomics.load(this.header, CLOSED) !== 0;
  }

  /**
   * Blocks the calling thread (Atomics.wait) until a record is ready, the ring is closed, or
   * `timeoutMs` passes. Returns whether a record is ready. For worker threads: on the main thread
   * it blocks the event loop. Releases a held record first, so the producer is not kept waiting.
   */
  waitForData(timeoutMs: number): boolean {
    if (this.held !== 0) this.release();
    if (this.hasData()) return true;
    const header = this.header;
    // Announce, then re-check. The order (WAITING store, SIGNAL load, HEAD/CLOSED loads, wait on
    // SIGNAL) pairs with the producer's (HEAD store, WAITING load, SIGNAL bump): see tryWrite.
    Atomics.store(header, WAITING, 1);
    const signal = Atomics.load(header, SIGNAL);
    if (this.hasData() || Atomics.load(header, CLOSED) !== 0) {
      Atomics.store(header, WAITING, 0);
      return this.hasData();
    }
    Atomics.wait(header, SIGNAL, signal, timeoutMs);
    Atomics.store(header, WAITING, 0);
    return this.hasData();
  }

  /**
   * Like waitForData without blocking the thread (Atomics.waitAsync), for the main thread.
   * Resolves to whether a record is ready.
   */
  async waitForDataAsync(timeoutMs: number): Promise<boolean> {
    if (this.held !== 0) this.release();
    if (this.hasData()) return true;
    const header = this.header;
    Atomics.store(header, WAITING, 1);
    const signal = Atomics.load(header, SIGNAL);
    if (this.hasData() || Atomics.load(header, CLOSED) !== 0) {
      Atomics.store(header, WAITING, 0);
      return this.hasData();
    }
    const waited = waitAsync(header, SIGNAL, signal, timeoutMs);
    if (waited.async) await waited.value;
    Atomics.store(header, WAITING, 0);
    return this.hasData();
  }
}
