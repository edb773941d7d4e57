/**
 * Test support for address lookup tables in the scanner: signed v0 swap-like transactions that
 * reach their accounts through lookup tables (compiled by transaction-builder.ts, as @solana/kit
 * would), each with its v0 account list (static keys, loaded writable, loaded readonly), and entry
 * batches holding them.
 */
import * as base58 from '../../chain/base58.js';
import { encodeEntries } from '../../chain/entry-encoder.js';
import { buildTransaction, compileMessage, keypairFromSeed, type LookupTableInput, type TransactionInput } from '../../chain/transaction-builder.js';
import type { AddressTableLookup } from '../../chain/transaction-view.js';

export const TEST_DEX_PROGRAM = 'whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc';

export interface SwapInput {
  /** Seed of the fee payer (distinct seeds give distinct signatures). */
  seed: number;
  /** Non-signer accounts of the DEX instruction. */
  writable: readonly string[];
  readonly?: readonly string[];
  tables: readonly { address: string; addresses: readonly string[] }[];
}

export interface BuiltSwap {
  bytes: Uint8Array;
  /** Signature 0 (the transaction id). */
  signature: Uint8Array;
  /** The v0 account list: static keys, then every lookup's writable, then every lookup's readonly addresses. */
  accounts: string[];
  staticKeyCount: number;
  lookups: AddressTableLookup[];
}

export function buildSwap(input: SwapInput): BuiltSwap {
  const seed = new Uint8Array(32);
  new DataView(seed.buffer).setUint32(0, input.seed + 1);
  const payer = keypairFromSeed(seed);
  const tables: LookupTableInput[] = input.tables.map((t) => ({ address: t.address, addresses: [...t.addresses] }));
  const tx: TransactionInput = {
    payer,
    recentBlockhash: base58.encode(new Uint8Array(32).fill(7)),
    instructions: [
      {
        programId: TEST_DEX_PROGRAM,
        accounts: [
          { pubkey: payer.address, isSigner: true, isWritable: true },
          ...input.writable.map((pubkey) => ({ pubkey, isSigner: false, isWritable: true })),
          ...(input.readonly ?? []).map((pubkey) => ({ pubkey, isSigner: false, isWritable: false })),
        ],
        data: new Uint8Array([9, 1, 2, 3]),
      },
    ],
    lookupTables: tables,
    version: 0,
  };
  const compiled = compileMessage(tx);
  const bytes = buildTransaction(tx);
  const byTable = new Map(input.tables.map((t) => [t.address, t.addresses]));
  const lookups: AddressTableLookup[] = compiled.addressTableLookups.map((l) => ({
    accountKey: base58.encode(l.accountKey),
    writableIndexes: [...l.writableIndexes],
    readonlyIndexes: [...l.readonlyIndexes],
  }));
  const accounts = [...compiled.staticAccountAddresses];
  for (const l of lookups) for (const i of l.writableIndexes) accounts.push(byTable.get(l.accountKey)![i]!);
  for (const l of lookups) for (const i of l.readonlyIndexes) accounts.push(byTable.get(l.accountKey)![i]!);
  return { bytes, signature: bytes.slice(1, 65), accounts, staticKeyCount: compiled.staticAccountAddresses.length, lookups };
}

/** One entry batch (ShredStream `Entry.entries`) holding `txs` in order, `perEntry` per entry. */
export function entryBatch(txs: readonly Uint8Array[], perEntry = 3): Uint8Array {
  const entries = [];
  for (let i = 0; i < txs.length; i += perEntry) {
    entries.push({ numHashes: BigInt(1 + i), hash: new Uint8Array(32).fill(i & 0xff), transactions: txs.slice(i, i + perEntry) });
  }
  if (entries.length === 0) entries.push({ numHashes: 1n, hash: new Uint8Array(32), transactions: [] });
  return encodeEntries(entries);
}
