/**
 * TransactionView: lazy, read-only accessors over one parsed transaction. Nothing is decoded
 * until asked for; strings (base58) are made per call. A view copies its 16-word record and its
 * program list at construction, so it stays valid after the EntryBatchIndex parses another batch,
 * as long as the payload bytes are not modified.
 */
import { ErrorCode, TpError, invalidArgument } from '../errors.js';
import { readInstructions, readLookups } from './message-sections.js';
import * as base58 from './base58.js';
import { EntryBatchIndex } from './entry-batch-index.js';
import { parseEntriesInto } from './entry-parser.js';
import {
  HASH_BYTES,
  PARSE_STATUS_NAMES,
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

export type TransactionVersion = 'legacy' | 0;

export interface MessageHeader {
  numRequiredSignatures: number;
  numReadonlySigned: number;
  numReadonlyUnsigned: number;
}

export interface AddressTableLookup {
  accountKey: string;
  writableIndexes: number[];
  readonlyIndexes: number[];
}

export interface CompiledInstruction {
  programIdIndex: number;
  accounts: number[];
  /** A view into the payload, not a copy. */
  data: Uint8Array;
}

/** The per-transaction record of `tidepool decode entries`. */
export interface TransactionRecord {
  slot: string;
  entryIndex: number;
  signature: string;
  version: TransactionVersion;
  header: MessageHeader;
  accountKeys: string[];
  addressTableLookups: AddressTableLookup[];
  programIds: string[];
  recentBlockhash: string;
}

export class TransactionView {
  readonly bytes: Uint8Array;
  readonly txIndex: number;
  /** Slot of the batch, used by toJSON when no slot is passed. */
  readonly slot: bigint;
  private readonly record: Uint32Array;
  private readonly programIndexes: Uint8Array;

  constructor(bytes: Uint8Array, index: EntryBatchIndex, txIndex: number, slot: bigint = 0n) {
    if (!(txIndex >= 0 && txIndex < index.txCount)) {
      throw invalidArgument('txIndex', txIndex, `transaction ${txIndex} outside the batch's ${index.txCount}`);
    }
    this.bytes = bytes;
    this.txIndex = txIndex;
    this.slot = slot;
    const o = txIndex * TX_STRIDE;
    this.record = index.txs.slice(o, o + TX_STRIDE);
    const start = this.record[TX_PROGRAMS_START]!;
    this.programIndexes = index.programs.slice(start, start + this.record[TX_PROGRAMS_COUNT]!);
  }

  get entryIndex(): number {
    return this.record[TX_ENTRY]!;
  }

  get version(): TransactionVersion {
    return this.record[TX_VERSION] === VERSION_LEGACY ? 'legacy' : 0;
  }

  get header(): MessageHeader {
    const h = this.record[TX_HEADER]!;
    return { numRequiredSignatures: h & 0xff, numReadonlySigned: (h >>> 8) & 0xff, numReadonlyUnsigned: (h >>> 16) & 0xff };
  }

  get signatureCount(): number {
    return this.record[TX_SIG_COUNT]!;
  }

  get accountKeyCount(): number {
    return this.record[TX_KEY_COUNT]!;
  }

  get instructionCount(): number {
    return this.record[TX_IX_COUNT]!;
  }

  /** The transaction id: base58 of signature 0. */
  signature(): string {
    return base58.encodeAt(this.bytes, this.record[TX_SIG_OFFSET]!, SIGNATURE_BYTES);
  }

  signatures(): string[] {
    const out: string[] = [];
    const at = this.record[TX_SIG_OFFSET]!;
    for (let i = 0; i < this.signatureCount; i++) out.push(base58.encodeAt(this.bytes, at + i * SIGNATURE_BYTES, SIGNATURE_BYTES));
    return out;
  }

  /** The whole transaction as it appeared on the wire (a view). */
  wireBytes(): Uint8Array {
    return this.bytes.subarray(this.record[TX_START]!, this.record[TX_END]!);
  }

  /** The signed message bytes (a view). */
  messageBytes(): Uint8Array {
    const start = this.record[TX_SIG_OFFSET]! + this.signatureCount * SIGNATURE_BYTES;
    return this.bytes.subarray(start, this.record[TX_END]!);
  }

  /** Static account key `k` as bytes (a view). */
  accountKeyBytes(k: number): Uint8Array {
    if (!(k >= 0 && k < this.accountKeyCount)) throw invalidArgument('k', k, `account key ${k} outside ${this.accountKeyCount}`);
    const at = this.record[TX_KEYS_OFFSET]! + k * PUBKEY_BYTES;
    return this.bytes.subarray(at, at + PUBKEY_BYTES);
  }

  /** The static account keys, base58. */
  accountKeys(): string[] {
    const out: string[] = [];
    const at = this.record[TX_KEYS_OFFSET]!;
    for (let k = 0; k < this.accountKeyCount; k++) out.push(base58.encodeAt(this.bytes, at + k * PUBKEY_BYTES, PUBKEY_BYTES));
    return out;
  }

  /** Whether static key `k` is writable (Solana's header rule). */
  isWritable(k: number): boolean {
    const { numRequiredSignatures: r, numReadonlySigned, numReadonlyUnsigned } = this.header;
    if (k < r) return k < r - numReadonlySigned;
    return k - r < this.accountKeyCount - r - numReadonlyUnsigned;
  }

  recentBlockhash(): string {
    return base58.encodeAt(this.bytes, this.record[TX_BLOCKHASH_OFFSET]!, HASH_BYTES);
  }

  /** Distinct program ids, in order of first use. */
  programIds(): string[] {
    const at = this.record[TX_KEYS_OFFSET]!;
    const out: string[] = [];
    for (const k of this.programIndexes) out.push(base58.encodeAt(this.bytes, at + k * PUBKEY_BYTES, PUBKEY_BYTES));
    return out;
  }

  /** Static key indexes of the distinct program ids, in order of first use. */
  programIdIndexes(): number[] {
    return Array.from(this.programIndexes);
  }

  instructions(): CompiledInstruction[] {
    return readInstructions(this.bytes, this.record[TX_IX_OFFSET]!, this.instructionCount).map((ix) => ({
      programIdIndex: ix.programIdIndex,
      accounts: Array.from(ix.accounts),
      data: ix.data,
    }));
  }

  addressTableLookups(): AddressTableLookup[] {
    return readLookups(this.bytes, this.record[TX_LOOKUP_OFFSET]!, this.record[TX_LOOKUP_COUNT]!).map((l) => ({
      accountKey: base58.encodeAt(this.bytes, l.tableOffset, PUBKEY_BYTES),
      writableIndexes: Array.from(l.writableIndexes),
      readonlyIndexes: Array.from(l.readonlyIndexes),
    }));
  }

  /**
   * The record printed by `tidepool decode entries`. `slot` defaults to the view's slot (and
   * JSON.stringify's key argument is ignored).
   */
  toJSON(slot?: bigint | number | string): TransactionRecord {
    const s = typeof slot === 'bigint' || typeof slot === 'number' ? BigInt(slot) : this.slot;
    return {
      slot: s.toString(),
      entryIndex: this.entryIndex,
      signature: this.signature(),
      version: this.version,
      header: this.header,
      accountKeys: this.accountKeys(),
      addressTableLookups: this.addressTableLookups(),
      programIds: this.programIds(),
      recentBlockhash: this.recentBlockhash(),
    };
  }
}

/**
 * Parses one ShredStream payload and returns a view per transaction, in payload order. Throws
 * TpError(EntryMalformed) with context {status, offset, slot} when the payload is malformed.
 */
export function decodeEntryBatch(
  bytes: Uint8Array,
  slot: bigint,
  parseFn: ParseEntriesFn = parseEntriesInto,
): TransactionView[] {
  const index = new EntryBatchIndex(initialCapacityFor(bytes.length));
  const status = index.parse(bytes, parseFn);
  if (status !== ParseStatus.Ok) {
    const name = PARSE_STATUS_NAMES[status] ?? `status_${String(status)}`;
    throw new TpError(ErrorCode.EntryMalformed, `malformed entry batch: ${name} at offset ${index.errorOffset}`, {
      context: { status: name, offset: index.errorOffset, slot: slot.toString() },
    });
  }
  const views: TransactionView[] = [];
  for (let i = 0; i < index.txCount; i++) views.push(new TransactionView(bytes, index, i, slot));
  return views;
}

/** A one-shot index sized for the payload: no growth for typical batches, small for small ones. */
function initialCapacityFor(length: number): { entries: number; txs: number; programs: number } {
  return {
    entries: Math.min(256, Math.ceil(length / 48) + 1),
    txs: Math.min(4096, Math.ceil(length / 134) + 1),
    programs: Math.min(16384, Math.ceil(length / 3) + 1),
  };
}
