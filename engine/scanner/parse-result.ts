/**
 * ParseResult: read access to one result record of a parse worker (match-layout.ts) as it sits in
 * a results ring. A view, not a copy: valid until the pool's drain callback returns.
 */
import { base58 } from '../chain/index.js';
import { PUBKEY_BYTES, type ParseStatus } from '../chain/index.js';
import type { AddressTableLookup } from '../chain/index.js';
import type { RingRecord } from '../threads/index.js';
import { invalidArgument } from '../errors.js';
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
  SIGNATURE_WORDS,
  MATCH_VIA_LOOKUP,
  UNRES_FIXED_WORDS,
  UNRES_LOOKUP_COUNT,
  UNRES_REASON,
  UNRES_SIG_OFFSET,
  UNRES_SIGNATURE,
  UNRES_STATIC_KEYS,
  UNRES_TX,
  UNRES_WORDS,
  type UnresolvedReason,
} from './match-layout.js';

export class ParseResult {
  /** Index of the worker (and of its input ring) that parsed the batch. */
  worker = 0;
  slotLo = 0;
  slotHi = 0;
  /** The batch's receivedAt, as given to ParsePool.submit. */
  receivedAt = 0;
  private words: Uint32Array = new Uint32Array(0);
  private bytes: Uint8Array = new Uint8Array(0);
  /** Word offset of each unresolved record, found on first use after attach (-1: not yet). */
  private unresolvedAt = new Int32Array(16);
  private unresolvedIndexed = -1;

  /** Points this view at a results-ring record (the payload is 4-aligned: rings align to 8). */
  attach(worker: number, record: RingRecord): this {
    const p = record.payload;
    this.worker = worker;
    this.slotLo = record.slotLo;
    this.slotHi = record.slotHi;
    this.receivedAt = record.receivedAt;
    this.words = new Uint32Array(p.buffer, p.byteOffset, p.length >>> 2);
    this.bytes = p;
    this.unresolvedIndexed = -1;
    return this;
  }

  get slot(): number {
    return this.slotHi * 4294967296 + this.slotLo;
  }
  slotBigInt(): bigint {
    return (BigInt(this.slotHi) << 32n) | BigInt(this.slotLo);
  }
  get status(): ParseStatus {
    return this.words[RES_STATUS]! as ParseStatus;
  }
  get txCount(): number {
    return this.words[RES_TX_COUNT]!;
  }
  get entryCount(): number {
    return this.words[RES_ENTRY_COUNT]!;
  }
  /** Entries of the batch without transactions: ticks (a slot's last entry is its last tick). */
  get tickCount(): number {
    return this.words[RES_TICK_COUNT]!;
  }
  get matchCount(): number {
    return this.words[RES_MATCH_COUNT]!;
  }
  get keysVersion(): number {
    return this.words[RES_KEYS_VERSION]!;
  }
  get errorOffset(): number {
    return this.words[RES_ERROR_OFFSET]!;
  }
  /** Transaction index (payload order) of match `i`. */
  matchTx(i: number): number {
    return this.words[RES_HEADER_WORDS + i * MATCH_STRIDE + MATCH_TX]!;
  }
  /** Pool id (index in the key table) of match `i`. */
  matchPool(i: number): number {
    return this.words[RES_HEADER_WORDS + i * MATCH_STRIDE + MATCH_POOL]!;
  }
  /**
   * Account index of the pool in the transaction: a static key index, or for a pool loaded through
   * a lookup table (matchViaLookup) its index in the v0 account list (static keys, then every
   * lookup's writable addresses, then every lookup's readonly ones).
   */
  matchKeyIndex(i: number): number {
    return this.words[RES_HEADER_WORDS + i * MATCH_STRIDE + MATCH_KEY_INDEX]!;
  }
  /** Offset of the transaction's first signature in the batch payload. */
  matchSignatureOffset(i: number): number {
    return this.words[RES_HEADER_WORDS + i * MATCH_STRIDE + MATCH_SIG_OFFSET]!;
  }
  /** The transaction's first signature (64 bytes; a view: copy it to keep it). */
  matchSignature(i: number): Uint8Array {
    const at = (RES_HEADER_WORDS + i * MATCH_STRIDE + MATCH_SIGNATURE) * 4;
    return this.bytes.subarray(at, at + SIGNATURE_WORDS * 4);
  }
  /** MATCH_FLAGS word of match `i` (MATCH_VIA_* bits). */
  matchFlags(i: number): number {
    return this.words[RES_HEADER_WORDS + i * MATCH_STRIDE + MATCH_FLAGS]!;
  }
  /** Whether match `i`'s pool was loaded through an address lookup table. */
  matchViaLookup(i: number): boolean {
    return (this.matchFlags(i) & MATCH_VIA_LOOKUP) !== 0;
  }

  // ---- unresolved transactions: v0 lookups the worker could not settle (see LookupMatcher)

  /** Transactions whose lookups are left to the pool's thread. */
  get unresolvedCount(): number {
    return this.words[RES_UNRESOLVED_COUNT] ?? 0;
  }
  /** Transaction index (payload order) of unresolved record `j`. */
  unresolvedTx(j: number): number {
    return this.words[this.unresolvedOffset(j) + UNRES_TX]!;
  }
  /** Why the worker could not settle it. */
  unresolvedReason(j: number): UnresolvedReason {
    return this.words[this.unresolvedOffset(j) + UNRES_REASON]! as UnresolvedReason;
  }
  /** Static account keys of the transaction: loaded accounts are numbered from here. */
  unresolvedStaticKeyCount(j: number): number {
    return this.words[this.unresolvedOffset(j) + UNRES_STATIC_KEYS]!;
  }
  unresolvedSignatureOffset(j: number): number {
    return this.words[this.unresolvedOffset(j) + UNRES_SIG_OFFSET]!;
  }
  /** The transaction's first signature (64 bytes; a view: copy it to keep it). */
  unresolvedSignature(j: number): Uint8Array {
    const at = (this.unresolvedOffset(j) + UNRES_SIGNATURE) * 4;
    return this.bytes.subarray(at, at + SIGNATURE_WORDS * 4);
  }
  unresolvedLookupCount(j: number): number {
    return this.words[this.unresolvedOffset(j) + UNRES_LOOKUP_COUNT]!;
  }
  /** The transaction's lookups, decoded (allocates: base58 table addresses, index arrays). */
  unresolvedLookups(j: number): AddressTableLookup[] {
    const at = this.unresolvedOffset(j);
    const count = this.words[at + UNRES_LOOKUP_COUNT]!;
    const out: AddressTableLookup[] = [];
    let w = at + UNRES_FIXED_WORDS;
    for (let l = 0; l < count; l++) {
      const counts = this.words[w + LOOKUP_COUNTS]!;
      const wc = counts & 0xffff;
      const rc = counts >>> 16;
      const b = (w + LOOKUP_HEADER_WORDS) * 4;
      out.push({
        accountKey: base58.encodeAt(this.bytes, (w + LOOKUP_KEY) * 4, PUBKEY_BYTES),
        writableIndexes: Array.from(this.bytes.subarray(b, b + wc)),
        readonlyIndexes: Array.from(this.bytes.subarray(b + wc, b + wc + rc)),
      });
      w += LOOKUP_HEADER_WORDS + ((wc + rc + 3) >>> 2);
    }
    return out;
  }

  private unresolvedOffset(j: number): number {
    if (this.unresolvedIndexed < 0) this.indexUnresolved();
    if (!(j >= 0 && j < this.unresolvedIndexed)) throw invalidArgument('j', j, `unresolved record ${j} of ${this.unresolvedIndexed}`);
    return this.unresolvedAt[j]!;
  }

  private indexUnresolved(): void {
    const n = this.unresolvedCount;
    if (this.unresolvedAt.length < n) this.unresolvedAt = new Int32Array(Math.max(n, this.unresolvedAt.length * 2));
    let w = RES_HEADER_WORDS + this.matchCount * MATCH_STRIDE;
    for (let j = 0; j < n; j++) {
      this.unresolvedAt[j] = w;
      w += this.words[w + UNRES_WORDS]!;
    }
    this.unresolvedIndexed = n;
  }
}
