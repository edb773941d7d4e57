import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { parseEntries } from '../../chain/native-parser.js';
import { decodeEntryBatch, type TransactionView } from '../../chain/transaction-view.js';
import { loadConfig } from '../../config/index.js';
import { Dex } from '../../dex/index.js';
import { createLogger } from '../../obs/logger.js';
import { AccountFetcher, RpcClient } from '../../rpc/index.js';
import { LookupTableCache } from '../../scanner/lookup-tables.js';
import { decodeLookupTable } from '../../chain/index.js';
import { poolSwapAccounts } from '../address-lookup-tables.js';
import type { EntryBatch } from '../chain-backend.js';
import { simSchema } from '../sim-config.js';
import { createSimulator, type SimEndpoints, type Simulator } from '../simulator.js';
import { poolLookupTables, quoteOnChain, solUsdcPool, swapTransaction, trader } from '../testing/chain-fixtures.js';

/**
 * The lookup tables end to end, as the scanner meets them: served over the simulator's JSON-RPC,
 * read by the scanner's LookupTableCache, extended through the admin API, and the cache's
 * "index past the known length → refetch" path taken by a swap that uses the new indexes.
 */

let sim: Simulator;
let endpoints: SimEndpoints;

beforeAll(async () => {
  const config = loadConfig(simSchema, {
    env: {},
    flags: { seed: '8', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', 'tx-rate': '0', tokens: '2', 'pools-per-kind': '2', 'lookup-swap-share': '1' },
  }).values;
  sim = createSimulator(config, { manual: true, logger: createLogger({ name: 'sim-test', level: 'silent' }) });
  endpoints = await sim.start();
});

afterAll(async () => {
  await sim.close();
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${endpoints.http}${path}`, {
    method,
    ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Lands `bytes` in the next slot and returns the transaction as the stream carried it. */
function land(bytes: Uint8Array): TransactionView {
  const batches: EntryBatch[] = [];
  const off = sim.chain.onEntries((b) => batches.push(b));
  const signature = sim.chain.sendTransaction(bytes);
  sim.chain.advanceSlot();
  off();
  expect(sim.chain.signatureStatus(signature)).toMatchObject({ err: null });
  const txs = batches.flatMap((b) => decodeEntryBatch(b.entries, b.slot, parseEntries));
  const tx = txs.find((t) => t.signature() === signature);
  if (tx === undefined) throw new Error('the transaction is not in the stream');
  return tx;
}

function swapOn(pool: Dex, tables: string[]): Uint8Array {
  const info = solUsdcPool(sim.chain, pool);
  const quote = quoteOnChain(sim.chain, info, true, true, 2_000_000n);
  if (!quote.ok) throw new Error(quote.message);
  return swapTransaction(sim.chain, trader(sim.chain), info, { aToB: true, exactIn: true, amount: 2_000_000n, threshold: quote.amountOut, lookupTables: tables });
}

describe('the lookup table admin and the scanner', () => {
  it('takes lookup-swap-share from the configuration', () => {
    expect(sim.chain.settings.lookupSwapShare).toBe(1);
  });

  it('lists the tables', async () => {
    const { status, body } = await call('GET', '/admin/lookup-tables');
    expect(status).toBe(200);
    const tables = body['tables'] as { address: string; addresses: string[]; lastExtendedSlot: string }[];
    expect(tables.map((t) => t.address)).toEqual(sim.chain.lookupTableAddresses());
    for (const t of tables) expect(t.addresses).toEqual(sim.chain.lookupTable(t.address)!.addresses);
    expect(tables[0]!.lastExtendedSlot).toBe('0');
  });

  it('serves tables the scanner reads, and an extension makes the scanner refetch a table it has cached', async () => {
    const rpc = new RpcClient({ endpoints: [endpoints.rpc] });
    const cache = new LookupTableCache(new AccountFetcher(rpc));
    const pool = solUsdcPool(sim.chain, Dex.Whirlpool);
    const shared = sim.chain.lookupTableAddresses()[0]!;

    // A swap through the pool's own table and the shared one: the scanner loads both.
    const first = land(swapOn(Dex.Whirlpool, poolLookupTables(sim.chain, pool.address)));
    expect(first.accountKeys()).not.toContain(pool.address);
    const loaded = await cache.resolve(first.addressTableLookups());
    expect(loaded.writable).toContain(pool.address);
    expect(cache.stats).toMatchObject({ fetches: 2, refreshes: 0 });
    const before = cache.get(shared)!.addresses.length;

    // The router adds the pool to the shared table.
    const extended = await call('POST', `/admin/lookup-tables/${shared}/extend`, { pool: pool.address });
    expect(extended).toEqual({ status: 200, body: { table: shared, slot: String(sim.chain.slot()), startIndex: before, length: before + poolSwapAccounts(pool).length } });
    const { accounts } = await rpc.getMultipleAccounts([shared]);
    const table = decodeLookupTable(shared, accounts[0]!.data);
    expect(table.addresses.slice(before)).toEqual(poolSwapAccounts(pool));
    expect(table).toMatchObject({ lastExtendedSlot: sim.chain.slot(), lastExtendedSlotStartIndex: before });

    // A swap loading the pool from the new indexes: past what the scanner knows, so it refetches.
    const second = land(swapOn(Dex.Whirlpool, [shared]));
    expect(second.addressTableLookups().map((l) => l.accountKey)).toEqual([shared]);
    expect(Math.max(...second.addressTableLookups()[0]!.writableIndexes)).toBeGreaterThanOrEqual(before);
    expect(cache.tryResolve(second.addressTableLookups())).toBeNull();
    const resolved = await cache.resolve(second.addressTableLookups());
    expect(resolved.writable[0]).toBe(pool.address);
    expect(cache.stats).toMatchObject({ fetches: 3, refreshes: 1, failures: 0 });
    expect(cache.get(shared)!.addresses).toHaveLength(table.addresses.length);
  });

  it('extends with plain addresses and refuses bad requests', async () => {
    const shared = sim.chain.lookupTableAddresses()[0]!;
    const wallet = sim.chain.genesis.actors.wallets[0]!;
    const length = sim.chain.lookupTable(shared)!.addresses.length;
    expect(await call('POST', `/admin/lookup-tables/${shared}/extend`, { addresses: [wallet] })).toMatchObject({ status: 200, body: { length: length + 1 } });
    expect((await call('POST', `/admin/lookup-tables/${wallet}/extend`, { addresses: [wallet] })).status).toBe(404);
    for (const body of [{}, { addresses: [wallet], pool: wallet }, { addresses: 'x' }, { addresses: ['not base58!'] }, { pool: wallet }, { other: 1 }, [1], { addresses: new Array<string>(300).fill(wallet) }]) {
      const res = await call('POST', `/admin/lookup-tables/${shared}/extend`, body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: { code: 'TP_ERR_BAD_PARAMETER' } });
    }
    expect(sim.chain.lookupTable(shared)!.addresses).toHaveLength(length + 1);
  });
});
