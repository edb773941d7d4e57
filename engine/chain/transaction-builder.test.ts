import { createKeyPairFromPrivateKeyBytes, getAddressFromPublicKey, signBytes as kitSignBytes, verifySignature as kitVerify } from '@solana/kit';
import { beforeAll, describe, expect, it } from 'vitest';

import { ErrorCode } from '../errors.js';
import * as base58 from './base58.js';
import { encodeEntries } from './entry-encoder.js';
import { buildKitVectors, decodeWithKit, type KitVector } from './testing/kit-vectors.js';
import { testKey } from './testing/kit-transactions.js';
import { Prng } from '../prng.js';
import { toBuilderInput } from './testing/random-transactions.js';
import {
  buildTransaction,
  compareAddresses,
  compileMessage,
  generateKeypair,
  keypairFromSeed,
  keypairSeed,
  MAX_TRANSACTION_BYTES,
  verifySignature,
  type TransactionInput,
} from './transaction-builder.js';
import { decodeEntryBatch } from './transaction-view.js';

let vectors: KitVector[] = [];

beforeAll(async () => {
  vectors = await buildKitVectors(80, 4242);
});

describe('buildTransaction', () => {
  it('produces the same bytes as @solana/kit for the same message, legacy and v0', () => {
    for (const v of vectors) {
      const ours = buildTransaction(toBuilderInput(v.description));
      expect(Buffer.from(ours).toString('hex'), v.name).toBe(Buffer.from(v.bytes).toString('hex'));
    }
  });

  it('signs with every required signer, and the signatures verify', async () => {
    for (const v of vectors.slice(0, 30)) {
      const kit = decodeWithKit(v.bytes);
      kit.signatures.forEach((sig, i) => {
        const ok = verifySignature(kit.messageBytes, base58.decode(sig), base58.decodePubkey(kit.accountKeys[i]!));
        expect(ok, `${v.name} signature ${i}`).toBe(true);
      });
    }
    // and with kit's WebCrypto verifier
    const seed = new Prng(1).bytes(32);
    const ours = keypairFromSeed(seed);
    const tx = buildTransaction({ payer: ours, recentBlockhash: testKey(1).address, instructions: [] });
    const [view] = decodeEntryBatch(encodeEntries([{ numHashes: 0n, hash: new Uint8Array(32), transactions: [tx] }]), 0n);
    const kitKeys = await createKeyPairFromPrivateKeyBytes(seed);
    const sig = base58.decode(view!.signature());
    expect(await kitVerify(kitKeys.publicKey, sig as Parameters<typeof kitVerify>[1], view!.messageBytes())).toBe(true);
  });

  it('orders accounts: payer, writable signers, readonly signers, writable, readonly (programs last group)', () => {
    const prng = new Prng(9);
    const payer = keypairFromSeed(prng.bytes(32));
    const roSigner = keypairFromSeed(prng.bytes(32));
    const wSigner = keypairFromSeed(prng.bytes(32));
    const [w, ro, program] = [testKey(1).address, testKey(2).address, testKey(3).address];
    const input: TransactionInput = {
      payer,
      signers: [roSigner, wSigner],
      recentBlockhash: testKey(4).address,
      instructions: [
        {
          programId: program,
          accounts: [
            { pubkey: ro, isSigner: false, isWritable: false },
            { pubkey: roSigner.address, isSigner: true, isWritable: false },
            { pubkey: w, isSigner: false, isWritable: true },
            { pubkey: wSigner.address, isSigner: true, isWritable: true },
            { pubkey: payer.address, isSigner: false, isWritable: false },
          ],
        },
      ],
    };
    const m = compileMessage(input);
    const readonlyTail = [ro, program].sort(new Intl.Collator('en', { caseFirst: 'lower', sensitivity: 'variant' }).compare);
    expect(m.staticAccountAddresses).toEqual([payer.address, wSigner.address, roSigner.address, w, ...readonlyTail]);
    expect(m.header).toEqual({ numRequiredSignatures: 3, numReadonlySigned: 1, numReadonlyUnsigned: 2 });
    expect(m.instructions[0]!.accounts).toEqual([m.staticAccountAddresses.indexOf(ro), 2, 3, 1, 0]);
    expect(m.version).toBe('legacy');
  });

  it('loads non-signer accounts through tables but keeps signers and programs static', () => {
    const payer = keypairFromSeed(new Prng(10).bytes(32));
    const [a, b, program, table] = [testKey(11).address, testKey(12).address, testKey(13).address, testKey(14).address];
    const m = compileMessage({
      payer,
      recentBlockhash: testKey(15).address,
      lookupTables: [{ address: table, addresses: [program, payer.address, b, a] }],
      instructions: [
        {
          programId: program,
          accounts: [
            { pubkey: a, isSigner: false, isWritable: false },
            { pubkey: b, isSigner: false, isWritable: true },
            { pubkey: payer.address, isSigner: false, isWritable: true },
          ],
        },
      ],
    });
    expect(m.version).toBe(0);
    expect(m.staticAccountAddresses).toEqual([payer.address, program]);
    expect(m.addressTableLookups).toEqual([{ accountKey: base58.decodePubkey(table), writableIndexes: [2], readonlyIndexes: [3] }]);
    // index space: static keys, then writable looked-up, then readonly looked-up
    expect(m.instructions[0]!.accounts).toEqual([3, 2, 0]);
  });

  it('refuses a missing signer, a writable or fee-paying program, lookups on legacy, and oversized transactions', () => {
    const payer = generateKeypair();
    const other = generateKeypair();
    const program = testKey(20).address;
    const base = { payer, recentBlockhash: testKey(21).address };
    expect(() =>
      buildTransaction({ ...base, instructions: [{ programId: program, accounts: [{ pubkey: other.address, isSigner: true, isWritable: false }] }] }),
    ).toThrow(/missing signer/);
    expect(() =>
      buildTransaction({ ...base, instructions: [{ programId: program, accounts: [{ pubkey: program, isSigner: false, isWritable: true }] }] }),
    ).toThrow(expect.objectContaining({ code: ErrorCode.TransactionInvalid, context: { reason: 'writable-program', address: program } }));
    expect(() => buildTransaction({ ...base, instructions: [{ programId: payer.address, accounts: [] }] })).toThrow(/cannot pay fees/);
    expect(() =>
      buildTransaction({ ...base, version: 'legacy', lookupTables: [{ address: testKey(22).address, addresses: [] }], instructions: [] }),
    ).toThrow(expect.objectContaining({ code: ErrorCode.TransactionInvalid, context: { reason: 'lookup-tables-need-v0' } }));
    expect(() =>
      buildTransaction({ ...base, instructions: [{ programId: program, accounts: [], data: new Uint8Array(MAX_TRANSACTION_BYTES) }] }),
    ).toThrow(expect.objectContaining({ code: ErrorCode.TransactionTooLarge }));
  });
});

describe('compareAddresses', () => {
  it('orders base58 addresses exactly like kit\'s collator', () => {
    const collator = new Intl.Collator('en', { caseFirst: 'lower', ignorePunctuation: false, localeMatcher: 'best fit', numeric: false, sensitivity: 'variant', usage: 'sort' });
    const prng = new Prng(31);
    const alphabet = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
    const texts: string[] = [];
    for (let i = 0; i < 400; i++) texts.push(base58.encode(prng.bytes(prng.chance(0.9) ? 32 : prng.range(0, 33))));
    for (let i = 0; i < 400; i++) {
      // same letters, different case; shared prefixes; digits against letters
      const base = Array.from({ length: prng.range(1, 6) }, () => alphabet[prng.int(alphabet.length)]!).join('');
      const flipped = [...base].map((ch) => (prng.chance(0.5) ? ch.toUpperCase() : ch.toLowerCase())).filter((ch) => alphabet.includes(ch)).join('');
      texts.push(base, flipped, base + alphabet[prng.int(58)]);
    }
    const sign = (x: number) => Math.sign(x);
    for (let i = 0; i < texts.length; i++) {
      for (let j = 0; j < 40; j++) {
        const a = texts[i]!;
        const b = texts[prng.int(texts.length)]!;
        expect(sign(compareAddresses(a, b)), `${a} vs ${b}`).toBe(sign(collator.compare(a, b)));
      }
    }
  });
});

describe('keypairs', () => {
  it('derives the same address from a seed as kit, and gives the seed back', async () => {
    const prng = new Prng(77);
    for (let i = 0; i < 5; i++) {
      const seed = prng.bytes(32);
      const ours = keypairFromSeed(seed);
      const kit = await createKeyPairFromPrivateKeyBytes(seed);
      expect(ours.address).toBe(await getAddressFromPublicKey(kit.publicKey));
      expect(base58.encode(ours.publicKey)).toBe(ours.address);
      expect(keypairSeed(ours)).toEqual(seed);
      // ed25519 is deterministic: kit and node:crypto sign identically
      const message = prng.bytes(50);
      const kitSig = new Uint8Array(await kitSignBytes(kit.privateKey, message));
      const tx = buildTransaction({ payer: ours, recentBlockhash: testKey(i).address, instructions: [] });
      expect(tx.length).toBeGreaterThan(64);
      expect(verifySignature(message, kitSig, ours.publicKey)).toBe(true);
    }
  });

  it('generates fresh keypairs whose signatures verify, and rejects bad seeds and forged signatures', () => {
    const k = generateKeypair();
    const tx = buildTransaction({ payer: k, recentBlockhash: testKey(5).address, instructions: [] });
    const [view] = decodeEntryBatch(encodeEntries([{ numHashes: 0n, hash: new Uint8Array(32), transactions: [tx] }]), 0n);
    const sig = base58.decode(view!.signature());
    expect(verifySignature(view!.messageBytes(), sig, k.publicKey)).toBe(true);
    sig[0]! ^= 1;
    expect(verifySignature(view!.messageBytes(), sig, k.publicKey)).toBe(false);
    expect(verifySignature(view!.messageBytes(), sig.subarray(1), k.publicKey)).toBe(false);
    expect(() => keypairFromSeed(new Uint8Array(31))).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'seed', value: 31 } }));
  });
});
