/**
 * The C++ parser against the TypeScript one and against parse-layout.ts: hand-made vectors for
 * every status with their exact error offsets, valid batches, and seeded random and mutated
 * inputs, all compared record for record. Plus the loader: TIDEPOOL_NATIVE=0, a missing add-on and
 * a broken one all fall back to the TypeScript parser without throwing.
 */
import { Prng } from '../prng.js';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { parseEntriesInto } from './entry-parser.js';
import { nativeParseEntries, nativeStatus, parseEntries } from './native-parser.js';
import {
  COUNT_ENTRIES,
  COUNT_ERROR_OFFSET,
  COUNT_PROGRAMS,
  COUNT_TXS,
  COUNTS_LENGTH,
  ENTRY_STRIDE,
  PARSE_STATUS_NAMES,
  ParseStatus,
  TX_STRIDE,
  type ParseEntriesFn,
} from './parse-layout.js';
import { availableParsers } from './parser-implementations.js';
import { generateMainnetMix } from './testing/mainnet-mix.js';
import {
  Writer,
  legacyTx,
  mutate,
  randomBatch,
  v0Tx,
  writeTx,
  type Rng,
  type TxSpec,
} from './native-parser-fixtures.js';

const native = nativeParseEntries;
const nativeDisabled = process.env.TIDEPOOL_NATIVE === '0';

interface Outcome {
  status: number;
  counts: Uint32Array;
  entries: Uint32Array;
  txs: Uint32Array;
  programs: Uint8Array;
}

interface Caps {
  entries: number;
  txs: number;
  programs: number;
}

const BIG: Caps = { entries: 512, txs: 4096, programs: 16384 };
/** Room for everything the small fuzz inputs can hold (3 entries x 3 txs x 12 instructions). */
const FUZZ: Caps = { entries: 16, txs: 64, programs: 512 };

/** Runs a parser on fresh arrays filled with a sentinel, so stray writes show up too. */
function run(parse: ParseEntriesFn, bytes: Uint8Array, caps: Caps = BIG): Outcome {
  const entries = new Uint32Array(caps.entries * ENTRY_STRIDE).fill(0xa5a5a5a5);
  const txs = new Uint32Array(caps.txs * TX_STRIDE).fill(0xa5a5a5a5);
  const programs = new Uint8Array(caps.programs).fill(0xa5);
  const counts = new Uint32Array(COUNTS_LENGTH).fill(0xa5a5a5a5);
  const status = parse(bytes, entries, txs, programs, counts);
  return { status, counts, entries, txs, programs };
}

function sameArrays(a: Uint8Array | Uint32Array, b: Uint8Array | Uint32Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

/** Empty when equal, else what differs. */
function difference(a: Outcome, b: Outcome): string {
  const out: string[] = [];
  if (a.status !== b.status) out.push(`status ${a.status} vs ${b.status}`);
  if (!sameArrays(a.counts, b.counts)) out.push(`counts [${a.counts.join()}] vs [${b.counts.join()}]`);
  if (!sameArrays(a.entries, b.entries)) out.push('entries differ');
  if (!sameArrays(a.txs, b.txs)) out.push('txs differ');
  if (!sameArrays(a.programs, b.programs)) out.push('programs differ');
  return out.join('; ');
}

function hex(bytes: Uint8Array, max = 160): string {
  return Buffer.from(bytes.subarray(0, max)).toString('hex') + (bytes.length > max ? '...' : '');
}


// ---- hand-made vectors

/** A batch of one entry holding the given transactions, with the offsets of every field. */
function batch(txs: TxSpec[], opts: { trailing?: number[]; txCount?: number } = {}) {
  const w = new Writer();
  w.u64(1);
  const entryStart = w.pos;
  w.u64(7);
  w.fill(32, 0x11);
  w.u64(opts.txCount ?? txs.length);
  const marks = txs.map((tx) => writeTx(w, tx));
  for (const b of opts.trailing ?? []) w.u8(b);
  return { bytes: w.bytes(), entryStart, marks };
}

interface Vector {
  name: string;
  bytes: Uint8Array;
  status: ParseStatus;
  offset: number;
  caps?: Caps;
  counts?: [number, number, number];
}

function vectors(): Vector[] {
  const v: Vector[] = [];
  const add = (name: string, bytes: Uint8Array, status: ParseStatus, offset: number, extra: Partial<Vector> = {}) =>
    v.push({ name, bytes, status, offset, ...extra });

  // Ok
  {
    const b = batch([legacyTx(), v0Tx()]);
    add('a legacy and a v0 transaction', b.bytes, ParseStatus.Ok, 0, { counts: [1, 2, 2] });
    const t = batch([legacyTx()], { trailing: [1, 2, 3] });
    add('trailing bytes after the last entry', t.bytes, ParseStatus.Ok, 0, { counts: [1, 1, 1] });
    const w = new Writer();
    w.u64(0);
    add('an empty entry vector', w.bytes(), ParseStatus.Ok, 0, { counts: [0, 0, 0] });
    const tick = batch([]);
    add('a tick (entry without transactions)', tick.bytes, ParseStatus.Ok, 0, { counts: [1, 0, 0] });
    const dup = batch([legacyTx({ ixs: [{ program: 2, accounts: [0], data: [] }, { program: 2, accounts: [1], data: [9] }, { program: 1, accounts: [], data: [] }] })]);
    add('repeated program ids listed once', dup.bytes, ParseStatus.Ok, 0, { counts: [1, 1, 2] });
    const max = batch([v0Tx({ keyCount: 6, header: [1, 0, 1], lookups: [{ writable: 125, readonly: 125 }], ixs: [{ program: 5, accounts: [255, 0], data: [] }] })]);
    add('exactly 256 accounts, index 255 used', max.bytes, ParseStatus.Ok, 0);
    const legacy256 = batch([legacyTx({ keyCount: 256, ixs: [{ program: 255, accounts: [255], data: [] }] })]);
    add('a legacy message with 256 static keys', legacy256.bytes, ParseStatus.Ok, 0);
  }

  // Truncated
  add('an empty payload', new Uint8Array(0), ParseStatus.Truncated, 0);
  add('a 7-byte entry count', new Uint8Array(7), ParseStatus.Truncated, 0);
  {
    // Two entries declared; the first one's transaction eats bytes so the second runs short.
    const full = (() => {
      const w = new Writer();
      w.u64(2);
      w.u64(1);
      w.fill(32, 1);
      w.u64(1);
      writeTx(w, legacyTx());
      return w;
    })();
    const second = full.pos;
    full.u64(1);
    full.fill(32, 2);
    full.u64(0);
    const base = full.bytes();
    // The second entry's num_hashes, hash, then tx count run past the end.
    for (const [cut, at] of [
      [second + 4, second],
      [second + 8, second + 8],
      [second + 39, second + 8],
      [second + 40, second + 40],
      [second + 47, second + 40],
    ] as const) {
      add(`second entry cut at +${cut - second}`, base.subarray(0, cut), ParseStatus.Truncated, at, { counts: [1, 1, 1] });
    }
  }
  {
    const b = batch([legacyTx()]);
    const m = b.marks[0]!;
    const cut = (n: number) => b.bytes.subarray(0, n);
    add('signatures cut', cut(m.sigOffset + 63), ParseStatus.Truncated, m.sigOffset, { counts: [1, 0, 0] });
    add('message missing', cut(m.message), ParseStatus.Truncated, m.message);
    add('legacy header cut', cut(m.message + 2), ParseStatus.Truncated, m.message + 1);
    add('key count missing', cut(m.keyCountAt), ParseStatus.Truncated, m.keyCountAt);
    add('keys cut', cut(m.keys + 95), ParseStatus.Truncated, m.keys);
    add('blockhash cut', cut(m.blockhash + 31), ParseStatus.Truncated, m.blockhash);
    add('instruction count missing', cut(m.ixCountAt), ParseStatus.Truncated, m.ixCountAt);
    add('program-id index missing', cut(m.ixs[0]!.program), ParseStatus.Truncated, m.ixs[0]!.program);
    add('account count missing', cut(m.ixs[0]!.accountsAt), ParseStatus.Truncated, m.ixs[0]!.accountsAt);
    add('account indexes cut', cut(m.ixs[0]!.accounts + 1), ParseStatus.Truncated, m.ixs[0]!.accounts);
    add('data length missing', cut(m.ixs[0]!.dataAt), ParseStatus.Truncated, m.ixs[0]!.dataAt);
    add('data cut', cut(m.ixs[0]!.data + 2), ParseStatus.Truncated, m.ixs[0]!.data, { counts: [1, 0, 1] });
  }
  {
    const b = batch([legacyTx({ sigCountBytes: [0x80] })]);
    add('signature count cut inside its compact-u16', b.bytes.subarray(0, b.marks[0]!.start + 1), ParseStatus.Truncated, b.marks[0]!.start);
    const c = batch([legacyTx({ sigCountBytes: [0x81, 0x80] })]);
    add('signature count cut after two compact-u16 bytes', c.bytes.subarray(0, c.marks[0]!.start + 2), ParseStatus.Truncated, c.marks[0]!.start);
    const d = batch([legacyTx({ sigCountBytes: [0xff, 0xff, 0x03] })]);
    add('0xffff signatures (valid compact-u16) do not fit', d.bytes, ParseStatus.Truncated, d.marks[0]!.start + 3);
  }
  {
    const b = batch([v0Tx()]);
    const m = b.marks[0]!;
    const cut = (n: number) => b.bytes.subarray(0, n);
    add('v0 header cut', cut(m.message + 3), ParseStatus.Truncated, m.message + 1);
    add('lookup count missing', cut(m.lookupCountAt), ParseStatus.Truncated, m.lookupCountAt);
    add('lookup table key cut', cut(m.lookups[0]!.key + 31), ParseStatus.Truncated, m.lookups[0]!.key);
    add('writable index count missing', cut(m.lookups[0]!.writableAt), ParseStatus.Truncated, m.lookups[0]!.writableAt);
    add('writable indexes cut', cut(m.lookups[0]!.writable), ParseStatus.Truncated, m.lookups[0]!.writable);
    add('readonly index count missing', cut(m.lookups[0]!.readonlyAt), ParseStatus.Truncated, m.lookups[0]!.readonlyAt);
    add('readonly indexes cut', cut(m.lookups[0]!.readonly), ParseStatus.Truncated, m.lookups[0]!.readonly);
  }

  // CountTooLarge
  {
    const w = new Writer();
    w.u32(1);
    w.u32(1);
    w.fill(96, 0);
    add('entry count with a non-zero high word', w.bytes(), ParseStatus.CountTooLarge, 0);
    const x = new Writer();
    x.u64(2);
    x.fill(95, 0);
    add('two entries in 95 bytes', x.bytes(), ParseStatus.CountTooLarge, 0);
    const y = new Writer();
    y.u64(2);
    y.fill(96, 0);
    add('two ticks in exactly 96 bytes', y.bytes(), ParseStatus.Ok, 0, { counts: [2, 0, 0] });
    const z = new Writer();
    z.u64(1);
    z.u64(0);
    z.fill(32, 0);
    z.u32(0);
    z.u32(1);
    add('tx count with a non-zero high word', z.bytes(), ParseStatus.CountTooLarge, 8 + 40);
    const b = batch([legacyTx()], { txCount: 2 });
    add('tx count above the bytes left', batch([], { txCount: 1 }).bytes, ParseStatus.CountTooLarge, 8 + 40);
    // Two transactions declared, one present: enough bytes for the count check, not for the parse.
    add('tx count that fits the bytes but not the transactions', b.bytes, ParseStatus.Truncated, b.bytes.length, { counts: [1, 1, 1] });
  }

  // CompactU16, at every compact-u16 of a transaction
  for (const [label, bad] of [
    ['80 00', [0x80, 0x00]],
    ['80 80 00', [0x80, 0x80, 0x00]],
    ['ff ff 04', [0xff, 0xff, 0x04]],
    ['80 80 80', [0x80, 0x80, 0x80]],
  ] as const) {
    const s = batch([legacyTx({ sigCountBytes: [...bad] })]);
    add(`signature count ${label}`, s.bytes, ParseStatus.CompactU16, s.marks[0]!.start);
    const k = batch([legacyTx({ keyCountBytes: [...bad] })]);
    add(`key count ${label}`, k.bytes, ParseStatus.CompactU16, k.marks[0]!.keyCountAt);
    const i = batch([legacyTx({ ixCountBytes: [...bad] })]);
    add(`instruction count ${label}`, i.bytes, ParseStatus.CompactU16, i.marks[0]!.ixCountAt);
    const a = batch([legacyTx({ ixs: [{ program: 2, accounts: [0], data: [], accountsCountBytes: [...bad] }] })]);
    add(`account count ${label}`, a.bytes, ParseStatus.CompactU16, a.marks[0]!.ixs[0]!.accountsAt);
    const d = batch([legacyTx({ ixs: [{ program: 2, accounts: [0], data: [], dataLenBytes: [...bad] }] })]);
    add(`data length ${label}`, d.bytes, ParseStatus.CompactU16, d.marks[0]!.ixs[0]!.dataAt);
    const l = batch([v0Tx({ lookupCountBytes: [...bad] })]);
    add(`lookup count ${label}`, l.bytes, ParseStatus.CompactU16, l.marks[0]!.lookupCountAt);
    const r = batch([v0Tx({ lookups: [{ writable: 1, readonly: 1, readonlyCountBytes: [...bad] }] })]);
    add(`readonly index count ${label}`, r.bytes, ParseStatus.CompactU16, r.marks[0]!.lookups[0]!.readonlyAt);
  }

  // Version
  for (const first of [0x81, 0xff]) {
    const b = batch([v0Tx({ versionByte: first })]);
    add(`version byte ${first.toString(16)}`, b.bytes, ParseStatus.Version, b.marks[0]!.message);
    const cut = b.bytes.subarray(0, b.marks[0]!.message + 1);
    add(`version byte ${first.toString(16)} with nothing after it`, cut, ParseStatus.Version, b.marks[0]!.message);
  }

  // Header
  {
    const a = batch([legacyTx({ sigs: 2 })]);
    add('signature count above numRequiredSignatures', a.bytes, ParseStatus.Header, a.marks[0]!.message);
    const b = batch([legacyTx({ sigs: 0, header: [0, 0, 0] })]);
    add('no signer at all', b.bytes, ParseStatus.Header, b.marks[0]!.message);
    const c = batch([legacyTx({ sigs: 1, header: [1, 1, 0] })]);
    add('read-only fee payer', c.bytes, ParseStatus.Header, c.marks[0]!.message);
    const d = batch([v0Tx({ header: [1, 0, 3], keyCount: 3 })]);
    add('signed and read-only ranges beyond the keys', d.bytes, ParseStatus.Header, d.marks[0]!.message);
    const e = batch([v0Tx({ header: [1, 0, 2], keyCount: 3 })]);
    add('signed and read-only ranges exactly cover the keys', e.bytes, ParseStatus.Ok, 0);
    // The header check comes before the keys are read.
    const f = batch([legacyTx({ sigs: 2 })]);
    add('header checked before keys are read', f.bytes.subarray(0, f.marks[0]!.keys + 1), ParseStatus.Header, f.marks[0]!.message);
  }

  // AccountIndex
  {
    const a = batch([legacyTx({ ixs: [{ program: 3, accounts: [0], data: [] }] })]);
    add('program-id index beyond the static keys', a.bytes, ParseStatus.AccountIndex, a.marks[0]!.ixs[0]!.program);
    const b = batch([v0Tx({ ixs: [{ program: 3, accounts: [], data: [] }] })]);
    add('program-id index pointing at a looked-up key', b.bytes, ParseStatus.AccountIndex, b.marks[0]!.ixs[0]!.program);
    const c = batch([
      legacyTx({
        ixs: [
          { program: 2, accounts: [0, 1], data: [1] },
          { program: 2, accounts: [1, 3, 0, 4], data: [] },
        ],
      }),
    ]);
    add('first account index beyond the keys (second pass)', c.bytes, ParseStatus.AccountIndex, c.marks[0]!.ixs[1]!.accounts + 1);
    const d = batch([v0Tx({ ixs: [{ program: 2, accounts: [0, 4, 5], data: [] }] })]);
    add('account index beyond static + looked-up keys', d.bytes, ParseStatus.AccountIndex, d.marks[0]!.ixs[0]!.accounts + 2);
    // The truncation after the bad index wins: account indexes are checked after the lookups.
    const e = batch([v0Tx({ ixs: [{ program: 2, accounts: [0, 9], data: [] }] })]);
    add('a later truncation wins over a bad account index', e.bytes.subarray(0, e.marks[0]!.lookupCountAt), ParseStatus.Truncated, e.marks[0]!.lookupCountAt);
    const f = batch([v0Tx({ keyCount: 6, header: [1, 0, 1], lookups: [{ writable: 126, readonly: 125 }], ixs: [{ program: 5, accounts: [0], data: [] }] })]);
    add('257 accounts in total', f.bytes, ParseStatus.AccountIndex, f.marks[0]!.start);
    const g = batch([legacyTx({ keyCount: 257, ixs: [{ program: 2, accounts: [0], data: [] }] })]);
    add('a legacy message with 257 static keys', g.bytes, ParseStatus.AccountIndex, g.marks[0]!.start);
  }

  // OutputFull
  {
    const b = batch([legacyTx(), v0Tx({ ixs: [{ program: 2, accounts: [0], data: [] }, { program: 1, accounts: [], data: [] }] })]);
    const m = b.marks;
    add('no room for the entry', b.bytes, ParseStatus.OutputFull, b.entryStart, { caps: { ...BIG, entries: 0 }, counts: [0, 0, 0] });
    add('no room for the second transaction', b.bytes, ParseStatus.OutputFull, m[1]!.start, { caps: { ...BIG, txs: 1 }, counts: [1, 1, 3] });
    add('no room for the third program', b.bytes, ParseStatus.OutputFull, m[1]!.ixs[1]!.program, { caps: { ...BIG, programs: 2 }, counts: [1, 1, 2] });
    add('a partial record slot is not room', b.bytes, ParseStatus.OutputFull, m[1]!.start, {
      caps: { ...BIG, txs: 1.5 },
      counts: [1, 1, 3],
    });
    const bad = batch([legacyTx(), legacyTx({ sigs: 2 })]);
    add('a malformed transaction wins over a full txs array', bad.bytes, ParseStatus.Header, bad.marks[1]!.message, { caps: { ...BIG, txs: 1 } });
  }
  return v;
}

describe('hand-made vectors', () => {
  const all = vectors();
  for (const parser of [
    { name: 'typescript', parse: parseEntriesInto as ParseEntriesFn | null },
    { name: 'native', parse: native },
  ]) {
    for (const vec of all) {
      it.skipIf(parser.parse === null)(
        `${parser.name}: ${vec.name} -> ${PARSE_STATUS_NAMES[vec.status]} at ${vec.offset}`,
        () => {
          const caps = vec.caps ?? BIG;
          const fixed = { entries: Math.floor(caps.entries * ENTRY_STRIDE), txs: Math.floor(caps.txs * TX_STRIDE), programs: caps.programs };
          const counts = new Uint32Array(COUNTS_LENGTH);
          const status = parser.parse!(
            vec.bytes,
            new Uint32Array(fixed.entries),
            new Uint32Array(fixed.txs),
            new Uint8Array(fixed.programs),
            counts,
          );
          expect(PARSE_STATUS_NAMES[status]).toBe(PARSE_STATUS_NAMES[vec.status]);
          expect(counts[COUNT_ERROR_OFFSET]).toBe(vec.offset);
          if (vec.counts !== undefined) {
            expect([counts[COUNT_ENTRIES], counts[COUNT_TXS], counts[COUNT_PROGRAMS]]).toEqual(vec.counts);
          }
        },
      );
    }
  }

  it.skipIf(native === null)('native and TypeScript write the same records for every vector', () => {
    for (const vec of all) {
      const caps = vec.caps ?? BIG;
      const d = difference(run(parseEntriesInto, vec.bytes, caps), run(native!, vec.bytes, caps));
      expect(d, vec.name).toBe('');
    }
  });
});

describe('native parser against the TypeScript parser', () => {
  it.skipIf(native === null)('agrees on valid random batches, legacy and v0', () => {
    const rng = new Prng(1);
    for (let i = 0; i < 300; i++) {
      const bytes = randomBatch(rng);
      const ts = run(parseEntriesInto, bytes);
      expect(ts.status).toBe(ParseStatus.Ok);
      expect(difference(ts, run(native!, bytes)), hex(bytes)).toBe('');
    }
  });

  it.skipIf(native === null)('agrees on mainnet-mix batches', () => {
    for (const [seed, transactions] of [
      [1, 1],
      [2, 16],
      [3, 200],
      [4, 1500],
    ] as const) {
      const mix = generateMainnetMix({ seed, transactions, poolKeys: [new Uint8Array(32).fill(7)] });
      const ts = run(parseEntriesInto, mix.bytes);
      expect(ts.status).toBe(ParseStatus.Ok);
      expect(ts.counts[COUNT_TXS]).toBe(mix.txCount);
      expect(difference(ts, run(native!, mix.bytes))).toBe('');
    }
  });

  it.skipIf(native === null)('agrees on mutated mainnet-mix batches', () => {
    const rng = new Prng(0x5eed);
    const mixes = [5, 6, 7].map((seed) => generateMainnetMix({ seed, transactions: 12 }).bytes);
    const failures: string[] = [];
    for (let i = 0; i < 3_000 && failures.length < 5; i++) {
      const bytes = mutate(rng, mixes[i % mixes.length]!);
      const caps = rng.int(4) === 0 ? { entries: rng.int(12), txs: rng.int(12), programs: rng.int(40) } : FUZZ;
      const d = difference(run(parseEntriesInto, bytes, caps), run(native!, bytes, caps));
      if (d !== '') failures.push(`#${i} ${d}: ${hex(bytes, 400)} caps ${JSON.stringify(caps)}`);
    }
    expect(failures).toEqual([]);
  });

  it.skipIf(native === null)('agrees on mutated batches and small output arrays', () => {
    const rng = new Prng(0x7e57);
    const seen = new Set<number>();
    const failures: string[] = [];
    for (let i = 0; i < 20_000 && failures.length < 5; i++) {
      const base = randomBatch(rng, { maxEntries: 3, maxTxs: 3 });
      const bytes = mutate(rng, base);
      const caps = smallCaps(rng);
      const ts = run(parseEntriesInto, bytes, caps);
      const nat = run(native!, bytes, caps);
      seen.add(ts.status);
      const d = difference(ts, nat);
      if (d !== '') failures.push(`#${i} ${d}: ${hex(bytes, 400)} caps ${JSON.stringify(caps)}`);
    }
    expect(failures).toEqual([]);
    // The mutations reach every status.
    expect([...seen].sort()).toEqual(Object.values(ParseStatus).sort());
  });

  it.skipIf(native === null)('agrees on random bytes', () => {
    const rng = new Prng(99);
    for (let i = 0; i < 5_000; i++) {
      const bytes = new Uint8Array(rng.int(300));
      for (let k = 0; k < bytes.length; k++) bytes[k] = rng.int(256);
      if (bytes.length >= 8 && rng.int(2) === 0) bytes.set([1 + rng.int(3), 0, 0, 0, 0, 0, 0, 0], 0);
      const d = difference(run(parseEntriesInto, bytes, FUZZ), run(native!, bytes, FUZZ));
      expect(d, hex(bytes, 300)).toBe('');
    }
  });

  it.skipIf(native === null)('reads a Buffer and views with a byteOffset in place', () => {
    const bytes = randomBatch(new Prng(5));
    const backing = new Uint8Array(bytes.length + 13);
    backing.set(bytes, 13);
    const view = backing.subarray(13);
    const entriesBacking = new Uint32Array(3 + BIG.entries * ENTRY_STRIDE).fill(0xa5a5a5a5);
    const entries = entriesBacking.subarray(3);
    const counts = new Uint32Array(COUNTS_LENGTH).fill(0xa5a5a5a5);
    const txs = new Uint32Array(BIG.txs * TX_STRIDE).fill(0xa5a5a5a5);
    const programs = new Uint8Array(BIG.programs).fill(0xa5);
    expect(native!(Buffer.from(view.buffer, view.byteOffset, view.length), entries, txs, programs, counts)).toBe(ParseStatus.Ok);
    expect(entriesBacking.subarray(0, 3)).toEqual(new Uint32Array(3).fill(0xa5a5a5a5));
    expect(difference(run(parseEntriesInto, bytes), { status: 0, counts, entries, txs, programs })).toBe('');
  });

  it.skipIf(native === null)('writes only the count words that fit a short counts array', () => {
    const bytes = randomBatch(new Prng(6));
    const ts = new Uint32Array(2);
    const nat = new Uint32Array(2);
    const a = parseEntriesInto(bytes, new Uint32Array(500), new Uint32Array(5000), new Uint8Array(500), ts);
    const b = native!(bytes, new Uint32Array(500), new Uint32Array(5000), new Uint8Array(500), nat);
    expect(b).toBe(a);
    expect(nat).toEqual(ts);
  });

  it.skipIf(native === null)('re-binds when the output arrays change identity or length', () => {
    const rng = new Prng(8);
    const pool = [FUZZ, BIG, { entries: 2, txs: 3, programs: 5 }].map((caps) => ({
      caps,
      entries: new Uint32Array(caps.entries * ENTRY_STRIDE),
      txs: new Uint32Array(caps.txs * TX_STRIDE),
      programs: new Uint8Array(caps.programs),
      counts: new Uint32Array(COUNTS_LENGTH),
    }));
    for (let i = 0; i < 300; i++) {
      const bytes = randomBatch(rng, { maxEntries: 3, maxTxs: 3 });
      const o = pool[rng.int(pool.length)]!;
      // mix arrays of different sets, so a single changed array must trigger the re-bind
      const counts = rng.int(4) === 0 ? pool[rng.int(pool.length)]!.counts : o.counts;
      const status = native!(bytes, o.entries, o.txs, o.programs, counts);
      const expected = run(parseEntriesInto, bytes, o.caps);
      expect(status).toBe(expected.status);
      expect(counts).toEqual(expected.counts);
      const nTx = expected.counts[COUNT_TXS]!;
      expect(o.txs.subarray(0, nTx * TX_STRIDE)).toEqual(expected.txs.subarray(0, nTx * TX_STRIDE));
    }
  });

  it.skipIf(native === null)('sees a detached output array as empty instead of writing through it', () => {
    const bytes = randomBatch(new Prng(12));
    const entries = new Uint32Array(BIG.entries * ENTRY_STRIDE);
    const txs = new Uint32Array(BIG.txs * TX_STRIDE);
    const programs = new Uint8Array(BIG.programs);
    const counts = new Uint32Array(COUNTS_LENGTH);
    expect(native!(bytes, entries, txs, programs, counts)).toBe(ParseStatus.Ok);
    structuredClone(txs.buffer, { transfer: [txs.buffer] }); // detaches txs
    expect(txs.length).toBe(0);
    const tsCounts = new Uint32Array(COUNTS_LENGTH);
    const expected = parseEntriesInto(bytes, new Uint32Array(entries.length), new Uint32Array(0), new Uint8Array(programs.length), tsCounts);
    expect(native!(bytes, entries, txs, programs, counts)).toBe(expected);
    expect(counts).toEqual(tsCounts);
  });

  it.skipIf(native === null)('the add-on\'s self-contained parseEntries export agrees too', () => {
    const addon = createRequire(import.meta.url)(nativeStatus.path!) as { parseEntries: ParseEntriesFn };
    const rng = new Prng(21);
    for (const vec of vectors()) {
      expect(difference(run(parseEntriesInto, vec.bytes, vec.caps ?? BIG), run(addon.parseEntries, vec.bytes, vec.caps ?? BIG)), vec.name).toBe('');
    }
    for (let i = 0; i < 2000; i++) {
      const bytes = mutate(rng, randomBatch(rng, { maxEntries: 3, maxTxs: 3 }));
      const caps = smallCaps(rng);
      expect(difference(run(parseEntriesInto, bytes, caps), run(addon.parseEntries, bytes, caps))).toBe('');
    }
  });

  it.skipIf(native === null)('keeps one binding per thread: a worker parses while the main thread is bound', async () => {
    const bytes = randomBatch(new Prng(31));
    const caps = FUZZ;
    const entries = new Uint32Array(caps.entries * ENTRY_STRIDE);
    const txs = new Uint32Array(caps.txs * TX_STRIDE);
    const programs = new Uint8Array(caps.programs);
    const counts = new Uint32Array(COUNTS_LENGTH);
    expect(native!(bytes, entries, txs, programs, counts)).toBe(ParseStatus.Ok);
    const workerSource = `
      const { parentPort, workerData } = require('node:worker_threads');
      const addon = require(workerData.path);
      const entries = new Uint32Array(64 * ${ENTRY_STRIDE}), txs = new Uint32Array(64 * ${TX_STRIDE});
      const programs = new Uint8Array(512), counts = new Uint32Array(${COUNTS_LENGTH});
      addon.bindOutputs(entries, txs, programs, counts);
      let status = 0;
      for (let i = 0; i < 2000; i++) status = addon.parseBound(workerData.bytes);
      parentPort.postMessage({ status, counts: [...counts] });
    `;
    const worker = new Worker(workerSource, { eval: true, workerData: { path: nativeStatus.path, bytes } });
    const fromWorker = new Promise<{ status: number; counts: number[] }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    // The main thread keeps parsing into its own arrays meanwhile.
    const other = mutate(new Prng(32), bytes);
    const expectedOther = run(parseEntriesInto, other, caps);
    for (let i = 0; i < 2000; i++) native!(other, entries, txs, programs, counts);
    const result = await fromWorker;
    await worker.terminate();
    expect(counts).toEqual(expectedOther.counts);
    const expected = run(parseEntriesInto, bytes, caps);
    expect(result).toEqual({ status: expected.status, counts: [...expected.counts] });
  });

  it.skipIf(native === null)('throws a TypeError only for arguments of the wrong type', () => {
    const p = native!;
    const u8 = new Uint8Array(8);
    const u32 = new Uint32Array(4);
    const call = (...args: unknown[]) => (p as (...a: unknown[]) => unknown)(...args);
    expect(() => call()).toThrow(TypeError);
    expect(() => call(u8, u32, u32, u8)).toThrow(TypeError);
    expect(() => call([0], u32, u32, u8, u32)).toThrow(TypeError);
    expect(() => call(u8, new Int32Array(4), u32, u8, u32)).toThrow(TypeError);
    expect(() => call(u8, u32, u32, new Uint8ClampedArray(4), u32)).toThrow(TypeError);
    expect(() => call(u8, u32, u32, u8, new Float64Array(4))).toThrow(TypeError);
    expect(() => call(new DataView(new ArrayBuffer(8)), u32, u32, u8, u32)).toThrow(TypeError);
    expect(call(u8, u32, u32, u8, u32)).toBe(ParseStatus.Ok);
    // a bad call leaves the binding usable
    expect(call(u8, u32, u32, u8, u32)).toBe(ParseStatus.Ok);
    const addon = createRequire(import.meta.url)(nativeStatus.path!) as Record<string, (...a: unknown[]) => unknown>;
    expect(() => addon.parseEntries!(u8, u32, u32, u8)).toThrow(TypeError);
    expect(() => addon.parseEntries!(u8, u32, u32, u8, [])).toThrow(TypeError);
    expect(() => addon.parseBound!(new Uint16Array(4))).toThrow(TypeError);
    expect(() => addon.bindOutputs!(u32, u32, u8, 'counts')).toThrow(TypeError);
    expect(addon.parseEntries!(Buffer.alloc(8), u32, u32, u8, u32)).toBe(ParseStatus.Ok);
  });
});

function smallCaps(rng: Rng): Caps {
  if (rng.int(3) !== 0) return FUZZ;
  return { entries: rng.int(4), txs: rng.int(8), programs: rng.int(12) };
}

describe('availableParsers', () => {
  it('lists the TypeScript parser, and the native one exactly when it loaded', () => {
    const names = availableParsers().map((p) => p.name);
    expect(names).toContain('typescript');
    expect(names.includes('native')).toBe(native !== null);
  });

  it('all agree on a mixed batch', () => {
    const bytes = randomBatch(new Prng(11));
    const [first, ...rest] = availableParsers().map((p) => run(p.parse, bytes));
    for (const r of rest) expect(difference(first!, r)).toBe('');
  });
});

describe('loader', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });

  async function freshLoader() {
    vi.resetModules();
    return import('./native-parser.js');
  }

  it('uses the native parser when it loaded, else says why', () => {
    if (nativeStatus.loaded) {
      expect(parseEntries).toBe(nativeParseEntries);
      expect(nativeStatus.reason).toBeUndefined();
    } else {
      expect(parseEntries).toBe(parseEntriesInto);
      expect(nativeStatus.reason).toMatch(/./);
    }
  });

  it.skipIf(nativeDisabled)('loads the add-on built by scripts/build-native.mjs', () => {
    // The one test that fails, rather than skips, without the add-on: otherwise a broken build
    // would only show as skipped comparisons. No toolchain here? Run with TIDEPOOL_NATIVE=0.
    expect(nativeStatus.loaded, `${nativeStatus.reason}: run node scripts/build-native.mjs, or set TIDEPOOL_NATIVE=0`).toBe(true);
  });

  it('honours TIDEPOOL_NATIVE=0 and falls back to the TypeScript parser', async () => {
    vi.stubEnv('TIDEPOOL_NATIVE', '0');
    const m = await freshLoader();
    expect(m.nativeParseEntries).toBeNull();
    expect(m.nativeStatus).toMatchObject({ loaded: false, reason: expect.stringContaining('TIDEPOOL_NATIVE=0') });
    expect(m.parseEntries).toBe(m.tsParseEntries);
    const bytes = randomBatch(new Prng(3));
    expect(run(m.parseEntries, bytes).status).toBe(ParseStatus.Ok);
  });

  it('falls back to the TypeScript parser when the add-on is absent', async () => {
    vi.stubEnv('TIDEPOOL_NATIVE', '1');
    vi.stubEnv('TIDEPOOL_NATIVE_PATH', join(tmpdir(), 'tidepool-no-such-dir', 'tidepool_native.node'));
    const m = await freshLoader();
    expect(m.nativeParseEntries).toBeNull();
    expect(m.nativeStatus).toMatchObject({ loaded: false, reason: expect.stringContaining('not built') });
    expect(m.parseEntries).toBe(m.tsParseEntries);
    const parsers = (await import('./parser-implementations.js')).availableParsers();
    expect(parsers.map((p) => p.name)).toEqual(['typescript']);
  });

  it('does not throw when the add-on file is broken', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tidepool-native-'));
    const file = join(dir, 'tidepool_native.node');
    writeFileSync(file, 'not a shared object');
    vi.stubEnv('TIDEPOOL_NATIVE', '1');
    vi.stubEnv('TIDEPOOL_NATIVE_PATH', file);
    const m = await freshLoader();
    expect(m.nativeParseEntries).toBeNull();
    expect(m.nativeStatus).toMatchObject({ loaded: false, reason: expect.stringContaining('failed to load') });
    expect(m.parseEntries).toBe(m.tsParseEntries);
  });

  it('the build script skips the build under TIDEPOOL_NATIVE=0 and exits 0', () => {
    const script = fileURLToPath(new URL('../../scripts/build-native.mjs', import.meta.url));
    const r = spawnSync(process.execPath, [script], { env: { ...process.env, TIDEPOOL_NATIVE: '0' }, encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('skipped');
  });
});
