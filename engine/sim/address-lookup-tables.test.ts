import { describe, expect, it } from 'vitest';

import { parseEntries } from '../chain/native-parser.js';
import { decodeEntryBatch, type TransactionView } from '../chain/transaction-view.js';
import { buildTransaction } from '../chain/transaction-builder.js';
import { DEFAULT_PROGRAM_IDS, DEX_KINDS, Dex } from '../dex/index.js';
import { decodeLookupTable } from '../chain/index.js';
import {
  LOOKUP_TABLE_MAX_ADDRESSES,
  LookupTableExtendError,
  encodeLookupTable,
  lookupTableAddress,
  lookupTableRecord,
  poolSwapAccounts,
  readLookupTable,
} from './address-lookup-tables.js';
import { systemProgram } from './builtin-programs.js';
import type { EntryBatch } from './chain-backend.js';
import type { SimChain } from './chain.js';
import { systemTransfer } from './flow.js';
import { KeyCache } from './key-cache.js';
import { lendingLookupAddresses } from './lending-genesis.js';
import { ADDRESS_LOOKUP_TABLE_PROGRAM_ID, SYSTEM_PROGRAM_ID, TOKEN_PROGRAM_ID, rentExemptMinimum } from './known-accounts.js';
import { Runtime } from './runtime.js';
import { TransactionParser, isParseError } from './sim-transaction.js';
import { TxError } from './tx-errors.js';
import {
  addPoolToLookupTable,
  poolLookupTables,
  quoteOnChain,
  solUsdcPool,
  strangerKeypair,
  swapTransaction,
  testChain,
  trader,
  poolMovedSinceGenesis,
} from './testing/chain-fixtures.js';

const U64_MAX = (1n << 64n) - 1n;
const DEX_PROGRAMS = new Set<string>(Object.values(DEFAULT_PROGRAM_IDS));

function entriesOf(chain: SimChain, slots: number): EntryBatch[] {
  const batches: EntryBatch[] = [];
  const off = chain.onEntries((b) => batches.push(b));
  chain.advanceSlot(slots);
  off();
  return batches;
}

function swapsIn(batches: readonly EntryBatch[]): TransactionView[] {
  const out: TransactionView[] = [];
  for (const batch of batches) {
    for (const tx of decodeEntryBatch(batch.entries, batch.slot, parseEntries)) {
      if (tx.programIds().some((p) => DEX_PROGRAMS.has(p))) out.push(tx);
    }
  }
  return out;
}

/** A v0 transaction's full key list (static, then looked-up writable, then readonly), from the chain's tables. */
function resolvedKeys(chain: SimChain, tx: TransactionView): { keys: string[]; writable: Set<string> } {
  const keys = tx.accountKeys();
  const writable = new Set(keys.filter((_, k) => tx.isWritable(k)));
  const lookups = tx.addressTableLookups();
  const tables = lookups.map((l) => decodeLookupTable(l.accountKey, chain.getAccount(l.accountKey)!.data));
  lookups.forEach((l, i) => l.writableIndexes.forEach((x) => (keys.push(tables[i]!.addresses[x]!), writable.add(tables[i]!.addresses[x]!))));
  lookups.forEach((l, i) => l.readonlyIndexes.forEach((x) => keys.push(tables[i]!.addresses[x]!)));
  return { keys, writable };
}

describe('the genesis address lookup tables', () => {
  it('are real lookup table accounts that the scanner decodes, holding every pool and its swap accounts', () => {
    const chain = testChain({ tokens: 6, poolsPerKind: 4 });
    const addresses = chain.lookupTableAddresses();
    const authority = chain.genesis.lookupTables.authority.address;
    expect(addresses.length).toBeGreaterThanOrEqual(2);
    const held = new Map<string, string[]>();
    addresses.forEach((address, i) => {
      const account = chain.getAccount(address)!;
      expect(account.owner).toBe(ADDRESS_LOOKUP_TABLE_PROGRAM_ID);
      expect(account.owner).toBe(ADDRESS_LOOKUP_TABLE_PROGRAM_ID);
      expect(account.lamports).toBe(rentExemptMinimum(account.data.length));
      expect(address).toBe(lookupTableAddress(authority, BigInt(i)));
      const table = decodeLookupTable(address, account.data);
      expect(table).toMatchObject({ deactivationSlot: U64_MAX, lastExtendedSlot: 0n, lastExtendedSlotStartIndex: 0, authority });
      expect(table.addresses.length).toBeLessThanOrEqual(LOOKUP_TABLE_MAX_ADDRESSES);
      expect(readLookupTable(account.data)?.addresses).toEqual(table.addresses);
      held.set(address, table.addresses);
    });
    // The shared table: the token program, the mints and the lending market's flash-loan accounts.
    expect(held.get(addresses[0]!)).toEqual([TOKEN_PROGRAM_ID, ...chain.tokens().map((t) => t.mint), ...lendingLookupAddresses(chain.genesis.lending)]);
    for (const info of chain.genesis.market.pools) {
      const table = chain.lookupTableOf(info.address)!;
      expect(table).not.toBe(addresses[0]);
      for (const a of poolSwapAccounts(info)) expect(held.get(table)).toContain(a);
    }
  });

  it('spread many pools over tables of at most 256 addresses', () => {
    const chain = testChain({ tokens: 8, poolsPerKind: 12 });
    const addresses = chain.lookupTableAddresses();
    expect(addresses.length).toBeGreaterThanOrEqual(3);
    for (const address of addresses) expect(chain.lookupTable(address)!.addresses.length).toBeLessThanOrEqual(256);
    for (const info of chain.genesis.market.pools) {
      const table = chain.lookupTable(chain.lookupTableOf(info.address)!)!;
      for (const a of poolSwapAccounts(info)) expect(table.addresses).toContain(a);
    }
  });

  it('encode the program layout byte for byte', () => {
    const chain = testChain();
    const authority = chain.genesis.lookupTables.authority.address;
    const data = encodeLookupTable({ deactivationSlot: U64_MAX, lastExtendedSlot: 7n, lastExtendedSlotStartIndex: 3, authority, addresses: [TOKEN_PROGRAM_ID] });
    expect(data).toHaveLength(56 + 32);
    const view = new DataView(data.buffer);
    expect(view.getUint32(0, true)).toBe(1);
    expect(view.getBigUint64(4, true)).toBe(U64_MAX);
    expect(view.getBigUint64(12, true)).toBe(7n);
    expect([data[20], data[21], data[54], data[55]]).toEqual([3, 1, 0, 0]);
    const none = encodeLookupTable({ deactivationSlot: U64_MAX, lastExtendedSlot: 0n, lastExtendedSlotStartIndex: 0, authority: null, addresses: [] });
    expect(decodeLookupTable('t', none).authority).toBeNull();
  });
});

describe('swaps through the lookup tables', () => {
  it('at lookup-swap-share 1: every swap is v0, the pool and its accounts only in the tables, and the pool is written', () => {
    const chain = testChain({ txRate: 1000, poolShare: 0.5, lookupSwapShare: 1, tokens: 4, poolsPerKind: 2 });
    const swaps = swapsIn(entriesOf(chain, 3));
    expect(swaps.length).toBeGreaterThan(300);
    const pools = new Map(chain.genesis.market.pools.map((p) => [p.address, p]));
    let v2 = 0;
    for (const tx of swaps) {
      expect(tx.version).toBe(0);
      const lookups = tx.addressTableLookups();
      expect(lookups.map((l) => l.accountKey)).toEqual(expect.arrayContaining([chain.lookupTableAddresses()[0]!]));
      const staticKeys = tx.accountKeys();
      // Static: the trader, its two token accounts, and the invoked programs.
      expect(staticKeys).toHaveLength(5);
      const { keys, writable } = resolvedKeys(chain, tx);
      const swap = tx.instructions().find((ix) => DEX_PROGRAMS.has(staticKeys[ix.programIdIndex]!))!;
      const pool = keys[swap.accounts[1]!]!;
      const info = pools.get(pool)!;
      expect(info).toBeDefined();
      for (const a of poolSwapAccounts(info)) expect(staticKeys).not.toContain(a);
      expect(staticKeys).not.toContain(TOKEN_PROGRAM_ID);
      for (const a of [pool, info.vaultA, info.vaultB]) expect(writable.has(a)).toBe(true);
      // swap (tag 9) passes the SPL Token program; swap_v2 (the TOLL pools) each mint's program.
      if (info.tokenA.programId === undefined && info.tokenB.programId === undefined) expect(keys[swap.accounts[6]!]).toBe(TOKEN_PROGRAM_ID);
      else {
        expect(keys[swap.accounts[6]!]).toBe(info.tokenA.programId ?? TOKEN_PROGRAM_ID);
        expect(keys[swap.accounts[7]!]).toBe(info.tokenB.programId ?? TOKEN_PROGRAM_ID);
        v2++;
      }
      expect(writable.has(TOKEN_PROGRAM_ID)).toBe(false);
    }
    expect(v2).toBeGreaterThan(0);
    expect(chain.flowCounts().lookupSwaps).toBe(chain.flowCounts().swaps);
  });

  it('at lookup-swap-share 0: every swap is legacy with the pool a static key', () => {
    const chain = testChain({ txRate: 500, poolShare: 0.5, lookupSwapShare: 0, tokens: 4, poolsPerKind: 2 });
    const swaps = swapsIn(entriesOf(chain, 2));
    expect(swaps.length).toBeGreaterThan(100);
    const pools = new Set(chain.genesis.market.pools.map((p) => p.address));
    for (const tx of swaps) {
      expect(tx.version).toBe('legacy');
      expect(tx.accountKeys().some((k) => pools.has(k))).toBe(true);
    }
    expect(chain.flowCounts().lookupSwaps).toBe(0);
  });

  it('changes every account exactly as the same swaps sent legacy do', () => {
    const settings = { seed: 21, txRate: 1000, poolShare: 0.5, tokens: 4, poolsPerKind: 2 };
    const viaTables = testChain({ ...settings, lookupSwapShare: 1 });
    const legacy = testChain({ ...settings, lookupSwapShare: 0 });
    viaTables.advanceSlot(6);
    legacy.advanceSlot(6);
    expect(viaTables.stats()).toMatchObject({ transactions: legacy.stats().transactions, failedTransactions: legacy.stats().failedTransactions });
    let changedPools = 0;
    for (const address of viaTables.genesis.accounts.keys()) {
      const x = viaTables.getAccount(address)!;
      const y = legacy.getAccount(address)!;
      expect(x.lamports).toBe(y.lamports);
      expect(Buffer.from(x.data).equals(Buffer.from(y.data))).toBe(true);
      const info = viaTables.poolInfo(address);
      if (info !== undefined && poolMovedSinceGenesis(viaTables, info)) changedPools++;
    }
    expect(changedPools).toBe(viaTables.genesis.market.pools.length);
  });

  it('sends about lookup-swap-share of the swaps through the tables, the same for a seed', () => {
    const settings = { seed: 4, txRate: 2000, poolShare: 0.5, lookupSwapShare: 0.3, tokens: 4, poolsPerKind: 2 };
    const a = testChain(settings);
    const b = testChain(settings);
    const ea = entriesOf(a, 3);
    const eb = entriesOf(b, 3);
    expect(Buffer.concat(eb.map((x) => x.entries)).equals(Buffer.concat(ea.map((x) => x.entries)))).toBe(true);
    const swaps = swapsIn(ea);
    const v0 = swaps.filter((tx) => tx.version === 0).length;
    expect(v0).toBe(a.flowCounts().lookupSwaps);
    expect(v0 / swaps.length).toBeGreaterThan(0.22);
    expect(v0 / swaps.length).toBeLessThan(0.38);
  });

  it.each(DEX_KINDS)('executes a v0 swap sent to a %s pool as quoted', (dex) => {
    const chain = testChain();
    const info = solUsdcPool(chain, dex);
    const quote = quoteOnChain(chain, info, true, true, 10_000_000n);
    if (!quote.ok) throw new Error(quote.message);
    const bytes = swapTransaction(chain, trader(chain), info, { aToB: true, exactIn: true, amount: 10_000_000n, threshold: quote.amountOut, lookupTables: poolLookupTables(chain, info.address) });
    expect(bytes[1 + 64]).toBe(0x80);
    const vaults = [info.vaultA, info.vaultB].map((v) => chain.getTokenBalance(v)!.amount);
    const signature = chain.sendTransaction(bytes);
    chain.advanceSlot();
    expect(chain.signatureStatus(signature)).toMatchObject({ err: null });
    expect(chain.getTokenBalance(info.vaultA)!.amount - vaults[0]!).toBe(quote.amountIn);
    expect(vaults[1]! - chain.getTokenBalance(info.vaultB)!.amount).toBe(quote.amountOut);
    expect(poolMovedSinceGenesis(chain, info)).toBe(true);
  });
});

describe('extending a lookup table', () => {
  it('shows the longer table at once, and swaps load the added pool through the new indexes from the next slot', () => {
    const chain = testChain({ tokens: 4, poolsPerKind: 2 });
    const shared = chain.lookupTableAddresses()[0]!;
    chain.advanceSlot(2);
    const info = solUsdcPool(chain, Dex.Clmm);
    const before = chain.lookupTable(shared)!;
    const notified: bigint[] = [];
    chain.onAccount(shared, (_record, slot) => notified.push(slot));

    const done = addPoolToLookupTable(chain, info.address);
    expect(done).toEqual({ table: shared, slot: 2n, startIndex: before.addresses.length, length: before.addresses.length + poolSwapAccounts(info).length });
    expect(notified).toEqual([2n]);
    const table = decodeLookupTable(shared, chain.getAccount(shared)!.data);
    expect(table.addresses).toEqual([...before.addresses, ...poolSwapAccounts(info)]);
    expect(table).toMatchObject({ lastExtendedSlot: 2n, lastExtendedSlotStartIndex: before.addresses.length });
    expect(chain.getAccount(shared)!.lamports).toBe(rentExemptMinimum(56 + 32 * table.addresses.length));
    // Older commitments still see the table as it was.
    expect(chain.lookupTable(shared, 'confirmed')!.addresses).toHaveLength(before.addresses.length);

    const quote = quoteOnChain(chain, info, false, true, 1_000_000n);
    if (!quote.ok) throw new Error(quote.message);
    const bytes = swapTransaction(chain, trader(chain), info, { aToB: false, exactIn: true, amount: 1_000_000n, threshold: quote.amountOut, lookupTables: [shared] });
    const signature = chain.sendTransaction(bytes);
    const batches = entriesOf(chain, 1);
    expect(chain.signatureStatus(signature)).toMatchObject({ err: null });
    const [tx] = swapsIn(batches);
    const lookups = tx!.addressTableLookups();
    expect(lookups.map((l) => l.accountKey)).toEqual([shared]);
    // The token program (index 0) and the AmmConfig are read-only; pool, vaults and arrays writable.
    expect([...lookups[0]!.readonlyIndexes].sort((x, y) => x - y)).toEqual([0, done.startIndex + 3]);
    expect(Math.min(...lookups[0]!.writableIndexes)).toBe(done.startIndex);
    expect(resolvedKeys(chain, tx!).writable.has(info.address)).toBe(true);
    expect(tx!.accountKeys()).not.toContain(info.address);
  });

  it('extends twice in one slot from the first start index, and refuses what the program refuses', () => {
    const chain = testChain();
    chain.advanceSlot();
    const shared = chain.lookupTableAddresses()[0]!;
    const length = chain.lookupTable(shared)!.addresses.length;
    const wallets = chain.genesis.actors.wallets;
    chain.extendLookupTable(shared, [wallets[0]!]);
    const second = chain.extendLookupTable(shared, [wallets[1]!, wallets[2]!]);
    expect(second).toEqual({ table: shared, slot: 1n, startIndex: length + 1, length: length + 3 });
    expect(chain.lookupTable(shared)).toMatchObject({ lastExtendedSlot: 1n, lastExtendedSlotStartIndex: length });
    chain.advanceSlot();
    expect(chain.extendLookupTable(shared, [wallets[3]!]).slot).toBe(2n);
    expect(chain.lookupTable(shared)).toMatchObject({ lastExtendedSlot: 2n, lastExtendedSlotStartIndex: length + 3 });

    const kind = (fn: () => unknown): string => {
      try {
        fn();
      } catch (err) {
        if (err instanceof LookupTableExtendError) return err.kind;
        throw err;
      }
      return 'none';
    };
    expect(kind(() => chain.extendLookupTable(wallets[9]!, [wallets[0]!]))).toBe('invalid');
    expect(kind(() => chain.extendLookupTable(strangerKeypair().address, [wallets[0]!]))).toBe('missing');
    expect(kind(() => chain.extendLookupTable(shared, []))).toBe('addresses');
    expect(kind(() => chain.extendLookupTable(shared, ['not base58 at all!']))).toBe('addresses');
    expect(kind(() => chain.extendLookupTable(shared, new Array<string>(256).fill(wallets[0]!)))).toBe('full');
    expect(kind(() => chain.addPoolToLookupTable(wallets[0]!, shared))).toBe('addresses');
  });

  it('makes addresses added in a slot unusable in that slot, as the runtime does on chain', () => {
    const chain = testChain();
    const payer = trader(chain);
    const table = strangerKeypair(7).address;
    const to = chain.genesis.actors.wallets[0]!;
    const reader = (slot: bigint, startIndex: number) => ({
      get: (address: string) =>
        address === table
          ? lookupTableRecord({ deactivationSlot: U64_MAX, lastExtendedSlot: slot, lastExtendedSlotStartIndex: startIndex, authority: null, addresses: [SYSTEM_PROGRAM_ID, to] })
          : chain.getAccount(address),
    });
    const bytes = buildTransaction({
      payer: payer.keypair,
      instructions: [systemTransfer(payer.keypair.address, to, 1000n)],
      recentBlockhash: chain.latestBlockhash().blockhash,
      lookupTables: [{ address: table, addresses: [SYSTEM_PROGRAM_ID, to] }],
    });
    const tx = new TransactionParser(new KeyCache()).parse(bytes);
    if (isParseError(tx)) throw new Error(tx.message);
    expect(tx.lookups[0]!.writableIndexes).toEqual(Uint8Array.of(1));
    const runtime = new Runtime(new Map([[SYSTEM_PROGRAM_ID, systemProgram]]));
    const blockTime = 0n;
    // Added in slot 5 at index 1: not usable in slot 5, usable in 6; older addresses always usable.
    expect(runtime.execute(tx, reader(5n, 1), { blockTime, slot: 5n })).toEqual({ landed: false, err: TxError.InvalidAddressLookupTableIndex });
    expect(runtime.execute(tx, reader(5n, 1), { blockTime, slot: 6n })).toMatchObject({ landed: true, err: null });
    expect(runtime.execute(tx, reader(5n, 2), { blockTime, slot: 5n })).toMatchObject({ landed: true, err: null });
  });
});
