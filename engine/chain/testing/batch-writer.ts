/**
 * Test support: writes entry batches field by field, recording where each field starts, so a
 * test can cut or corrupt exactly one field and know the error offset the parser must report.
 * It writes whatever it is told, malformed encodings included.
 */
import { writeCompactU16 } from '../compact-u16.js';

export class ByteWriter {
  private buf = new Uint8Array(512);
  pos = 0;

  private reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }

  u8(v: number): this {
    this.reserve(1);
    this.buf[this.pos++] = v;
    return this;
  }

  /** u64 little-endian from two u32 words. */
  u64(lo: number, hi = 0): this {
    this.reserve(8);
    const view = new DataView(this.buf.buffer);
    view.setUint32(this.pos, lo >>> 0, true);
    view.setUint32(this.pos + 4, hi >>> 0, true);
    this.pos += 8;
    return this;
  }

  raw(bytes: ArrayLike<number>): this {
    this.reserve(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
    return this;
  }

  fill(n: number, v: number): this {
    this.reserve(n);
    this.buf.fill(v, this.pos, this.pos + n);
    this.pos += n;
    return this;
  }

  /** A compact-u16, or the given raw bytes in its place. */
  compact(v: number, raw?: readonly number[]): this {
    if (raw !== undefined) return this.raw(raw);
    this.reserve(3);
    this.pos = writeCompactU16(this.buf, this.pos, v);
    return this;
  }

  bytes(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }
}

export interface CraftedInstruction {
  programIdIndex: number;
  accounts: readonly number[];
  data?: readonly number[];
  /** Raw bytes instead of the account count / data length compact-u16. */
  accountCountRaw?: readonly number[];
  dataLengthRaw?: readonly number[];
}

export interface CraftedLookup {
  writableIndexes: readonly number[];
  readonlyIndexes: readonly number[];
  writableCountRaw?: readonly number[];
  readonlyCountRaw?: readonly number[];
}

export interface CraftedTx {
  /** undefined: legacy; else the first message byte (0x80 = v0). */
  versionByte?: number;
  signatureCount: number;
  signatureCountRaw?: readonly number[];
  header: readonly [number, number, number];
  keyCount: number;
  keyCountRaw?: readonly number[];
  instructions: readonly CraftedInstruction[];
  instructionCountRaw?: readonly number[];
  lookups?: readonly CraftedLookup[];
  lookupCountRaw?: readonly number[];
}

export interface TxOffsets {
  start: number;
  signatureCount: number;
  signatures: number;
  message: number;
  keyCount: number;
  keys: number;
  blockhash: number;
  instructionCount: number;
  instructions: { programIdIndex: number; accountCount: number; accounts: number; dataLength: number; data: number }[];
  lookupCount: number;
  lookups: { key: number; writableCount: number; writable: number; readonlyCount: number; readonly: number }[];
  end: number;
}

/** Legacy: 1 signer, 3 keys (payer, writable account, program), one instruction. */
export function legacyTx(over: Partial<CraftedTx> = {}): CraftedTx {
  return {
    signatureCount: 1,
    header: [1, 0, 1],
    keyCount: 3,
    instructions: [{ programIdIndex: 2, accounts: [0, 1], data: [7, 8, 9] }],
    ...over,
  };
}

/** v0: 1 signer, 3 static keys, one lookup with 1 writable and 1 readonly index (5 accounts). */
export function v0Tx(over: Partial<CraftedTx> = {}): CraftedTx {
  return {
    versionByte: 0x80,
    signatureCount: 1,
    header: [1, 0, 1],
    keyCount: 3,
    instructions: [{ programIdIndex: 2, accounts: [0, 3, 4], data: [] }],
    lookups: [{ writableIndexes: [5], readonlyIndexes: [6] }],
    ...over,
  };
}

export function writeTx(w: ByteWriter, tx: CraftedTx): TxOffsets {
  const start = w.pos;
  w.compact(tx.signatureCount, tx.signatureCountRaw);
  const signatures = w.pos;
  for (let i = 0; i < tx.signatureCount; i++) w.fill(64, 0x40 + (i & 0x3f));
  const message = w.pos;
  if (tx.versionByte !== undefined) w.u8(tx.versionByte);
  w.raw(tx.header);
  const keyCount = w.pos;
  w.compact(tx.keyCount, tx.keyCountRaw);
  const keys = w.pos;
  for (let i = 0; i < tx.keyCount; i++) w.fill(32, (i + 1) & 0xff);
  const blockhash = w.pos;
  w.fill(32, 0xbb);
  const instructionCount = w.pos;
  w.compact(tx.instructions.length, tx.instructionCountRaw);
  const instructions: TxOffsets['instructions'] = [];
  for (const ix of tx.instructions) {
    const programIdIndex = w.pos;
    w.u8(ix.programIdIndex);
    const accountCount = w.pos;
    w.compact(ix.accounts.length, ix.accountCountRaw);
    const accounts = w.pos;
    w.raw(ix.accounts);
    const dataLength = w.pos;
    const data = ix.data ?? [];
    w.compact(data.length, ix.dataLengthRaw);
    const dataAt = w.pos;
    w.raw(data);
    instructions.push({ programIdIndex, accountCount, accounts, dataLength, data: dataAt });
  }
  const lookupCount = w.pos;
  const lookups: TxOffsets['lookups'] = [];
  if (tx.versionByte !== undefined) {
    const list = tx.lookups ?? [];
    w.compact(list.length, tx.lookupCountRaw);
    for (const l of list) {
      const key = w.pos;
      w.fill(32, 0xcc);
      const writableCount = w.pos;
      w.compact(l.writableIndexes.length, l.writableCountRaw);
      const writable = w.pos;
      w.raw(l.writableIndexes);
      const readonlyCount = w.pos;
      w.compact(l.readonlyIndexes.length, l.readonlyCountRaw);
      const readonly = w.pos;
      w.raw(l.readonlyIndexes);
      lookups.push({ key, writableCount, writable, readonlyCount, readonly });
    }
  }
  return { start, signatureCount: start, signatures, message, keyCount, keys, blockhash, instructionCount, instructions, lookupCount, lookups, end: w.pos };
}

export interface CraftedEntry {
  numHashes?: number;
  txs: readonly CraftedTx[];
  /** Written instead of txs.length. */
  txCount?: number;
}

export interface BatchOffsets {
  bytes: Uint8Array;
  entries: { start: number; txCount: number; txs: TxOffsets[] }[];
}

/** A `Vec<Entry>` payload and the offsets of everything in it. */
export function writeBatch(entries: readonly CraftedEntry[], trailing: readonly number[] = []): BatchOffsets {
  const w = new ByteWriter();
  w.u64(entries.length);
  const out: BatchOffsets['entries'] = [];
  entries.forEach((entry, e) => {
    const start = w.pos;
    w.u64(entry.numHashes ?? 100 + e);
    w.fill(32, 0xe0 + (e & 0x0f));
    const txCount = w.pos;
    w.u64(entry.txCount ?? entry.txs.length);
    out.push({ start, txCount, txs: entry.txs.map((tx) => writeTx(w, tx)) });
  });
  w.raw(trailing);
  return { bytes: w.bytes(), entries: out };
}
