/**
 * Test inputs for the entry parsers (native-parser.test.ts): a byte writer that records where each
 * field of a transaction starts, so a test can cut or corrupt one field and know the exact error
 * offset; seeded random valid batches (legacy and v0, unsigned: the parsers never verify
 * signatures); and mutations of them. Writes whatever it is told, including malformed encodings.
 */
import type { Prng } from '../prng.js';
import { writeCompactU16 } from './compact-u16.js';

/** What the generators need from a seeded generator (engine/prng.ts's Prng). */
export type Rng = Pick<Prng, 'int'>;

export class Writer {
  private buf = new Uint8Array(1024);
  pos = 0;

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }

  u8(v: number): void {
    this.room(1);
    this.buf[this.pos++] = v;
  }

  u32(v: number): void {
    this.room(4);
    new DataView(this.buf.buffer).setUint32(this.pos, v, true);
    this.pos += 4;
  }

  /** A bincode u64 below 2^32. */
  u64(v: number): void {
    this.u32(v);
    this.u32(0);
  }

  raw(bytes: ArrayLike<number>): void {
    this.room(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  fill(n: number, v: number): void {
    this.room(n);
    this.buf.fill(v, this.pos, this.pos + n);
    this.pos += n;
  }

  /** A compact-u16, or `override` bytes in its place. */
  compact(v: number, override?: readonly number[]): void {
    if (override !== undefined) return this.raw(override);
    this.room(3);
    this.pos = writeCompactU16(this.buf, this.pos, v);
  }

  bytes(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }
}

export interface IxSpec {
  program: number;
  accounts: readonly number[];
  data: readonly number[];
  accountsCountBytes?: readonly number[];
  dataLenBytes?: readonly number[];
}

export interface LookupSpec {
  /** How many writable / readonly indexes (their values are arbitrary). */
  writable: number;
  readonly: number;
  writableCountBytes?: readonly number[];
  readonlyCountBytes?: readonly number[];
}

export interface TxSpec {
  /** First message byte of a versioned message (0x80 = v0); undefined for legacy. */
  versionByte?: number;
  sigs: number;
  sigCountBytes?: readonly number[];
  /** numRequiredSignatures, numReadonlySigned, numReadonlyUnsigned. */
  header: readonly [number, number, number];
  keyCount: number;
  keyCountBytes?: readonly number[];
  ixs: readonly IxSpec[];
  ixCountBytes?: readonly number[];
  /** v0 only. */
  lookups?: readonly LookupSpec[];
  lookupCountBytes?: readonly number[];
}

/** Offsets of the fields writeTx wrote. `...At` is a compact-u16, the plain name what follows it. */
export interface TxMarks {
  start: number;
  sigOffset: number;
  message: number;
  keyCountAt: number;
  keys: number;
  blockhash: number;
  ixCountAt: number;
  ixs: { program: number; accountsAt: number; accounts: number; dataAt: number; data: number }[];
  lookupCountAt: number;
  lookups: { key: number; writableAt: number; writable: number; readonlyAt: number; readonly: number }[];
  end: number;
}

/** legacy, 1 signer, 3 keys (payer, a writable account, a program), one instruction. */
export function legacyTx(over: Partial<TxSpec> = {}): TxSpec {
  return {
    sigs: 1,
    header: [1, 0, 1],
    keyCount: 3,
    ixs: [{ program: 2, accounts: [0, 1], data: [1, 2, 3] }],
    ...over,
  };
}

/** v0, 1 signer, 3 static keys, one lookup (1 writable, 1 readonly): 5 accounts. */
export function v0Tx(over: Partial<TxSpec> = {}): TxSpec {
  return {
    versionByte: 0x80,
    sigs: 1,
    header: [1, 0, 1],
    keyCount: 3,
    ixs: [{ program: 2, accounts: [0, 3, 4], data: [] }],
    lookups: [{ writable: 1, readonly: 1 }],
    ...over,
  };
}

export function writeTx(w: Writer, tx: TxSpec): TxMarks {
  const start = w.pos;
  w.compact(tx.sigs, tx.sigCountBytes);
  const sigOffset = w.pos;
  for (let i = 0; i < tx.sigs; i++) w.fill(64, 0x50 + (i & 0x0f));
  const message = w.pos;
  if (tx.versionByte !== undefined) w.u8(tx.versionByte);
  w.raw(tx.header);
  const keyCountAt = w.pos;
  w.compact(tx.keyCount, tx.keyCountBytes);
  const keys = w.pos;
  for (let i = 0; i < tx.keyCount; i++) w.fill(32, i & 0xff);
  const blockhash = w.pos;
  w.fill(32, 0xbb);
  const ixCountAt = w.pos;
  w.compact(tx.ixs.length, tx.ixCountBytes);
  const ixs: TxMarks['ixs'] = [];
  for (const ix of tx.ixs) {
    const program = w.pos;
    w.u8(ix.program);
    const accountsAt = w.pos;
    w.compact(ix.accounts.length, ix.accountsCountBytes);
    const accounts = w.pos;
    w.raw(ix.accounts);
    const dataAt = w.pos;
    w.compact(ix.data.length, ix.dataLenBytes);
    const data = w.pos;
    w.raw(ix.data);
    ixs.push({ program, accountsAt, accounts, dataAt, data });
  }
  const lookupCountAt = w.pos;
  const lookups: TxMarks['lookups'] = [];
  if (tx.versionByte !== undefined) {
    const list = tx.lookups ?? [];
    w.compact(list.length, tx.lookupCountBytes);
    for (const l of list) {
      const key = w.pos;
      w.fill(32, 0xcc);
      const writableAt = w.pos;
      w.compact(l.writable, l.writableCountBytes);
      const writable = w.pos;
      for (let i = 0; i < l.writable; i++) w.u8(i & 0xff);
      const readonlyAt = w.pos;
      w.compact(l.readonly, l.readonlyCountBytes);
      const readonly = w.pos;
      for (let i = 0; i < l.readonly; i++) w.u8((i + 7) & 0xff);
      lookups.push({ key, writableAt, writable, readonlyAt, readonly });
    }
  }
  return { start, sigOffset, message, keyCountAt, keys, blockhash, ixCountAt, ixs, lookupCountAt, lookups, end: w.pos };
}

/** A valid random transaction: legacy or v0, a few signers, instructions and lookups. */
export function randomTx(rng: Rng): TxSpec {
  const v0 = rng.int(2) === 0;
  const required = 1 + rng.int(3);
  const readonlySigned = rng.int(required);
  const readonlyUnsigned = rng.int(4);
  const keyCount = required + readonlyUnsigned + rng.int(rng.int(8) === 0 ? 40 : 6);
  const lookups: LookupSpec[] = [];
  let loaded = 0;
  if (v0) {
    const n = rng.int(4);
    for (let i = 0; i < n; i++) {
      const l = { writable: rng.int(rng.int(6) === 0 ? 70 : 6), readonly: rng.int(6) };
      if (keyCount + loaded + l.writable + l.readonly > 256) break;
      loaded += l.writable + l.readonly;
      lookups.push(l);
    }
  }
  const total = keyCount + loaded;
  const ixs: IxSpec[] = [];
  const nIx = rng.int(rng.int(10) === 0 ? 12 : 5);
  for (let i = 0; i < nIx; i++) {
    const accounts = Array.from({ length: rng.int(rng.int(5) === 0 ? 140 : 8) }, () => rng.int(total));
    const data = Array.from({ length: rng.int(rng.int(5) === 0 ? 300 : 40) }, () => rng.int(256));
    ixs.push({ program: rng.int(keyCount), accounts, data });
  }
  const spec: TxSpec = { sigs: required, header: [required, readonlySigned, readonlyUnsigned], keyCount, ixs };
  return v0 ? { ...spec, versionByte: 0x80, lookups } : spec;
}

/** A valid random `Vec<Entry>` payload. */
export function randomBatch(rng: Rng, opts: { maxEntries?: number; maxTxs?: number } = {}): Uint8Array {
  const w = new Writer();
  const n = rng.int((opts.maxEntries ?? 6) + 1);
  w.u64(n);
  for (let e = 0; e < n; e++) {
    w.u32(rng.int(0x7fffffff));
    w.u32(rng.int(4));
    w.fill(32, e);
    const txs = rng.int((opts.maxTxs ?? 10) + 1);
    w.u64(txs);
    for (let t = 0; t < txs; t++) writeTx(w, randomTx(rng));
  }
  if (rng.int(8) === 0) w.fill(rng.int(20), 0xee); // trailing bytes are allowed
  return w.bytes();
}

const SPECIAL = [0x00, 0x01, 0x03, 0x04, 0x7f, 0x80, 0x81, 0xff];

/** 0 to 3 random edits: byte changes, cuts, inserts, deletes, count rewrites. */
export function mutate(rng: Rng, input: Uint8Array): Uint8Array {
  let b = input.slice();
  const edits = rng.int(4);
  for (let i = 0; i < edits; i++) {
    const at = b.length === 0 ? 0 : rng.int(b.length);
    switch (rng.int(7)) {
      case 0:
        if (b.length > 0) b[at] = rng.int(256);
        break;
      case 1:
        if (b.length > 0) b[at] = SPECIAL[rng.int(SPECIAL.length)]!;
        break;
      case 2:
        b = b.slice(0, at);
        break;
      case 3: {
        const extra = Uint8Array.from({ length: 1 + rng.int(4) }, () => SPECIAL[rng.int(SPECIAL.length)]!);
        const next = new Uint8Array(b.length + extra.length);
        next.set(b.subarray(0, at));
        next.set(extra, at);
        next.set(b.subarray(at), at + extra.length);
        b = next;
        break;
      }
      case 4: {
        const end = Math.min(b.length, at + 1 + rng.int(8));
        const next = new Uint8Array(b.length - (end - at));
        next.set(b.subarray(0, at));
        next.set(b.subarray(end), at);
        b = next;
        break;
      }
      case 5:
        // the entry count, including an impossible or high-word one
        if (b.length >= 8) new DataView(b.buffer).setUint32(rng.int(2) * 4, rng.int(3) === 0 ? rng.int(2 ** 32) : rng.int(8), true);
        break;
      default:
        // a 0x80-0xff byte where a compact-u16 or the first message byte may sit
        if (b.length > 0) b[at] = 0x80 | rng.int(128);
        break;
    }
  }
  return b;
}
