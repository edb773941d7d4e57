/**
 * ResultBuilder: a parse worker's scratch space for one result record (layout in match-layout.ts),
 * reused from batch to batch and grown in doublings when a batch needs more. Matches go into the
 * main buffer after the header; unresolved records into a second buffer, appended after the
 * matches by finish() (they are built interleaved, per transaction, but laid out in two sections).
 */
import { PUBKEY_BYTES, SIGNATURE_BYTES } from '../chain/index.js';
import {
  LOOKUP_COUNTS,
  LOOKUP_HEADER_WORDS,
  LOOKUP_KEY,
  MATCH_FLAGS,
  MATCH_KEY_INDEX,
  MATCH_POOL,
  MATCH_SIG_OFFSET,
  MATCH_SIGNATURE,
  MATCH_STRIDE,
  MATCH_TX,
  RES_ENTRY_COUNT,
  RES_ERROR_OFFSET,
  RES_HEADER_WORDS,
  RES_KEYS_VERSION,
  RES_MATCH_COUNT,
  RES_STATUS,
  RES_TICK_COUNT,
  RES_TX_COUNT,
  RES_UNRESOLVED_COUNT,
  RES_UNRESOLVED_WORDS,
  UNRES_FIXED_WORDS,
  UNRES_LOOKUP_COUNT,
  UNRES_REASON,
  UNRES_SIG_OFFSET,
  UNRES_SIGNATURE,
  UNRES_STATIC_KEYS,
  UNRES_TX,
  UNRES_WORDS,
} from './match-layout.js';

/**
 * Where a transaction's lookups sit in the batch payload: per lookup, the offset of the table
 * address and the offset and count of its writable and readonly index bytes.
 */
export interface LookupSpans {
  count: number;
  table: Int32Array;
  writableAt: Int32Array;
  writableCount: Int32Array;
  readonlyAt: Int32Array;
  readonlyCount: Int32Array;
}

export class ResultBuilder {
  matchCount = 0;
  unresolvedCount = 0;
  private words = new Uint32Array(RES_HEADER_WORDS + 64 * MATCH_STRIDE);
  private bytes = new Uint8Array(this.words.buffer);
  private unresolvedWords = 0;
  private unres = new Uint32Array(1024);
  private unresBytes = new Uint8Array(this.unres.buffer);

  /** Starts a new record. */
  reset(): void {
    this.matchCount = 0;
    this.unresolvedCount = 0;
    this.unresolvedWords = 0;
  }

  /** Appends a match; the signature is copied from `payload` at `sigOffset`. */
  addMatch(payload: Uint8Array, tx: number, pool: number, keyIndex: number, sigOffset: number, flags: number): void {
    let w = RES_HEADER_WORDS + this.matchCount * MATCH_STRIDE;
    if (w + MATCH_STRIDE > this.words.length) this.growMain(w + MATCH_STRIDE);
    const words = this.words;
    words[w + MATCH_TX] = tx;
    words[w + MATCH_POOL] = pool;
    words[w + MATCH_KEY_INDEX] = keyIndex;
    words[w + MATCH_SIG_OFFSET] = sigOffset;
    words[w + MATCH_FLAGS] = flags;
    w = (w + MATCH_SIGNATURE) * 4;
    copyBytes(payload, sigOffset, this.bytes, w, SIGNATURE_BYTES);
    this.matchCount++;
  }

  /** Forgets the matches added after the first `count` (reads that a sequence lock voided). */
  rollbackMatches(count: number): void {
    this.matchCount = count;
  }

  /** Appends an unresolved record: the transaction's first signature and a copy of its lookups. */
  addUnresolved(payload: Uint8Array, tx: number, reason: number, staticKeys: number, sigOffset: number, spans: LookupSpans): void {
    let size = UNRES_FIXED_WORDS;
    for (let l = 0; l < spans.count; l++) size += LOOKUP_HEADER_WORDS + ((spans.writableCount[l]! + spans.readonlyCount[l]! + 3) >>> 2);
    const at = this.unresolvedWords;
    if (at + size > this.unres.length) this.growUnresolved(at + size);
    const u = this.unres;
    const ub = this.unresBytes;
    u[at + UNRES_WORDS] = size;
    u[at + UNRES_TX] = tx;
    u[at + UNRES_REASON] = reason;
    u[at + UNRES_STATIC_KEYS] = staticKeys;
    u[at + UNRES_LOOKUP_COUNT] = spans.count;
    u[at + UNRES_SIG_OFFSET] = sigOffset;
    copyBytes(payload, sigOffset, ub, (at + UNRES_SIGNATURE) * 4, SIGNATURE_BYTES);
    let w = at + UNRES_FIXED_WORDS;
    for (let l = 0; l < spans.count; l++) {
      const wc = spans.writableCount[l]!;
      const rc = spans.readonlyCount[l]!;
      const table = spans.table[l]!;
      copyBytes(payload, table, ub, (w + LOOKUP_KEY) * 4, PUBKEY_BYTES);
      u[w + LOOKUP_COUNTS] = wc | (rc << 16);
      let b = (w + LOOKUP_HEADER_WORDS) * 4;
      const wa = spans.writableAt[l]!;
      for (let i = 0; i < wc; i++) ub[b++] = payload[wa + i]!;
      const ra = spans.readonlyAt[l]!;
      for (let i = 0; i < rc; i++) ub[b++] = payload[ra + i]!;
      w += LOOKUP_HEADER_WORDS + ((wc + rc + 3) >>> 2);
      while (b < w * 4) ub[b++] = 0;
    }
    this.unresolvedWords = at + size;
    this.unresolvedCount++;
  }

  /** Fills the header, lays the unresolved section after the matches; a view, valid until reset. */
  finish(status: number, txCount: number, entryCount: number, tickCount: number, keysVersion: number, errorOffset: number): Uint8Array {
    const matchEnd = RES_HEADER_WORDS + this.matchCount * MATCH_STRIDE;
    const end = matchEnd + this.unresolvedWords;
    if (end > this.words.length) this.growMain(end);
    const words = this.words;
    if (this.unresolvedWords > 0) words.set(this.unres.subarray(0, this.unresolvedWords), matchEnd);
    words[RES_STATUS] = status;
    words[RES_TX_COUNT] = txCount;
    words[RES_ENTRY_COUNT] = entryCount;
    words[RES_TICK_COUNT] = tickCount;
    words[RES_MATCH_COUNT] = this.matchCount;
    words[RES_KEYS_VERSION] = keysVersion;
    words[RES_ERROR_OFFSET] = errorOffset;
    words[RES_UNRESOLVED_COUNT] = this.unresolvedCount;
    words[RES_UNRESOLVED_WORDS] = this.unresolvedWords;
    return this.bytes.subarray(0, end * 4);
  }

  private growMain(need: number): void {
    let size = this.words.length * 2;
    while (size < need) size *= 2;
    const grown = new Uint32Array(size);
    grown.set(this.words);
    this.words = grown;
    this.bytes = new Uint8Array(grown.buffer);
  }

  private growUnresolved(need: number): void {
    let size = this.unres.length * 2;
    while (size < need) size *= 2;
    const grown = new Uint32Array(size);
    grown.set(this.unres);
    this.unres = grown;
    this.unresBytes = new Uint8Array(grown.buffer);
  }
}

/** Byte loop, not `set(subarray())`: no view object per copy on the hot path (copies are short). */
function copyBytes(from: Uint8Array, at: number, to: Uint8Array, into: number, length: number): void {
  for (let i = 0; i < length; i++) to[into + i] = from[at + i]!;
}
