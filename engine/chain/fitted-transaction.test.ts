import { getTransactionDecoder } from '@solana/kit';
import { describe, expect, it } from 'vitest';

import { ErrorCode, isTpError } from '../errors.js';
import { Prng } from '../prng.js';
import * as base58 from './base58.js';
import { encodeEntries } from './entry-encoder.js';
import { buildFittedTransaction, signedTransactionSize } from './fitted-transaction.js';
import { decodeWithKit } from './testing/kit-vectors.js';
import { MAX_TRANSACTION_BYTES, keypairFromSeed, messageSize, type InstructionInput } from './transaction-builder.js';
import { decodeEntryBatch } from './transaction-view.js';

const rng = new Prng(77);
const payer = keypairFromSeed(rng.bytes(32));
const program = base58.encode(rng.bytes(32));
const table = base58.encode(rng.bytes(32));
const blockhash = base58.encode(rng.bytes(32));
const keys = Array.from({ length: 80 }, () => base58.encode(rng.bytes(32)));

/** One instruction over the first `n` keys, alternately writable and readonly. */
function instruction(n: number): InstructionInput {
  return {
    programId: program,
    accounts: keys.slice(0, n).map((pubkey, i) => ({ pubkey, isSigner: false, isWritable: i % 2 === 0 })),
    data: Uint8Array.of(1, 2, 3),
  };
}

function build(n: number) {
  return buildFittedTransaction({ payer, recentBlockhash: blockhash, instructions: [instruction(n)], lookupTables: [{ address: table, addresses: keys }] });
}

describe('buildFittedTransaction', () => {
  it('stays legacy while it fits in 1232 bytes and switches to v0 with lookups past it', () => {
    let n = 1;
    while (build(n).version === 'legacy') n++;
    const lastLegacy = build(n - 1);
    const firstV0 = build(n);
    // Legacy: header 3 + key count + (n + 2) keys + blockhash + one instruction + 65 bytes of signature.
    expect(lastLegacy.size).toBeLessThanOrEqual(MAX_TRANSACTION_BYTES);
    expect(lastLegacy.size + 32 + 1).toBeGreaterThan(MAX_TRANSACTION_BYTES);
    expect(signedTransactionSize(lastLegacy.message, messageSize(lastLegacy.message))).toBe(lastLegacy.size);
    expect(firstV0.version).toBe(0);
    expect(firstV0.size).toBeLessThan(lastLegacy.size);

    // The lookups list each table index once, writable ones in the writable list (in account order).
    const lookup = firstV0.message.addressTableLookups[0]!;
    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    expect(base58.encode(lookup.accountKey)).toBe(table);
    expect(sorted(lookup.writableIndexes)).toEqual(Array.from({ length: Math.ceil(n / 2) }, (_, i) => i * 2));
    expect(sorted(lookup.readonlyIndexes)).toEqual(Array.from({ length: Math.floor(n / 2) }, (_, i) => i * 2 + 1));
    expect(firstV0.message.staticAccountAddresses).toEqual([payer.address, program]);

    // Round trip: kit's decoder and the engine's own parser read the same message back.
    for (const tx of [lastLegacy, firstV0]) {
      const kit = decodeWithKit(tx.bytes);
      expect(kit.version).toBe(tx.version);
      expect(kit.signatures[0]).toBe(tx.signature);
      expect(kit.addressTableLookups).toEqual(
        tx.message.addressTableLookups.map((l) => ({ accountKey: base58.encode(l.accountKey), writableIndexes: l.writableIndexes, readonlyIndexes: l.readonlyIndexes })),
      );
      const [view] = decodeEntryBatch(encodeEntries([{ numHashes: 0n, hash: new Uint8Array(32), transactions: [tx.bytes] }]), 0n);
      expect(view!.signature()).toBe(tx.signature);
      expect(view!.version).toBe(tx.version);
      expect(view!.toJSON().accountKeys).toEqual(kit.accountKeys);
      expect(view!.toJSON().addressTableLookups).toEqual(kit.addressTableLookups);
    }
  });

  it('refuses what fits in neither form, naming both sizes', () => {
    let caught: unknown;
    try {
      buildFittedTransaction({
        payer,
        recentBlockhash: blockhash,
        instructions: [{ ...instruction(10), data: new Uint8Array(1200) }],
        lookupTables: [{ address: table, addresses: keys }],
      });
    } catch (err) {
      caught = err;
    }
    expect(isTpError(caught, ErrorCode.TransactionTooLarge)).toBe(true);
    const tried = (caught as { context: { tried: Record<string, number> } }).context.tried;
    expect(tried.legacy).toBeGreaterThan(MAX_TRANSACTION_BYTES);
    expect(tried['0']).toBeGreaterThan(MAX_TRANSACTION_BYTES);
  });

  it('without tables, is legacy or nothing; a forced version is honoured', () => {
    expect(() => buildFittedTransaction({ payer, recentBlockhash: blockhash, instructions: [instruction(40)] })).toThrow(/does not fit/);
    expect(buildFittedTransaction({ payer, recentBlockhash: blockhash, instructions: [instruction(3)], lookupTables: [{ address: table, addresses: keys }], version: 0 }).version).toBe(0);
  });

  it('leaves the signatures empty for the signer to fill in, with the same message as the signed form', () => {
    const signed = buildFittedTransaction({ payer, recentBlockhash: blockhash, instructions: [instruction(3)], version: 0 });
    const unsigned = buildFittedTransaction({ payer: payer.address, recentBlockhash: blockhash, instructions: [instruction(3)], version: 0, unsigned: true });
    expect(unsigned.signature).toBe('');
    expect(unsigned.size).toBe(signed.size);
    // compact-u16 count 1, 64 zero bytes, then the message bytes the signed form signs.
    expect(unsigned.bytes[0]).toBe(1);
    expect(unsigned.bytes.subarray(1, 65).every((b) => b === 0)).toBe(true);
    expect(Buffer.from(unsigned.bytes.subarray(65)).equals(Buffer.from(signed.bytes.subarray(65)))).toBe(true);
    // @solana/kit reads an all-zero signature as "not signed yet".
    expect(getTransactionDecoder().decode(unsigned.bytes).signatures).toEqual({ [payer.address]: null });
  });
});
