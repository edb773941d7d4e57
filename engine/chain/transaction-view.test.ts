/**
 * Parser records and TransactionView against a real Solana serializer: transactions built and
 * encoded by @solana/kit, wrapped in entry batches (with ticks), compared field by field with
 * kit's own decoders. Plus the jito-docs sendBundle vector, toJSON and decodeEntryBatch errors.
 */
import { beforeAll, describe, expect, it } from 'vitest';

import { ErrorCode, isTpError, type TpError } from '../errors.js';
import * as base58 from './base58.js';
import { EntryBatchIndex } from './entry-batch-index.js';
import { encodeEntries, type EntryInput } from './entry-encoder.js';
import { availableParsers } from './parser-implementations.js';
import { kitTransaction } from './testing/kit-transactions.js';
import { buildKitVectors, decodeWithKit, type KitVector } from './testing/kit-vectors.js';
import { Prng } from '../prng.js';
import { decodeEntryBatch, TransactionView } from './transaction-view.js';

let vectors: KitVector[] = [];
let payload: Uint8Array;

/** Entries of 0-7 transactions with ticks in between, in vector order. */
function wrap(txs: Uint8Array[], seed: number): Uint8Array {
  const prng = new Prng(seed);
  const entries: EntryInput[] = [{ numHashes: 12_500n, hash: prng.bytes(32), transactions: [] }];
  for (let i = 0; i < txs.length; ) {
    const n = prng.range(1, 7);
    entries.push({ numHashes: BigInt(prng.range(1, 1 << 30)) * 1000n, hash: prng.bytes(32), transactions: txs.slice(i, i + n) });
    if (prng.chance(0.5)) entries.push({ numHashes: 12_500n, hash: prng.bytes(32), transactions: [] });
    i += n;
  }
  return encodeEntries(entries);
}

beforeAll(async () => {
  vectors = await buildKitVectors(40, 42);
  payload = wrap(
    vectors.map((v) => v.bytes),
    7,
  );
});

function expectViewMatchesKit(view: TransactionView, name: string): void {
  const kit = decodeWithKit(view.wireBytes());
  const label = (field: string) => `${name}: ${field}`;
  expect(view.signatures(), label('signatures')).toEqual(kit.signatures);
  expect(view.signature(), label('signature')).toBe(kit.signatures[0]);
  expect(view.signatureCount, label('signature count')).toBe(kit.signatures.length);
  expect(view.version, label('version')).toBe(kit.version);
  expect(view.header, label('header')).toEqual(kit.header);
  expect(view.accountKeys(), label('account keys')).toEqual(kit.accountKeys);
  expect(view.recentBlockhash(), label('blockhash')).toBe(kit.recentBlockhash);
  expect(
    view.instructions().map((ix) => ({ ...ix, data: Array.from(ix.data) })),
    label('instructions'),
  ).toEqual(kit.instructions);
  expect(view.addressTableLookups(), label('lookups')).toEqual(kit.addressTableLookups);
  expect(view.programIds(), label('program ids')).toEqual(kit.programIds);
  expect(view.messageBytes(), label('message bytes')).toEqual(kit.messageBytes);
}

describe('transactions serialized by @solana/kit', () => {
  it('covers legacy and v0, lookups, many and zero instructions, 1232-byte transactions', () => {
    const decoded = vectors.map((v) => decodeWithKit(v.bytes));
    expect(decoded.some((d) => d.version === 'legacy')).toBe(true);
    expect(decoded.some((d) => d.addressTableLookups.some((l) => l.writableIndexes.length > 0 && l.readonlyIndexes.length > 0))).toBe(true);
    expect(decoded.some((d) => d.instructions.length === 0)).toBe(true);
    expect(decoded.some((d) => d.instructions.length === 64)).toBe(true);
    expect(decoded.some((d) => d.header.numRequiredSignatures === 11 && d.header.numReadonlySigned > 0)).toBe(true);
    expect(vectors.filter((v) => v.bytes.length === 1232).length).toBe(2);
    expect(vectors.every((v) => v.bytes.length <= 1232)).toBe(true);
  });

  it('parses them with every available parser into records matching kit, field by field', () => {
    for (const parser of availableParsers()) {
      const index = new EntryBatchIndex({ entries: 2, txs: 2, programs: 2 });
      expect(index.parse(payload, parser.parse), parser.name).toBe(0);
      expect(index.txCount).toBe(vectors.length);
      for (let i = 0; i < vectors.length; i++) {
        const v = vectors[i]!;
        expect(index.txBytes(i), `${parser.name} ${v.name}`).toEqual(v.bytes);
        expectViewMatchesKit(new TransactionView(payload, index, i), `${parser.name} ${v.name}`);
      }
    }
  });

  it('keeps entry boundaries: every transaction points at the entry that holds it', () => {
    const index = new EntryBatchIndex();
    index.parse(payload);
    let tx = 0;
    for (let e = 0; e < index.entryCount; e++) {
      expect(index.entryFirstTx(e)).toBe(tx);
      for (let k = 0; k < index.entryTxCount(e); k++, tx++) expect(index.txEntry(tx)).toBe(e);
    }
    expect(tx).toBe(vectors.length);
    expect(index.entryNumHashes(0)).toBe(12_500n);
  });

  it('decodeEntryBatch returns one view per transaction, in order', () => {
    const views = decodeEntryBatch(payload, 123n);
    expect(views.map((v) => v.signature())).toEqual(vectors.map((v) => decodeWithKit(v.bytes).signatures[0]));
    views.forEach((view, i) => expectViewMatchesKit(view, vectors[i]!.name));
  });
});

describe('jito-docs sendBundle vector (docs/wire-formats.md §2)', () => {
  const payer = 'CwhYWdqwqCsrSzwdBKmvjbQ3zW9znJG3pdMoxE176pwj';
  const tip = '96gYZGLnJYVFmbjzopPSU6QiEV5fGqZNyN9nmNhvrZU5';
  const system = '11111111111111111111111111111111';
  const memo = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';
  const transferData = Uint8Array.from(Buffer.from('02000000a086010000000000', 'hex'));

  it('decodes the documented fields from the same message rebuilt by kit', async () => {
    // The docs' blockhash and signature are not in the reference; everything else is.
    const tx = await kitTransaction({
      version: 'legacy',
      payer,
      recentBlockhash: base58.encode(new Uint8Array(32).fill(9)),
      signerSeeds: [],
      instructions: [
        { programId: memo, accounts: [], data: new TextEncoder().encode('jito bundle 0: jito test') },
        {
          programId: system,
          accounts: [
            { pubkey: payer, isSigner: true, isWritable: true },
            { pubkey: tip, isSigner: false, isWritable: true },
          ],
          data: transferData,
        },
      ],
    });
    expect(tx.length).toBe(274);
    const [view] = decodeEntryBatch(encodeEntries([{ numHashes: 1n, hash: new Uint8Array(32), transactions: [tx] }]), 1n);
    expect(view!.signatureCount).toBe(1);
    expect(view!.wireBytes()[65]).toBe(0x01); // first message byte: legacy, 1 required signature
    expect(view!.version).toBe('legacy');
    expect(view!.header).toEqual({ numRequiredSignatures: 1, numReadonlySigned: 0, numReadonlyUnsigned: 2 });
    expect(view!.accountKeys()).toEqual([payer, tip, system, memo]);
    const [ix0, ix1] = view!.instructions();
    expect(ix0!.programIdIndex).toBe(3);
    expect(new TextDecoder().decode(ix0!.data)).toBe('jito bundle 0: jito test');
    expect(ix1!.programIdIndex).toBe(2);
    expect(ix1!.accounts).toEqual([0, 1]);
    expect(Buffer.from(ix1!.data).readBigUInt64LE(4)).toBe(100_000n);
    expect(view!.programIds()).toEqual([memo, system]);
    expect([0, 1, 2, 3].map((k) => view!.isWritable(k))).toEqual([true, true, false, false]);
  });
});

describe('TransactionView', () => {
  it('gives the decode-entries record from toJSON, with the slot as a decimal string', () => {
    const views = decodeEntryBatch(payload, 2n ** 63n + 5n);
    const v0 = views.find((v) => v.version === 0 && v.addressTableLookups().length > 0)!;
    const record = v0.toJSON();
    expect(Object.keys(record)).toEqual([
      'slot',
      'entryIndex',
      'signature',
      'version',
      'header',
      'accountKeys',
      'addressTableLookups',
      'programIds',
      'recentBlockhash',
    ]);
    expect(record.slot).toBe('9223372036854775813');
    expect(v0.toJSON(7n).slot).toBe('7');
    expect(v0.toJSON(8).slot).toBe('8');
    const viaStringify = JSON.parse(JSON.stringify([v0]))[0];
    expect(viaStringify).toEqual(record);
    const kit = decodeWithKit(v0.wireBytes());
    expect(record.addressTableLookups).toEqual(kit.addressTableLookups);
    expect(record.entryIndex).toBe(v0.entryIndex);
  });

  it('stays valid after its index parses another batch', () => {
    const index = new EntryBatchIndex();
    index.parse(payload);
    const view = new TransactionView(payload, index, 3);
    const before = view.toJSON(1n);
    index.parse(wrap([vectors[0]!.bytes], 99));
    expect(view.toJSON(1n)).toEqual(before);
  });

  it('refuses a transaction index outside the batch', () => {
    const index = new EntryBatchIndex();
    index.parse(payload);
    expect(() => new TransactionView(payload, index, index.txCount)).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'txIndex', value: index.txCount } }));
  });
});

describe('decodeEntryBatch', () => {
  it('throws TP_ERR_ENTRY_MALFORMED with the status name, offset and slot', () => {
    const one = encodeEntries([{ numHashes: 1n, hash: new Uint8Array(32), transactions: [vectors[4]!.bytes] }]);
    const cut = one.subarray(0, one.length - 20);
    try {
      decodeEntryBatch(cut, 42n);
      expect.unreachable();
    } catch (err) {
      expect(isTpError(err, ErrorCode.EntryMalformed)).toBe(true);
      const e = err as TpError<typeof ErrorCode.EntryMalformed>;
      expect(e.context).toEqual({ status: 'truncated', offset: expect.any(Number), slot: '42' });
      expect('offset' in e.context ? e.context.offset : Infinity).toBeLessThanOrEqual(cut.length);
      expect(JSON.stringify(e)).toContain('TP_ERR_ENTRY_MALFORMED');
    }
    expect(() => decodeEntryBatch(Uint8Array.from([1, 0, 0, 0, 0, 0, 0, 0]), 1n)).toThrow(/count_too_large at offset 0/);
  });

  it('returns no views for an empty entry vector', () => {
    expect(decodeEntryBatch(new Uint8Array(8), 1n)).toEqual([]);
  });
});
