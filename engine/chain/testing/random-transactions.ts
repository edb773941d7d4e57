/**
 * Test support: seeded random transaction descriptions, buildable both by @solana/kit
 * (kit-transactions.ts) and by our transaction-builder.ts, covering several signers (writable and
 * readonly), repeated accounts with merged roles, programs also used as accounts, and v0 lookups
 * from several tables (with signers and programs in the tables, which must stay static).
 */
import {
  compileMessage,
  keypairFromSeed,
  MAX_TRANSACTION_BYTES,
  serializeMessage,
  type TransactionInput,
} from '../transaction-builder.js';
import type { KitInstruction, KitTransactionInput } from './kit-transactions.js';
import { testKey } from './kit-transactions.js';
import { type Prng } from '../../prng.js';

export interface TxDescription extends KitTransactionInput {
  lookupTables?: { address: string; addresses: string[] }[];
}

export interface RandomTxOptions {
  version?: 'legacy' | 0;
  minInstructions?: number;
  maxInstructions?: number;
  maxDataBytes?: number;
}

export const SYSTEM_PROGRAM = '11111111111111111111111111111111';

/** Seed bytes of signer `n` of description `id` (deterministic). */
function seedOf(prng: Prng): Uint8Array {
  return prng.bytes(32);
}

export function randomTxDescription(prng: Prng, options: RandomTxOptions = {}): TxDescription {
  const version = options.version ?? (prng.chance(0.5) ? 'legacy' : 0);
  const signerSeeds: Uint8Array[] = [];
  const signers: { address: string; writable: boolean }[] = [];
  const signerCount = prng.range(1, 4);
  for (let i = 0; i < signerCount; i++) {
    const seed = seedOf(prng);
    signerSeeds.push(seed);
    signers.push({ address: keypairFromSeed(seed).address, writable: i === 0 || prng.chance(0.5) });
  }
  const plain: string[] = [];
  const plainCount = prng.range(0, 16);
  for (let i = 0; i < plainCount; i++) plain.push(testKey(prng.u32()).address);
  const programs: string[] = [];
  const programCount = prng.range(1, 4);
  for (let i = 0; i < programCount; i++) programs.push(i === 0 && prng.chance(0.3) ? SYSTEM_PROGRAM : testKey(prng.u32()).address);

  const instructions: KitInstruction[] = [];
  const ixCount = prng.range(options.minInstructions ?? 0, options.maxInstructions ?? 6);
  const maxData = options.maxDataBytes ?? 40;
  for (let i = 0; i < ixCount; i++) {
    const accounts: KitInstruction['accounts'] = [];
    const n = prng.range(0, 8);
    for (let k = 0; k < n; k++) {
      const r = prng.next();
      if (r < 0.25) {
        const s = prng.pick(signers);
        accounts.push({ pubkey: s.address, isSigner: true, isWritable: s.writable && prng.chance(0.7) });
      } else if (r < 0.3 && programs.length > 1) {
        // a program passed as a (readonly) account, as CPIs do
        accounts.push({ pubkey: prng.pick(programs), isSigner: false, isWritable: false });
      } else if (plain.length > 0) {
        accounts.push({ pubkey: prng.pick(plain), isSigner: false, isWritable: prng.chance(0.5) });
      }
    }
    instructions.push({ programId: prng.pick(programs), accounts, data: prng.bytes(prng.range(0, maxData)) });
  }

  const description: TxDescription = {
    version,
    payer: signers[0]!.address,
    instructions,
    recentBlockhash: testKey(prng.u32()).address,
    signerSeeds,
  };
  if (version === 0 && prng.chance(0.8)) {
    const tables: { address: string; addresses: string[] }[] = [];
    const tableCount = prng.range(1, 3);
    for (let t = 0; t < tableCount; t++) {
      const addresses: string[] = [];
      const size = prng.range(1, 24);
      for (let i = 0; i < size; i++) {
        const r = prng.next();
        if (r < 0.6 && plain.length > 0) addresses.push(prng.pick(plain));
        else if (r < 0.7) addresses.push(prng.pick(signers).address);
        else if (r < 0.8) addresses.push(prng.pick(programs));
        else addresses.push(testKey(prng.u32()).address);
      }
      tables.push({ address: testKey(prng.u32()).address, addresses });
    }
    description.lookupTables = tables;
  }
  // Stay within the 1232-byte packet limit.
  while (description.instructions.length > 0 && transactionSize(description) > MAX_TRANSACTION_BYTES) {
    description.instructions.pop();
  }
  return description;
}

function transactionSize(d: TxDescription): number {
  const m = compileMessage(toBuilderInput(d));
  return 1 + m.header.numRequiredSignatures * 64 + serializeMessage(m).length;
}

/** The same description as our builder's input (signers from the same seeds). */
export function toBuilderInput(d: TxDescription): TransactionInput {
  const keypairs = d.signerSeeds.map((s) => keypairFromSeed(s));
  const input: TransactionInput = {
    version: d.version,
    payer: d.payer,
    instructions: d.instructions.map((ix) => ({ programId: ix.programId, accounts: ix.accounts, data: ix.data })),
    recentBlockhash: d.recentBlockhash,
    signers: keypairs,
  };
  if (d.lookupTables !== undefined) input.lookupTables = d.lookupTables;
  return input;
}
