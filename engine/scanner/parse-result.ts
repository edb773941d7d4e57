/**
 * ParseResult: read access to one result record of a parse worker (match-layout.ts) as it sits in
 * a results ring. A view, not a copy: valid until the pool's drain callback returns.
 */
import type { ParseStatus } from '../chain/parse-layout.js';
import type { RingRecord } from './byte-ring.js';
import {
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
  RES_TX_COUNT,
  SIGNATURE_WORDS,
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

  /** Points this view at a results-ring record (the payload is 4-aligned: rings align to 8). */
  attach(worker: number, record: RingRecord): this {
    const p = record.payload;
    this.worker = worker;
    this.slotLo = record.slotLo;
    this.slotHi = record.slotHi;
    this.receivedAt = record.receivedAt;
    this.words = new Uint32Array(p.buffer, p.byteOffset, p.length >>> 2);
    this.bytes = p;
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
  /** Static account key index at which the pool key appears. */
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
}
