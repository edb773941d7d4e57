/**
 * parseEntriesInto on crafted payloads: the records it writes, and every ParseStatus with the
 * exact error offset parse-layout.ts (and the decisions in entry-parser.ts) call for.
 */
import { describe, expect, it } from 'vitest';

import { parseEntriesInto } from './entry-parser.js';
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
  VERSION_LEGACY,
} from './parse-layout.js';
import { ByteWriter, legacyTx, v0Tx, writeBatch, type writeTx, type CraftedTx } from './testing/batch-writer.js';

interface Caps {
  entries: number;
  txs: number;
  programs: number;
}
const ROOMY: Caps = { entries: 64, txs: 256, programs: 1024 };

function parse(bytes: Uint8Array, caps: Caps = ROOMY) {
  const entries = new Uint32Array(Math.floor(caps.entries * ENTRY_STRIDE));
  const txs = new Uint32Array(Math.floor(caps.txs * TX_STRIDE));
  const programs = new Uint8Array(caps.programs);
  const counts = new Uint32Array(COUNTS_LENGTH).fill(0xdeadbeef);
  const status = parseEntriesInto(bytes, entries, txs, programs, counts);
  return {
    status: PARSE_STATUS_NAMES[status],
    offset: counts[COUNT_ERROR_OFFSET],
    counts: [counts[COUNT_ENTRIES], counts[COUNT_TXS], counts[COUNT_PROGRAMS]],
    entry: (e: number) => Array.from(entries.subarray(e * ENTRY_STRIDE, (e + 1) * ENTRY_STRIDE)),
    tx: (t: number) => Array.from(txs.subarray(t * TX_STRIDE, (t + 1) * TX_STRIDE)),
    programs: Array.from(programs.subarray(0, counts[COUNT_PROGRAMS])),
  };
}

function expectStatus(bytes: Uint8Array, status: ParseStatus, offset: number, caps?: Caps) {
  const r = parse(bytes, caps);
  expect({ status: r.status, offset: r.offset }).toEqual({ status: PARSE_STATUS_NAMES[status], offset });
  return r;
}

/** One entry holding `txs`; the offsets of every field. */
function oneEntry(txs: CraftedTx[], trailing: number[] = []) {
  const b = writeBatch([{ txs }], trailing);
  return { bytes: b.bytes, entry: b.entries[0]!, tx: b.entries[0]!.txs };
}

describe('parseEntriesInto: records', () => {
  it('writes entry, transaction and program records for legacy, v0 and tick entries', () => {
    const legacy = legacyTx({
      instructions: [
        { programIdIndex: 2, accounts: [0, 1], data: [1] },
        { programIdIndex: 2, accounts: [1], data: [] },
      ],
    });
    const v0 = v0Tx({ signatureCount: 2, header: [2, 1, 1], keyCount: 4 });
    const b = writeBatch([{ txs: [legacy], numHashes: 12_500 }, { txs: [] }, { txs: [v0] }]);
    const r = parse(b.bytes);
    expect(r.status).toBe('ok');
    expect(r.offset).toBe(0);
    expect(r.counts).toEqual([3, 2, 2]);

    const [e0, e1, e2] = b.entries;
    expect(r.entry(0)).toEqual([12_500, 0, e0!.start + 8, 1, 0]);
    expect(r.entry(1)).toEqual([101, 0, e1!.start + 8, 0, 1]);
    expect(r.entry(2)).toEqual([102, 0, e2!.start + 8, 1, 1]);

    const l = e0!.txs[0]!;
    expect(r.tx(0)).toEqual([
      0, l.start, l.end, 1, l.signatures, VERSION_LEGACY, 1 | (0 << 8) | (1 << 16), 3, l.keys, l.blockhash,
      2, l.instructionCount + 1, 0, 0, 0, 1,
    ]);
    const v = e2!.txs[0]!;
    expect(r.tx(1)).toEqual([
      2, v.start, v.end, 2, v.signatures, 0, 2 | (1 << 8) | (1 << 16), 4, v.keys, v.blockhash,
      1, v.instructionCount + 1, 1, v.lookups[0]!.key, 1, 1,
    ]);
    expect(r.programs).toEqual([2, 2]);
  });

  it('lists each program id once per transaction, in order of first use', () => {
    const tx = legacyTx({
      keyCount: 5,
      header: [1, 0, 3],
      instructions: [
        { programIdIndex: 4, accounts: [], data: [] },
        { programIdIndex: 2, accounts: [0], data: [] },
        { programIdIndex: 4, accounts: [], data: [] },
        { programIdIndex: 3, accounts: [], data: [] },
        { programIdIndex: 2, accounts: [], data: [] },
      ],
    });
    const r = parse(oneEntry([tx, tx]).bytes);
    expect(r.status).toBe('ok');
    expect(r.programs).toEqual([4, 2, 3, 4, 2, 3]);
    expect(r.tx(1)[14]).toBe(3); // TX_PROGRAMS_START
    expect(r.tx(1)[15]).toBe(3); // TX_PROGRAMS_COUNT
  });

  it('accepts an empty entry vector, zero instructions, and trailing bytes', () => {
    const empty = new ByteWriter().u64(0).bytes();
    expect(parse(empty).counts).toEqual([0, 0, 0]);
    const noIx = oneEntry([legacyTx({ instructions: [] }), v0Tx({ instructions: [], lookups: [] })], [1, 2, 3]);
    const r = expectStatus(noIx.bytes, ParseStatus.Ok, 0);
    expect(r.counts).toEqual([1, 2, 0]);
    expect(r.tx(0)[11]).toBe(noIx.tx[0]!.instructionCount + 1); // TX_IX_OFFSET right after the count
    expect(r.tx(1)[12]).toBe(0); // no lookups
    expect(r.tx(1)[13]).toBe(0);
  });

  it('accepts exactly 256 accounts and an index of 255', () => {
    const tx = v0Tx({
      keyCount: 6,
      header: [1, 0, 1],
      lookups: [{ writableIndexes: new Array(125).fill(1), readonlyIndexes: new Array(125).fill(2) }],
      instructions: [{ programIdIndex: 5, accounts: [255, 0], data: [] }],
    });
    expectStatus(oneEntry([tx]).bytes, ParseStatus.Ok, 0);
  });

  it('reads counts of a payload that is a view with a byte offset', () => {
    const { bytes } = oneEntry([legacyTx()]);
    const backing = new Uint8Array(bytes.length + 7);
    backing.set(bytes, 7);
    expect(parse(backing.subarray(7)).counts).toEqual([1, 1, 1]);
  });
});

describe('parseEntriesInto: Truncated', () => {
  it('reports an empty payload and a short entry count at 0', () => {
    expectStatus(new Uint8Array(0), ParseStatus.Truncated, 0);
    expectStatus(new Uint8Array(7), ParseStatus.Truncated, 0);
  });

  it('reports a cut entry header at the read that ran out', () => {
    const b = writeBatch([{ txs: [legacyTx()] }, { txs: [] }]);
    const s = b.entries[1]!.start;
    expectStatus(b.bytes.subarray(0, s + 5), ParseStatus.Truncated, s);
    expectStatus(b.bytes.subarray(0, s + 8), ParseStatus.Truncated, s + 8);
    expectStatus(b.bytes.subarray(0, s + 39), ParseStatus.Truncated, s + 8);
    const r = expectStatus(b.bytes.subarray(0, s + 47), ParseStatus.Truncated, s + 40);
    expect(r.counts).toEqual([1, 1, 1]);
  });

  it('reports every cut legacy field at its first byte', () => {
    const { bytes, tx } = oneEntry([legacyTx(), legacyTx()]);
    const t = tx[1]!;
    const ix = t.instructions[0]!;
    const cuts: [string, number, number][] = [
      ['signature count', t.start, t.start],
      ['signatures', t.signatures + 10, t.signatures],
      ['first message byte', t.message, t.message],
      ['rest of the header', t.message + 2, t.message + 1],
      ['key count', t.keyCount, t.keyCount],
      ['keys', t.keys + 40, t.keys],
      ['blockhash', t.blockhash + 31, t.blockhash],
      ['instruction count', t.instructionCount, t.instructionCount],
      ['program-id index', ix.programIdIndex, ix.programIdIndex],
      ['account count', ix.accountCount, ix.accountCount],
      ['account indexes', ix.accounts + 1, ix.accounts],
      ['data length', ix.dataLength, ix.dataLength],
      ['data', ix.data + 2, ix.data],
    ];
    for (const [name, cut, at] of cuts) {
      const r = parse(bytes.subarray(0, cut));
      expect({ name, status: r.status, offset: r.offset }).toEqual({ name, status: 'truncated', offset: at });
      expect(r.counts[1]).toBe(1);
    }
  });

  it('reports every cut v0 field at its first byte', () => {
    const { bytes, tx } = oneEntry([v0Tx()]);
    const t = tx[0]!;
    const l = t.lookups[0]!;
    const cuts: [string, number, number][] = [
      ['v0 header', t.message + 3, t.message + 1],
      ['lookup count', t.lookupCount, t.lookupCount],
      ['lookup table key', l.key + 31, l.key],
      ['writable count', l.writableCount, l.writableCount],
      ['writable indexes', l.writable, l.writable],
      ['readonly count', l.readonlyCount, l.readonlyCount],
      ['readonly indexes', l.readonly, l.readonly],
    ];
    for (const [name, cut, at] of cuts) {
      const r = parse(bytes.subarray(0, cut));
      expect({ name, status: r.status, offset: r.offset }).toEqual({ name, status: 'truncated', offset: at });
    }
  });

  it('reports a compact-u16 cut after a continuation byte at its first byte', () => {
    for (const raw of [[0x80], [0x81, 0x80]]) {
      const { bytes, tx } = oneEntry([legacyTx({ signatureCountRaw: raw })]);
      expectStatus(bytes.subarray(0, tx[0]!.start + raw.length), ParseStatus.Truncated, tx[0]!.start);
    }
  });

  it('reports a valid but huge signature count as truncated signatures', () => {
    const { bytes, tx } = oneEntry([legacyTx({ signatureCountRaw: [0xff, 0xff, 0x03] })]);
    expectStatus(bytes, ParseStatus.Truncated, tx[0]!.start + 3);
  });

  it('reports a declared transaction that is missing', () => {
    const b = writeBatch([{ txs: [legacyTx()], txCount: 2 }]);
    expectStatus(b.bytes, ParseStatus.Truncated, b.bytes.length);
  });
});

describe('parseEntriesInto: CountTooLarge', () => {
  it('rejects an entry count with a high word or more entries than 48-byte slots left', () => {
    expectStatus(new ByteWriter().u64(1, 1).fill(96, 0).bytes(), ParseStatus.CountTooLarge, 0);
    expectStatus(new ByteWriter().u64(2).fill(95, 0).bytes(), ParseStatus.CountTooLarge, 0);
    expectStatus(new ByteWriter().u64(0xffffffff).fill(48, 0).bytes(), ParseStatus.CountTooLarge, 0);
    const r = expectStatus(new ByteWriter().u64(2).fill(96, 0).bytes(), ParseStatus.Ok, 0);
    expect(r.counts).toEqual([2, 0, 0]);
  });

  it('rejects a transaction count with a high word or above the bytes left, at the count', () => {
    const hi = new ByteWriter().u64(1).u64(0).fill(32, 0).u64(0, 1).bytes();
    expectStatus(hi, ParseStatus.CountTooLarge, 8 + 40);
    const b = writeBatch([{ txs: [], txCount: 1 }]);
    expectStatus(b.bytes, ParseStatus.CountTooLarge, b.entries[0]!.txCount);
    const c = writeBatch([{ txs: [], txCount: 3 }], [0, 0]);
    expectStatus(c.bytes, ParseStatus.CountTooLarge, c.entries[0]!.txCount);
  });
});

describe('parseEntriesInto: CompactU16', () => {
  const bad: [string, number[]][] = [
    ['80 00', [0x80, 0x00]],
    ['ff 80 00', [0xff, 0x80, 0x00]],
    ['ff ff 04', [0xff, 0xff, 0x04]],
    ['80 80 80', [0x80, 0x80, 0x80]],
  ];
  for (const [label, raw] of bad) {
    it(`rejects ${label} at every compact-u16 of a transaction, at its first byte`, () => {
      const cases: [string, CraftedTx, (o: ReturnType<typeof writeTx>) => number][] = [
        ['signature count', legacyTx({ signatureCountRaw: raw }), (o) => o.start],
        ['key count', legacyTx({ keyCountRaw: raw }), (o) => o.keyCount],
        ['instruction count', legacyTx({ instructionCountRaw: raw }), (o) => o.instructionCount],
        ['account count', legacyTx({ instructions: [{ programIdIndex: 2, accounts: [0], accountCountRaw: raw }] }), (o) => o.instructions[0]!.accountCount],
        ['data length', legacyTx({ instructions: [{ programIdIndex: 2, accounts: [0], dataLengthRaw: raw }] }), (o) => o.instructions[0]!.dataLength],
        ['lookup count', v0Tx({ lookupCountRaw: raw }), (o) => o.lookupCount],
        ['writable count', v0Tx({ lookups: [{ writableIndexes: [1], readonlyIndexes: [2], writableCountRaw: raw }] }), (o) => o.lookups[0]!.writableCount],
        ['readonly count', v0Tx({ lookups: [{ writableIndexes: [1], readonlyIndexes: [2], readonlyCountRaw: raw }] }), (o) => o.lookups[0]!.readonlyCount],
      ];
      for (const [name, tx, at] of cases) {
        const { bytes, tx: offsets } = oneEntry([tx]);
        const r = parse(bytes);
        expect({ name, status: r.status, offset: r.offset }).toEqual({ name, status: 'bad_compact_u16', offset: at(offsets[0]!) });
      }
    });
  }
});

describe('parseEntriesInto: Version', () => {
  it('rejects versions other than 0 at the first message byte, before reading the header', () => {
    for (const first of [0x81, 0xfe, 0xff]) {
      const { bytes, tx } = oneEntry([v0Tx({ versionByte: first })]);
      expectStatus(bytes, ParseStatus.Version, tx[0]!.message);
      expectStatus(bytes.subarray(0, tx[0]!.message + 1), ParseStatus.Version, tx[0]!.message);
    }
  });
});

describe('parseEntriesInto: Header', () => {
  it('rejects a signature count that differs from numRequiredSignatures', () => {
    const { bytes, tx } = oneEntry([legacyTx({ signatureCount: 2 })]);
    expectStatus(bytes, ParseStatus.Header, tx[0]!.message);
  });

  it('rejects a transaction without a writable signing fee payer', () => {
    const none = oneEntry([legacyTx({ signatureCount: 0, header: [0, 0, 0] })]);
    expectStatus(none.bytes, ParseStatus.Header, none.tx[0]!.message);
    const readonlyPayer = oneEntry([v0Tx({ signatureCount: 2, header: [2, 2, 0] })]);
    expectStatus(readonlyPayer.bytes, ParseStatus.Header, readonlyPayer.tx[0]!.message);
  });

  it('rejects signed plus readonly-unsigned accounts beyond the static keys', () => {
    const over = oneEntry([legacyTx({ header: [1, 0, 3], keyCount: 3 })]);
    expectStatus(over.bytes, ParseStatus.Header, over.tx[0]!.message);
    const exact = oneEntry([legacyTx({ header: [1, 0, 2], keyCount: 3 })]);
    expectStatus(exact.bytes, ParseStatus.Ok, 0);
  });

  it('checks the header after the key count and before the keys are read', () => {
    const { bytes, tx } = oneEntry([legacyTx({ signatureCount: 2 })]);
    expectStatus(bytes.subarray(0, tx[0]!.keys + 1), ParseStatus.Header, tx[0]!.message);
    expectStatus(bytes.subarray(0, tx[0]!.keyCount), ParseStatus.Truncated, tx[0]!.keyCount);
  });
});

describe('parseEntriesInto: AccountIndex', () => {
  it('rejects a program-id index outside the static keys at that byte', () => {
    const a = oneEntry([legacyTx({ instructions: [{ programIdIndex: 3, accounts: [] }] })]);
    expectStatus(a.bytes, ParseStatus.AccountIndex, a.tx[0]!.instructions[0]!.programIdIndex);
    const b = oneEntry([v0Tx({ instructions: [{ programIdIndex: 3, accounts: [] }] })]);
    expectStatus(b.bytes, ParseStatus.AccountIndex, b.tx[0]!.instructions[0]!.programIdIndex);
  });

  it('rejects the first account index beyond static plus looked-up keys, after the lookups', () => {
    const a = oneEntry([
      legacyTx({
        instructions: [
          { programIdIndex: 2, accounts: [0, 1] },
          { programIdIndex: 2, accounts: [1, 3, 0, 200] },
        ],
      }),
    ]);
    expectStatus(a.bytes, ParseStatus.AccountIndex, a.tx[0]!.instructions[1]!.accounts + 1);
    const b = oneEntry([v0Tx({ instructions: [{ programIdIndex: 2, accounts: [0, 4, 5, 9] }] })]);
    expectStatus(b.bytes, ParseStatus.AccountIndex, b.tx[0]!.instructions[0]!.accounts + 2);
    // A truncation later in the transaction is read first, so it wins.
    expectStatus(b.bytes.subarray(0, b.tx[0]!.lookupCount), ParseStatus.Truncated, b.tx[0]!.lookupCount);
  });

  it('rejects more than 256 accounts at the first byte of the transaction', () => {
    const v0 = oneEntry([
      legacyTx(),
      v0Tx({
        keyCount: 6,
        header: [1, 0, 1],
        lookups: [
          { writableIndexes: new Array(126).fill(0), readonlyIndexes: [] },
          { writableIndexes: [], readonlyIndexes: new Array(125).fill(0) },
        ],
        instructions: [{ programIdIndex: 5, accounts: [0] }],
      }),
    ]);
    const r = expectStatus(v0.bytes, ParseStatus.AccountIndex, v0.tx[1]!.start);
    expect(r.counts).toEqual([1, 1, 2]);
    const legacy = oneEntry([legacyTx({ keyCount: 257 })]);
    expectStatus(legacy.bytes, ParseStatus.AccountIndex, legacy.tx[0]!.start);
  });
});

describe('parseEntriesInto: OutputFull', () => {
  const txs = [legacyTx(), v0Tx({ instructions: [{ programIdIndex: 2, accounts: [0] }, { programIdIndex: 1, accounts: [] }] })];

  it('stops before the entry record that does not fit, at the entry', () => {
    const { bytes, entry } = oneEntry(txs);
    const r = expectStatus(bytes, ParseStatus.OutputFull, entry.start, { ...ROOMY, entries: 0 });
    expect(r.counts).toEqual([0, 0, 0]);
  });

  it('stops before the transaction record that does not fit, at the transaction', () => {
    const { bytes, tx } = oneEntry(txs);
    const r = expectStatus(bytes, ParseStatus.OutputFull, tx[1]!.start, { ...ROOMY, txs: 1 });
    expect(r.counts).toEqual([1, 1, 3]);
    // a partial record slot is no room
    expectStatus(bytes, ParseStatus.OutputFull, tx[1]!.start, { ...ROOMY, txs: 1.5 });
  });

  it('stops before the program index that does not fit, at its program-id byte', () => {
    const { bytes, tx } = oneEntry(txs);
    const r = expectStatus(bytes, ParseStatus.OutputFull, tx[1]!.instructions[1]!.programIdIndex, { ...ROOMY, programs: 2 });
    expect(r.counts).toEqual([1, 1, 2]);
  });

  it('reports a malformed transaction rather than a full array', () => {
    const { bytes, tx } = oneEntry([legacyTx(), legacyTx({ signatureCount: 2 })]);
    expectStatus(bytes, ParseStatus.Header, tx[1]!.message, { ...ROOMY, txs: 1 });
  });
});
