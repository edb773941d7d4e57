/**
 * Fuzzing every available entry parser (parser-implementations.ts) with 100,000+ seeded inputs:
 * random bytes of random lengths, and mutations of valid batches (bit flips, byte overwrites,
 * truncation at and around every field boundary, inserted and removed bytes, counts set to huge
 * values, compact-u16s made huge or non-minimal). For each input and each parser: no throw, a
 * status in range, counts and offsets within bounds; a parse into small arrays either agrees or
 * stops with OutputFull; and when several parsers are available they must agree on the status,
 * counts, error offset and every word of every output array. A sample of accepted inputs is also
 * decoded by @solana/kit, which must read the same transactions.
 *
 * A failure prints the seed and input index; FUZZ_SEED=<n> reruns another seed.
 */
import { describe, expect, it } from 'vitest';

import { encodeEntries, type EntryInput } from './entry-encoder.js';
import { EntryBatchIndex } from './entry-batch-index.js';
import { readCompactU16 } from './compact-u16.js';
import {
  COUNT_ENTRIES,
  COUNT_ERROR_OFFSET,
  COUNT_PROGRAMS,
  COUNT_TXS,
  COUNTS_LENGTH,
  ENTRY_STRIDE,
  ParseStatus,
  TX_END,
  TX_IX_COUNT,
  TX_IX_OFFSET,
  TX_KEY_COUNT,
  TX_KEYS_OFFSET,
  TX_BLOCKHASH_OFFSET,
  TX_LOOKUP_COUNT,
  TX_LOOKUP_OFFSET,
  TX_PROGRAMS_COUNT,
  TX_PROGRAMS_START,
  TX_SIG_COUNT,
  TX_SIG_OFFSET,
  TX_START,
  TX_STRIDE,
  type ParseEntriesFn,
} from './parse-layout.js';
import { availableParsers } from './parser-implementations.js';
import { ByteWriter, legacyTx, v0Tx, writeTx, type CraftedTx } from './testing/batch-writer.js';
import { decodeWithKit } from './testing/kit-vectors.js';
import { generateMainnetMix } from './testing/mainnet-mix.js';
import { Prng } from '../prng.js';
import { randomTxDescription, toBuilderInput } from './testing/random-transactions.js';
import { buildTransaction } from './transaction-builder.js';
import { TransactionView } from './transaction-view.js';

const SEED = Number(process.env.FUZZ_SEED ?? 0x5eed);
const INPUTS = 110_000;
const SPECIAL = [0x00, 0x01, 0x02, 0x03, 0x04, 0x7f, 0x80, 0x81, 0xfe, 0xff];

interface Caps {
  entries: number;
  txs: number;
  programs: number;
}
const ROOMY: Caps = { entries: 1024, txs: 1024, programs: 8192 };

/** Records past the counts that are also compared, to catch writes a parser did not count. */
const MARGIN = 2;
const SENTINEL = 0xa5a5a5a5;

/**
 * Output arrays of one parser, reused from input to input. Before each parse the region the last
 * parse may have written (its counts plus MARGIN records) is refilled with a sentinel, so whole
 * arrays need not be refilled or compared for every input.
 */
class Outputs {
  entries: Uint32Array;
  txs: Uint32Array;
  programs: Uint8Array;
  counts = new Uint32Array(COUNTS_LENGTH);
  status = 0;
  /** Words (bytes for programs) that may differ from the sentinel. */
  written = { entries: 0, txs: 0, programs: 0 };

  constructor(caps: Caps) {
    this.entries = new Uint32Array(caps.entries * ENTRY_STRIDE).fill(SENTINEL);
    this.txs = new Uint32Array(caps.txs * TX_STRIDE).fill(SENTINEL);
    this.programs = new Uint8Array(caps.programs).fill(SENTINEL & 0xff);
  }

  run(parse: ParseEntriesFn, bytes: Uint8Array, caps: Caps): void {
    this.entries.fill(SENTINEL, 0, this.written.entries);
    this.txs.fill(SENTINEL, 0, this.written.txs);
    this.programs.fill(SENTINEL & 0xff, 0, this.written.programs);
    this.counts.fill(SENTINEL);
    const e = caps === ROOMY ? this.entries : this.entries.subarray(0, caps.entries * ENTRY_STRIDE);
    const t = caps === ROOMY ? this.txs : this.txs.subarray(0, caps.txs * TX_STRIDE);
    const p = caps === ROOMY ? this.programs : this.programs.subarray(0, caps.programs);
    this.status = parse(bytes, e, t, p, this.counts);
    const c = this.counts;
    this.written = {
      entries: Math.min(this.entries.length, ((c[COUNT_ENTRIES]! >>> 0) + MARGIN) * ENTRY_STRIDE),
      txs: Math.min(this.txs.length, ((c[COUNT_TXS]! >>> 0) + MARGIN) * TX_STRIDE),
      programs: Math.min(this.programs.length, (c[COUNT_PROGRAMS]! >>> 0) + MARGIN * 8),
    };
  }
}

/** Whether two parsers' outputs agree on everything either may have written. */
function sameRecords(a: Outputs, b: Outputs): boolean {
  return (
    equalPrefix(a.entries, b.entries, Math.max(a.written.entries, b.written.entries)) &&
    equalPrefix(a.txs, b.txs, Math.max(a.written.txs, b.written.txs)) &&
    equalPrefix(a.programs, b.programs, Math.max(a.written.programs, b.written.programs))
  );
}

function equalPrefix(a: ArrayLike<number>, b: ArrayLike<number>, n: number): boolean {
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

function equalArrays(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.subarray(0, 600)).toString('hex') + (bytes.length > 600 ? '…' : '');
}

// ---- valid material

function craftedPool(): Uint8Array[] {
  const specs: CraftedTx[] = [
    legacyTx(),
    v0Tx(),
    legacyTx({ instructions: [] }),
    v0Tx({ lookups: [], instructions: [] }),
    v0Tx({ signatureCount: 3, header: [3, 2, 1], keyCount: 6, instructions: [{ programIdIndex: 5, accounts: [0, 1, 2, 3, 4, 5, 6, 7], data: new Array(200).fill(1) }], lookups: [{ writableIndexes: [1, 2], readonlyIndexes: [] }] }),
    v0Tx({ keyCount: 6, lookups: [{ writableIndexes: new Array(125).fill(3), readonlyIndexes: new Array(125).fill(4) }], instructions: [{ programIdIndex: 5, accounts: [255], data: [] }] }),
    legacyTx({ keyCount: 130, header: [1, 0, 1], instructions: [{ programIdIndex: 129, accounts: new Array(130).fill(0).map((_, i) => i), data: new Array(140).fill(9) }] }),
  ];
  return specs.map((spec) => {
    const w = new ByteWriter();
    writeTx(w, spec);
    return w.bytes();
  });
}

function signedPool(prng: Prng): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < 40; i++) out.push(buildTransaction(toBuilderInput(randomTxDescription(prng, { maxInstructions: 8 }))));
  return out;
}

function mixPool(): Uint8Array[] {
  const mix = generateMainnetMix({ seed: 11, transactions: 60 });
  const index = new EntryBatchIndex();
  index.parse(mix.bytes);
  return Array.from({ length: index.txCount }, (_, i) => index.txBytes(i).slice());
}

function validBatch(prng: Prng, pool: Uint8Array[]): Uint8Array {
  const entries: EntryInput[] = [];
  const n = prng.range(0, 4);
  for (let e = 0; e < n; e++) {
    const txs: Uint8Array[] = [];
    const m = prng.chance(0.25) ? 0 : prng.range(1, 4);
    for (let t = 0; t < m; t++) txs.push(prng.pick(pool));
    const hiHashes = prng.chance(0.2) ? BigInt(prng.u32()) << 32n : 0n;
    entries.push({ numHashes: hiHashes | BigInt(prng.u32()), hash: prng.bytes(32), transactions: txs });
  }
  const bytes = encodeEntries(entries);
  if (!prng.chance(0.1)) return bytes;
  const trailing = new Uint8Array(bytes.length + prng.range(1, 16));
  trailing.set(bytes);
  return trailing;
}

/** Offsets where a field starts, from a roomy parse of a valid batch (every compact-u16 too). */
function boundaries(bytes: Uint8Array, out: Outputs, parse: ParseEntriesFn): { all: number[]; counts: number[]; compacts: number[] } {
  out.run(parse, bytes, ROOMY);
  const all: number[] = [0, 8, bytes.length];
  const counts: number[] = [0];
  const compacts: number[] = [];
  const c = out.counts;
  for (let e = 0; e < c[COUNT_ENTRIES]!; e++) {
    const start = out.entries[e * ENTRY_STRIDE + 2]! - 8;
    all.push(start, start + 8, start + 40, start + 48);
    counts.push(start + 40);
  }
  for (let t = 0; t < c[COUNT_TXS]!; t++) {
    const r = out.txs.subarray(t * TX_STRIDE, (t + 1) * TX_STRIDE);
    const message = r[TX_SIG_OFFSET]! + r[TX_SIG_COUNT]! * 64;
    all.push(r[TX_START]!, r[TX_SIG_OFFSET]!, message, message + 1, r[TX_KEYS_OFFSET]!, r[TX_BLOCKHASH_OFFSET]!, r[TX_IX_OFFSET]!, r[TX_END]!);
    compacts.push(r[TX_START]!);
    // key count: the compact-u16 just before the keys
    const keyCountSize = r[TX_KEY_COUNT]! < 0x80 ? 1 : r[TX_KEY_COUNT]! < 0x4000 ? 2 : 3;
    compacts.push(r[TX_KEYS_OFFSET]! - keyCountSize);
    const ixCountSize = r[TX_IX_COUNT]! < 0x80 ? 1 : 2;
    compacts.push(r[TX_IX_OFFSET]! - ixCountSize);
    let p = r[TX_IX_OFFSET]!;
    for (let i = 0; i < r[TX_IX_COUNT]!; i++) {
      all.push(p, p + 1);
      p++;
      compacts.push(p);
      const a = readCompactU16(bytes, p, bytes.length);
      p += (a >>> 16) + (a & 0xffff);
      all.push(p);
      compacts.push(p);
      const d = readCompactU16(bytes, p, bytes.length);
      p += (d >>> 16) + (d & 0xffff);
    }
    all.push(p);
    if (r[TX_LOOKUP_COUNT]! > 0 || p < r[TX_END]!) compacts.push(p);
    p = r[TX_LOOKUP_OFFSET]!;
    for (let l = 0; l < r[TX_LOOKUP_COUNT]!; l++) {
      all.push(p);
      p += 32;
      for (let k = 0; k < 2; k++) {
        all.push(p);
        compacts.push(p);
        const n = readCompactU16(bytes, p, bytes.length);
        p += (n >>> 16) + (n & 0xffff);
      }
    }
  }
  return { all, counts, compacts };
}

// ---- mutations

function splice(bytes: Uint8Array, at: number, remove: number, insert: Uint8Array): Uint8Array {
  at = Math.min(at, bytes.length);
  remove = Math.min(remove, bytes.length - at);
  const out = new Uint8Array(bytes.length - remove + insert.length);
  out.set(bytes.subarray(0, at));
  out.set(insert, at);
  out.set(bytes.subarray(at + remove), at + insert.length);
  return out;
}

function mutate(prng: Prng, valid: Uint8Array, b: ReturnType<typeof boundaries>): Uint8Array {
  let bytes: Uint8Array = valid.slice();
  const edits = prng.range(1, 3);
  for (let i = 0; i < edits; i++) {
    const anywhere = bytes.length === 0 ? 0 : prng.int(bytes.length);
    const boundary = Math.min(bytes.length, prng.pick(b.all) + prng.range(-1, 1));
    const at = prng.chance(0.6) ? Math.max(0, boundary) : anywhere;
    switch (prng.int(9)) {
      case 0: // bit flips
        for (let k = prng.range(1, 3); k > 0 && bytes.length > 0; k--) bytes[prng.int(bytes.length)]! ^= 1 << prng.int(8);
        break;
      case 1: // byte overwrite
        if (at < bytes.length) bytes[at] = prng.chance(0.5) ? prng.pick(SPECIAL) : prng.int(256);
        break;
      case 2: // truncation at (or next to) a boundary
        bytes = bytes.slice(0, at);
        break;
      case 3: // inserted bytes
        bytes = splice(bytes, at, 0, Uint8Array.from({ length: prng.range(1, 4) }, () => prng.pick(SPECIAL)));
        break;
      case 4: // removed bytes
        bytes = splice(bytes, at, prng.range(1, 8), new Uint8Array(0));
        break;
      case 5: {
        // an entry or transaction count set to a huge value, or given a high word
        const o = prng.pick(b.counts);
        if (o + 8 <= bytes.length) {
          const view = new DataView(bytes.buffer, bytes.byteOffset);
          if (prng.chance(0.5)) view.setUint32(o, prng.chance(0.5) ? 0xffffffff : prng.u32(), true);
          else view.setUint32(o + 4, prng.range(1, 0xffffffff), true);
        }
        break;
      }
      case 6: {
        // a compact-u16 made huge, non-minimal or over-long
        const o = b.compacts.length > 0 ? prng.pick(b.compacts) : anywhere;
        const forms = [[0xff, 0xff, 0x03], [0x80, 0x00], [0xff, 0x80, 0x00], [0xff, 0xff, 0x04], [0x80, 0x80, 0x80], [0x80 | prng.int(128), 0x01]];
        const form = Uint8Array.from(prng.pick(forms));
        bytes = prng.chance(0.5) ? splice(bytes, o, 1, form) : splice(bytes, o, form.length, form);
        break;
      }
      case 7: // a first message byte or header byte changed
        if (at < bytes.length) bytes[at] = prng.chance(0.5) ? 0x80 | prng.int(128) : prng.int(4);
        break;
      default: // a slice of another part of the payload copied over
        if (bytes.length > 4) {
          const from = prng.int(bytes.length - 1);
          const n = Math.min(prng.range(1, 40), bytes.length - from);
          bytes = splice(bytes, at, prng.chance(0.5) ? n : 0, bytes.slice(from, from + n));
        }
    }
  }
  return bytes;
}

function randomInput(prng: Prng): Uint8Array {
  const bytes = prng.bytes(prng.chance(0.8) ? prng.int(300) : prng.int(3000));
  if (bytes.length >= 8 && prng.chance(0.5)) bytes.set([prng.range(0, 4), 0, 0, 0, 0, 0, 0, 0]);
  if (bytes.length >= 56 && prng.chance(0.5)) bytes.set([prng.range(0, 3), 0, 0, 0, 0, 0, 0, 0], 48);
  return bytes;
}

// ---- the checks

interface Stats {
  statuses: Map<number, number>;
  kitChecked: number;
}

function checkOne(bytes: Uint8Array, prng: Prng, outs: Outputs[], parsers: ReturnType<typeof availableParsers>, stats: Stats, where: string): void {
  for (let i = 0; i < parsers.length; i++) {
    try {
      outs[i]!.run(parsers[i]!.parse, bytes, ROOMY);
    } catch (err) {
      throw new Error(`${where}: ${parsers[i]!.name} threw ${String(err)} on ${hex(bytes)}`, { cause: err });
    }
  }
  const first = outs[0]!;
  const status = first.status;
  const c = first.counts;
  stats.statuses.set(status, (stats.statuses.get(status) ?? 0) + 1);
  const fail = (why: string) => {
    throw new Error(`${where}: ${why}; status ${status} counts [${c.join()}] input ${hex(bytes)}`);
  };
  if (!(Number.isInteger(status) && status >= 0 && status <= ParseStatus.OutputFull)) fail('status out of range');
  if (status === ParseStatus.OutputFull) fail('OutputFull with roomy arrays');
  if (c[COUNT_ENTRIES]! > ROOMY.entries || c[COUNT_TXS]! > ROOMY.txs || c[COUNT_PROGRAMS]! > ROOMY.programs) fail('counts beyond capacity');
  if (status === ParseStatus.Ok ? c[COUNT_ERROR_OFFSET] !== 0 : c[COUNT_ERROR_OFFSET]! > bytes.length) fail('bad error offset');
  // Records stay inside the payload and point at real fields.
  for (let t = 0; t < c[COUNT_TXS]!; t++) {
    const r = first.txs.subarray(t * TX_STRIDE, (t + 1) * TX_STRIDE);
    if (!(r[TX_START]! < r[TX_END]! && r[TX_END]! <= bytes.length)) fail(`tx ${t} bounds`);
    if (r[TX_PROGRAMS_START]! + r[TX_PROGRAMS_COUNT]! > c[COUNT_PROGRAMS]!) fail(`tx ${t} programs`);
    for (let j = 0; j < r[TX_PROGRAMS_COUNT]!; j++) {
      if (first.programs[r[TX_PROGRAMS_START]! + j]! >= r[TX_KEY_COUNT]!) fail(`tx ${t} program index`);
    }
  }
  // Parsers agree on everything.
  for (let i = 1; i < outs.length; i++) {
    const o = outs[i]!;
    if (o.status !== status || !equalArrays(o.counts, c)) fail(`${parsers[i]!.name}: status ${o.status} counts [${o.counts.join()}]`);
    if (!sameRecords(o, first)) {
      fail(`${parsers[i]!.name}: records differ`);
    }
  }
  // Small arrays: OutputFull, or the same answer.
  if (prng.chance(0.15)) {
    const caps = { entries: prng.int(4), txs: prng.int(6), programs: prng.int(10) };
    const small = outs.map((o, i) => {
      o.run(parsers[i]!.parse, bytes, caps);
      return { status: o.status, counts: o.counts.slice() };
    });
    for (const s of small) {
      if (s.status !== ParseStatus.OutputFull && (s.status !== status || s.counts[COUNT_ERROR_OFFSET] !== c[COUNT_ERROR_OFFSET])) {
        fail(`small arrays gave status ${s.status} at ${s.counts[COUNT_ERROR_OFFSET]}`);
      }
      if (!equalArrays(s.counts, small[0]!.counts) || s.status !== small[0]!.status) fail('parsers disagree on small arrays');
    }
    outs.forEach((o, i) => o.run(parsers[i]!.parse, bytes, ROOMY));
  }
  // A sample of accepted inputs: kit reads the same transactions.
  if (status === ParseStatus.Ok && c[COUNT_TXS]! > 0 && stats.kitChecked < 400 && prng.chance(0.05)) {
    stats.kitChecked++;
    const index = new EntryBatchIndex();
    index.parse(bytes);
    for (let t = 0; t < index.txCount; t++) {
      const view = new TransactionView(bytes, index, t);
      let kit: ReturnType<typeof decodeWithKit>;
      try {
        kit = decodeWithKit(view.wireBytes());
      } catch (err) {
        fail(`kit cannot decode accepted tx ${t}: ${String(err)}`);
        return;
      }
      const ours = {
        version: view.version,
        header: view.header,
        accountKeys: view.accountKeys(),
        recentBlockhash: view.recentBlockhash(),
        instructions: view.instructions().map((ix) => ({ ...ix, data: Array.from(ix.data) })),
        addressTableLookups: view.addressTableLookups(),
      };
      const theirs = {
        version: kit.version,
        header: kit.header,
        accountKeys: kit.accountKeys,
        recentBlockhash: kit.recentBlockhash,
        instructions: kit.instructions,
        addressTableLookups: kit.addressTableLookups,
      };
      if (JSON.stringify(ours) !== JSON.stringify(theirs)) fail(`tx ${t} differs from kit's decoding`);
    }
  }
}

describe('entry parser fuzzing', () => {
  const parsers = availableParsers();

  it(`survives ${INPUTS} random and mutated inputs with every parser (${parsers.map((p) => p.name).join(', ')}), seed ${SEED}`, () => {
    const prng = new Prng(SEED);
    const pool = [...craftedPool(), ...signedPool(prng), ...mixPool()];
    const outs = parsers.map(() => new Outputs(ROOMY));
    const scratch = new Outputs(ROOMY);
    const stats: Stats = { statuses: new Map(), kitChecked: 0 };
    let valid = validBatch(prng, pool);
    let marks = boundaries(valid, scratch, parsers[0]!.parse);

    for (let n = 0; n < INPUTS; n++) {
      if (n % 16 === 0) {
        valid = validBatch(prng, pool);
        marks = boundaries(valid, scratch, parsers[0]!.parse);
        expect(scratch.status, `valid batch #${n} (seed ${SEED})`).toBe(ParseStatus.Ok);
      }
      const r = prng.next();
      const input = r < 0.2 ? randomInput(prng) : r < 0.25 ? valid : mutate(prng, valid, marks);
      checkOne(input, prng, outs, parsers, stats, `seed ${SEED} input #${n}`);
    }

    // Every malformed-input status was reached, and kit checked a sample.
    for (const s of [ParseStatus.Ok, ParseStatus.Truncated, ParseStatus.CountTooLarge, ParseStatus.CompactU16, ParseStatus.Version, ParseStatus.Header, ParseStatus.AccountIndex]) {
      expect(stats.statuses.get(s) ?? 0, `status ${s} reached`).toBeGreaterThan(50);
    }
    expect(stats.kitChecked).toBeGreaterThan(100);
    if (process.env.FUZZ_STATS === '1') console.log(Object.fromEntries(stats.statuses), stats.kitChecked);
  });

  it('parses inputs that a growing EntryBatchIndex would see the same as a roomy parse', () => {
    const prng = new Prng(SEED + 1);
    const pool = [...craftedPool(), ...signedPool(prng), ...mixPool()];
    const roomy = new Outputs(ROOMY);
    const scratch = new Outputs(ROOMY);
    for (let n = 0; n < 3000; n++) {
      const valid = validBatch(prng, pool);
      const input = prng.chance(0.5) ? valid : mutate(prng, valid, boundaries(valid, scratch, parsers[0]!.parse));
      for (const p of parsers) {
        roomy.run(p.parse, input, ROOMY);
        const index = new EntryBatchIndex({ entries: 1, txs: 1, programs: 1 });
        const status = index.parse(input, p.parse);
        expect(status, `${p.name} #${n} ${hex(input)}`).toBe(roomy.status);
        expect(index.counts).toEqual(roomy.counts);
        expect(equalArrays(index.txs.subarray(0, index.txCount * TX_STRIDE), roomy.txs.subarray(0, index.txCount * TX_STRIDE))).toBe(true);
      }
    }
  });
});
