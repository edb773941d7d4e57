/**
 * EntryBatchIndex: owns the output arrays of a parse (parse-layout.ts) and reuses them from batch
 * to batch. The arrays start preallocated, grow in steps when a parse stops with OutputFull (the
 * parse is then retried), and never grow past what the input's length can need.
 */
import { parseEntriesInto } from './entry-parser.js';
import type { KeySet } from './key-set.js';
import {
  COUNT_ENTRIES,
  COUNT_ERROR_OFFSET,
  COUNT_PROGRAMS,
  COUNT_TXS,
  COUNTS_LENGTH,
  ENTRY_FIRST_TX,
  ENTRY_HASH_OFFSET,
  ENTRY_NUM_HASHES_HI,
  ENTRY_NUM_HASHES_LO,
  ENTRY_STRIDE,
  ENTRY_TX_COUNT,
  MIN_ENTRY_BYTES,
  ParseStatus,
  PUBKEY_BYTES,
  SIGNATURE_BYTES,
  TX_BLOCKHASH_OFFSET,
  TX_END,
  TX_ENTRY,
  TX_HEADER,
  TX_IX_COUNT,
  TX_IX_OFFSET,
  TX_KEY_COUNT,
  TX_KEYS_OFFSET,
  TX_LOOKUP_COUNT,
  TX_LOOKUP_OFFSET,
  TX_PROGRAMS_COUNT,
  TX_PROGRAMS_START,
  TX_SIG_COUNT,
  TX_SIG_OFFSET,
  TX_START,
  TX_STRIDE,
  TX_VERSION,
  VERSION_LEGACY,
  type ParseEntriesFn,
} from './parse-layout.js';

/**
 * Smallest transaction that passes the header checks: 1 signature (1 + 64), legacy header (3),
 * 1 key (1 + 32), blockhash (32), no instructions (1). Bounds the transaction records of a payload.
 */
export const MIN_TX_BYTES = 134;
/** Smallest instruction (program-id index, empty accounts, empty data): bounds program records. */
export const MIN_INSTRUCTION_BYTES = 3;

export interface EntryBatchCapacity {
  entries?: number;
  txs?: number;
  programs?: number;
}

const DEFAULT_CAPACITY = { entries: 256, txs: 4096, programs: 16384 };

export class EntryBatchIndex {
  /** ENTRY_STRIDE words per entry. Replaced (not resized in place) when the index grows. */
  entries: Uint32Array;
  /** TX_STRIDE words per transaction. */
  txs: Uint32Array;
  programs: Uint8Array;
  readonly counts = new Uint32Array(COUNTS_LENGTH);
  /** The payload of the last parse; records are offsets into it. */
  bytes: Uint8Array = new Uint8Array(0);
  status: ParseStatus = ParseStatus.Ok;
  /** How many times the arrays were grown since construction (a metric for sizing). */
  growCount = 0;

  constructor(capacity: EntryBatchCapacity = {}) {
    this.entries = new Uint32Array((capacity.entries ?? DEFAULT_CAPACITY.entries) * ENTRY_STRIDE);
    this.txs = new Uint32Array((capacity.txs ?? DEFAULT_CAPACITY.txs) * TX_STRIDE);
    this.programs = new Uint8Array(capacity.programs ?? DEFAULT_CAPACITY.programs);
  }

  /**
   * Parses one payload into this index, growing the arrays as needed. The previous batch's
   * records are overwritten. Never throws on malformed input: check the returned status.
   */
  parse(bytes: Uint8Array, parseFn: ParseEntriesFn = parseEntriesInto): ParseStatus {
    this.bytes = bytes;
    let status = parseFn(bytes, this.entries, this.txs, this.programs, this.counts);
    // Each growth at least doubles one array and none passes its bound for this input, so the
    // loop ends; the bound check guards against a parser that keeps reporting OutputFull.
    while (status === ParseStatus.OutputFull && this.grow(bytes.length)) {
      status = parseFn(bytes, this.entries, this.txs, this.programs, this.counts);
    }
    this.status = status;
    return status;
  }

  get entryCount(): number {
    return this.counts[COUNT_ENTRIES]!;
  }
  get txCount(): number {
    return this.counts[COUNT_TXS]!;
  }
  get programCount(): number {
    return this.counts[COUNT_PROGRAMS]!;
  }
  get errorOffset(): number {
    return this.counts[COUNT_ERROR_OFFSET]!;
  }

  // ---- entries

  entryNumHashes(entry: number): bigint {
    const o = entry * ENTRY_STRIDE;
    return (BigInt(this.entries[o + ENTRY_NUM_HASHES_HI]!) << 32n) | BigInt(this.entries[o + ENTRY_NUM_HASHES_LO]!);
  }
  entryHash(entry: number): Uint8Array {
    const at = this.entries[entry * ENTRY_STRIDE + ENTRY_HASH_OFFSET]!;
    return this.bytes.subarray(at, at + 32);
  }
  entryTxCount(entry: number): number {
    return this.entries[entry * ENTRY_STRIDE + ENTRY_TX_COUNT]!;
  }
  entryFirstTx(entry: number): number {
    return this.entries[entry * ENTRY_STRIDE + ENTRY_FIRST_TX]!;
  }

  // ---- transactions (txIndex in payload order)

  /** One word of a transaction record (TX_* constants of parse-layout.ts). */
  txField(tx: number, field: number): number {
    return this.txs[tx * TX_STRIDE + field]!;
  }
  txEntry(tx: number): number {
    return this.txs[tx * TX_STRIDE + TX_ENTRY]!;
  }
  /** The transaction's wire bytes (a view, not a copy). */
  txBytes(tx: number): Uint8Array {
    const o = tx * TX_STRIDE;
    return this.bytes.subarray(this.txs[o + TX_START]!, this.txs[o + TX_END]!);
  }
  /** Offset of signature `i` (0 = the transaction id). */
  signatureOffset(tx: number, i = 0): number {
    return this.txs[tx * TX_STRIDE + TX_SIG_OFFSET]! + i * SIGNATURE_BYTES;
  }
  signatureCount(tx: number): number {
    return this.txs[tx * TX_STRIDE + TX_SIG_COUNT]!;
  }
  isLegacy(tx: number): boolean {
    return this.txs[tx * TX_STRIDE + TX_VERSION] === VERSION_LEGACY;
  }
  numRequiredSignatures(tx: number): number {
    return this.txs[tx * TX_STRIDE + TX_HEADER]! & 0xff;
  }
  numReadonlySigned(tx: number): number {
    return (this.txs[tx * TX_STRIDE + TX_HEADER]! >>> 8) & 0xff;
  }
  numReadonlyUnsigned(tx: number): number {
    return (this.txs[tx * TX_STRIDE + TX_HEADER]! >>> 16) & 0xff;
  }
  keyCount(tx: number): number {
    return this.txs[tx * TX_STRIDE + TX_KEY_COUNT]!;
  }
  /** Offset of static account key `k`. */
  keyOffset(tx: number, k: number): number {
    return this.txs[tx * TX_STRIDE + TX_KEYS_OFFSET]! + k * PUBKEY_BYTES;
  }
  /** Whether static account key `k` is writable (Solana's header rule). */
  isStaticKeyWritable(tx: number, k: number): boolean {
    const header = this.txs[tx * TX_STRIDE + TX_HEADER]!;
    const required = header & 0xff;
    if (k < required) return k < required - ((header >>> 8) & 0xff);
    return k - required < this.keyCount(tx) - required - ((header >>> 16) & 0xff);
  }
  blockhashOffset(tx: number): number {
    return this.txs[tx * TX_STRIDE + TX_BLOCKHASH_OFFSET]!;
  }
  instructionCount(tx: number): number {
    return this.txs[tx * TX_STRIDE + TX_IX_COUNT]!;
  }
  instructionsOffset(tx: number): number {
    return this.txs[tx * TX_STRIDE + TX_IX_OFFSET]!;
  }
  lookupCount(tx: number): number {
    return this.txs[tx * TX_STRIDE + TX_LOOKUP_COUNT]!;
  }
  lookupsOffset(tx: number): number {
    return this.txs[tx * TX_STRIDE + TX_LOOKUP_OFFSET]!;
  }
  /** Distinct program ids invoked by the transaction. */
  programIdCount(tx: number): number {
    return this.txs[tx * TX_STRIDE + TX_PROGRAMS_COUNT]!;
  }
  /** Static key index of the transaction's `j`-th distinct program id (order of first use). */
  programIdIndex(tx: number, j: number): number {
    return this.programs[this.txs[tx * TX_STRIDE + TX_PROGRAMS_START]! + j]!;
  }

  /**
   * Id in `keys` of the first static account key of the transaction that is in the set, or -1.
   * Keys loaded through address tables are not seen (their addresses live on chain).
   */
  firstStaticKeyIn(tx: number, keys: KeySet): number {
    const o = tx * TX_STRIDE;
    const n = this.txs[o + TX_KEY_COUNT]!;
    let at = this.txs[o + TX_KEYS_OFFSET]!;
    for (let k = 0; k < n; k++, at += PUBKEY_BYTES) {
      const id = keys.idAt(this.bytes, at);
      if (id >= 0) return id;
    }
    return -1;
  }

  /**
   * Grows the arrays after OutputFull: every array that is full grows to at least twice its
   * size, extrapolated from how far the parse got, capped by what `inputLength` bytes can hold.
   * Returns false when nothing can grow (the parser's OutputFull was not about capacity).
   */
  private grow(inputLength: number): boolean {
    const counts = this.counts;
    const stoppedAt = Math.max(counts[COUNT_ERROR_OFFSET]!, 1);
    const scale = Math.max(2, (inputLength / stoppedAt) * 1.25);
    const entryBound = Math.floor(Math.max(inputLength - 8, 0) / MIN_ENTRY_BYTES);
    const txBound = Math.floor(inputLength / MIN_TX_BYTES);
    const programBound = Math.floor(inputLength / MIN_INSTRUCTION_BYTES);
    let grew = false;

    const entryCap = this.entries.length / ENTRY_STRIDE;
    if (counts[COUNT_ENTRIES]! >= entryCap && entryCap < entryBound) {
      this.entries = new Uint32Array(nextCapacity(entryCap, scale, entryBound) * ENTRY_STRIDE);
      grew = true;
    }
    const txCap = this.txs.length / TX_STRIDE;
    if (counts[COUNT_TXS]! >= txCap && txCap < txBound) {
      this.txs = new Uint32Array(nextCapacity(txCap, scale, txBound) * TX_STRIDE);
      grew = true;
    }
    const programCap = this.programs.length;
    if (counts[COUNT_PROGRAMS]! >= programCap && programCap < programBound) {
      this.programs = new Uint8Array(nextCapacity(programCap, scale, programBound));
      grew = true;
    }
    if (grew) this.growCount++;
    return grew;
  }
}

function nextCapacity(current: number, scale: number, bound: number): number {
  return Math.min(bound, Math.max(Math.ceil(current * scale), current + 16));
}
