/**
 * Test support: transaction vectors serialized by @solana/kit (legacy and v0, several signers,
 * many and zero instructions, lookups with writable and readonly indexes, 1232-byte
 * transactions, plus seeded random ones; all within the 1232-byte packet limit), and kit's own decoding of any transaction, flattened to
 * the shapes TransactionView returns, for field-by-field comparison.
 */
import { getCompiledTransactionMessageDecoder, getTransactionDecoder } from '@solana/kit';

import * as base58 from '../base58.js';
import { buildTransaction, keypairFromSeed } from '../transaction-builder.js';
import { kitTransaction, testKey, type KitInstruction } from './kit-transactions.js';
import { Prng } from '../../prng.js';
import { randomTxDescription, toBuilderInput, SYSTEM_PROGRAM, type TxDescription } from './random-transactions.js';

export interface KitVector {
  name: string;
  description: TxDescription;
  bytes: Uint8Array;
}

export interface KitDecoded {
  signatures: string[];
  version: 'legacy' | 0;
  header: { numRequiredSignatures: number; numReadonlySigned: number; numReadonlyUnsigned: number };
  accountKeys: string[];
  recentBlockhash: string;
  instructions: { programIdIndex: number; accounts: number[]; data: number[] }[];
  addressTableLookups: { accountKey: string; writableIndexes: number[]; readonlyIndexes: number[] }[];
  programIds: string[];
  messageBytes: Uint8Array;
}

const ZERO_SIGNATURE = base58.encode(new Uint8Array(64));

/** Decodes a wire transaction with kit's decoders. */
export function decodeWithKit(tx: Uint8Array): KitDecoded {
  const decoded = getTransactionDecoder().decode(tx);
  const message = getCompiledTransactionMessageDecoder().decode(decoded.messageBytes);
  if (message.version !== 'legacy' && message.version !== 0) throw new Error(`unexpected version ${message.version}`);
  const accountKeys = message.staticAccounts.map(String);
  const instructions = message.instructions.map((ix) => ({
    programIdIndex: ix.programAddressIndex,
    accounts: [...(ix.accountIndices ?? [])],
    data: [...(ix.data ?? [])],
  }));
  const programIds: string[] = [];
  for (const ix of instructions) {
    const id = accountKeys[ix.programIdIndex]!;
    if (!programIds.includes(id)) programIds.push(id);
  }
  const lookups = 'addressTableLookups' in message ? (message.addressTableLookups ?? []) : [];
  return {
    signatures: Object.values(decoded.signatures).map((s) => (s === null ? ZERO_SIGNATURE : base58.encode(new Uint8Array(s)))),
    version: message.version,
    header: {
      numRequiredSignatures: message.header.numSignerAccounts,
      numReadonlySigned: message.header.numReadonlySignerAccounts,
      numReadonlyUnsigned: message.header.numReadonlyNonSignerAccounts,
    },
    accountKeys,
    recentBlockhash: message.lifetimeToken,
    instructions,
    addressTableLookups: lookups.map((l) => ({
      accountKey: String(l.lookupTableAddress),
      writableIndexes: [...l.writableIndexes],
      readonlyIndexes: [...l.readonlyIndexes],
    })),
    programIds,
    messageBytes: new Uint8Array(decoded.messageBytes),
  };
}

function seeds(prng: Prng, n: number): { seeds: Uint8Array[]; addresses: string[] } {
  const s = Array.from({ length: n }, () => prng.bytes(32));
  return { seeds: s, addresses: s.map((x) => keypairFromSeed(x).address) };
}

/** Grows the last instruction's data so the transaction is exactly `size` bytes. */
function padTo(d: TxDescription, size: number): TxDescription {
  const last = d.instructions[d.instructions.length - 1]!;
  for (let i = 0; i < 4; i++) {
    const now = buildTransaction(toBuilderInput(d)).length;
    if (now === size) return d;
    last.data = new Uint8Array(Math.max(0, last.data.length + size - now)).fill(0x5a);
  }
  throw new Error(`could not pad to ${size} bytes`);
}

function handMade(prng: Prng): { name: string; description: TxDescription }[] {
  const out: { name: string; description: TxDescription }[] = [];
  const program = testKey(9001).address;
  const blockhash = testKey(9002).address;
  const accounts = Array.from({ length: 30 }, (_, i) => testKey(100 + i).address);

  const one = seeds(prng, 1);
  out.push({
    name: 'legacy, no instructions',
    description: { version: 'legacy', payer: one.addresses[0]!, instructions: [], recentBlockhash: blockhash, signerSeeds: one.seeds },
  });
  out.push({
    name: 'v0, no instructions, no lookups',
    description: { version: 0, payer: one.addresses[0]!, instructions: [], recentBlockhash: blockhash, signerSeeds: one.seeds },
  });

  const many: KitInstruction[] = Array.from({ length: 64 }, (_, i) => ({
    programId: i % 2 === 0 ? program : SYSTEM_PROGRAM,
    accounts: [{ pubkey: accounts[i % 4]!, isSigner: false, isWritable: i % 3 === 0 }],
    data: Uint8Array.of(i),
  }));
  out.push({
    name: 'legacy, 64 instructions',
    description: { version: 'legacy', payer: one.addresses[0]!, instructions: many, recentBlockhash: blockhash, signerSeeds: one.seeds },
  });

  const eleven = seeds(prng, 11);
  out.push({
    name: 'v0, 11 signers, writable and readonly',
    description: {
      version: 0,
      payer: eleven.addresses[0]!,
      instructions: [
        {
          programId: program,
          accounts: eleven.addresses.map((a, i) => ({ pubkey: a, isSigner: true, isWritable: i % 2 === 0 })),
          data: new Uint8Array([1, 2, 3]),
        },
      ],
      recentBlockhash: blockhash,
      signerSeeds: eleven.seeds,
    },
  });

  const two = seeds(prng, 2);
  const tableA = testKey(7001).address;
  const tableB = testKey(7002).address;
  const lookupDescription: TxDescription = {
    version: 0,
    payer: two.addresses[0]!,
    instructions: [
      {
        programId: program,
        accounts: [
          { pubkey: two.addresses[1]!, isSigner: true, isWritable: false },
          ...accounts.slice(0, 12).map((a, i) => ({ pubkey: a, isSigner: false, isWritable: i % 2 === 0 })),
        ],
        data: new Uint8Array(16).fill(7),
      },
      { programId: SYSTEM_PROGRAM, accounts: [{ pubkey: accounts[20]!, isSigner: false, isWritable: true }], data: new Uint8Array(0) },
    ],
    recentBlockhash: blockhash,
    signerSeeds: two.seeds,
    lookupTables: [
      { address: tableA, addresses: [...accounts.slice(0, 6), two.addresses[1]!, program] },
      { address: tableB, addresses: [accounts[29]!, ...accounts.slice(6, 10)] },
    ],
  };
  out.push({ name: 'v0, two lookup tables with writable and readonly indexes', description: lookupDescription });

  const big: KitInstruction = { programId: program, accounts: [{ pubkey: accounts[1]!, isSigner: false, isWritable: true }], data: new Uint8Array(900) };
  out.push({
    name: 'legacy, 1232 bytes',
    description: padTo({ version: 'legacy', payer: two.addresses[0]!, instructions: [big], recentBlockhash: blockhash, signerSeeds: two.seeds }, 1232),
  });
  out.push({
    name: 'v0 with lookups, 1232 bytes',
    description: padTo(
      {
        ...lookupDescription,
        instructions: [...lookupDescription.instructions, { ...big, data: new Uint8Array(700) }],
      },
      1232,
    ),
  });
  return out;
}

/** Hand-made vectors and `randomCount` seeded random ones, all serialized by kit. */
export async function buildKitVectors(randomCount = 40, seed = 42): Promise<KitVector[]> {
  const prng = new Prng(seed);
  const specs = handMade(prng);
  for (let i = 0; i < randomCount; i++) {
    specs.push({ name: `random #${i}`, description: randomTxDescription(prng, { maxInstructions: i % 10 === 0 ? 20 : 6 }) });
  }
  const out: KitVector[] = [];
  for (const s of specs) out.push({ ...s, bytes: await kitTransaction(s.description) });
  return out;
}
