import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

import { Ajv } from 'ajv';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { SwapMode, quoteSwap, type DecodedPool } from '../dex/index.js';
import { binArrayIndexOf } from '../dex/dlmm/bin-array.js';
import { writeBinAmounts } from '../sim/pool-state-writes.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { swapTransaction, trader } from '../sim/testing/chain-fixtures.js';
import { PARSE_WORKER, eventually, startEngineOnGeyser, type EngineUnderSim } from './testing.js';

/**
 * scanner.stateSource geyser: the one-process engine takes pool state from the simulator's Geyser
 * stream. The block-entry stream points at a closed port, so a quote that moves after a swap can
 * only have come through the account stream; faults of the Geyser server (disconnect, skipped
 * slots) must not stop the state from converging on the chain's.
 */

const built = existsSync(PARSE_WORKER);
const validateEvent = new Ajv({ allErrors: true, strict: true }).compile(JSON.parse(readFileSync(resolve(import.meta.dirname, '../../schemas/pool-state-update-event.schema.json'), 'utf8')) as object);
const ONE_SOL = 1_000_000_000n;

interface QuoteBody {
  outputAmount: string;
  pool: string;
  source: string;
}

async function quote(e: EngineUnderSim): Promise<QuoteBody> {
  const res = await fetch(`${e.endpoints.quote}/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=${ONE_SOL}`);
  return (await res.json()) as QuoteBody;
}

/** The chain's own quote of 1 SOL → USDC on `pool`. */
function chainQuote(e: EngineUnderSim, pool: string): string {
  const view = e.sim.chain.pool(pool)!;
  const expected = quoteSwap(view.pool, { aToB: view.pool.tokenA === WSOL_MINT, mode: SwapMode.ExactIn, amount: ONE_SOL }, view.ctx);
  if (!expected.ok) throw new Error(`the chain refuses the quote: ${expected.reason}`);
  return expected.amountOut.toString();
}

/** USDC in on `pool` (SOL dearer there, so it stays the best pool for SOL → USDC); closes the slot. */
function swapUsdcIn(e: EngineUnderSim, pool: string, amount: bigint): void {
  const chain = e.sim.chain;
  const info = chain.poolInfo(pool)!;
  chain.sendTransaction(swapTransaction(chain, trader(chain), info, { aToB: info.tokenA.mint === USDC_MINT, exactIn: true, amount, threshold: 0n }));
  chain.advanceSlot(1);
}

/** The engine's cached quote of 1 SOL → USDC on `pool` (its decoded pool and swap context). */
function cachedQuote(e: EngineUnderSim, pool: string): string | undefined {
  const entry = e.engine.cache.get(pool);
  if (entry?.pool === undefined) return undefined;
  const q = quoteSwap(entry.pool, { aToB: entry.pool.tokenA === WSOL_MINT, mode: SwapMode.ExactIn, amount: ONE_SOL }, entry.context);
  return q.ok ? q.amountOut.toString() : undefined;
}

async function servedMatchesChain(e: EngineUnderSim, pool: string, what: string): Promise<QuoteBody> {
  return eventually(async () => {
    const q = await quote(e);
    return q.pool === pool && q.outputAmount === chainQuote(e, pool) ? q : undefined;
  }, 10_000, what);
}

describe.skipIf(!built)('the engine on the Geyser state source', () => {
  let e: EngineUnderSim;

  beforeAll(async () => {
    e = await startEngineOnGeyser();
  });

  afterAll(async () => {
    await e?.close();
  });

  it('serves the state a swap on the simulator left, through the account stream', async () => {
    const before = await quote(e);
    expect(before.source).toBe('cache');
    const published = e.events.length;
    swapUsdcIn(e, before.pool, 5_000_000_000n);
    const after = await servedMatchesChain(e, before.pool, 'quote on the swapped state');
    expect(BigInt(after.outputAmount)).toBeGreaterThan(BigInt(before.outputAmount));
    expect(e.events.length).toBeGreaterThan(published);
    expect(e.engine.scanner.stats().stream.connected).toBe(true);
  });

  it("serves a swap's state before its slot commits, published under the swap's signature", async () => {
    const before = await quote(e);
    const chain = e.sim.chain;
    const info = chain.poolInfo(before.pool)!;
    const committed = chain.slot();
    const signature = chain.sendTransaction(swapTransaction(chain, trader(chain), info, { aToB: info.tokenA.mint === USDC_MINT, exactIn: true, amount: 4_000_000_000n, threshold: 0n }));
    chain.advancePiece(); // the swap runs in the first piece of the next slot; the slot stays open
    const event = await eventually(() => e.events.find((ev) => ev.transaction.signature === signature), 10_000, "the swap's event");
    expect(chain.slot()).toBe(committed);
    expect(event.pool.address).toBe(before.pool);
    expect(BigInt(event.state.slot)).toBe(committed + 1n);
    expect(BigInt(event.state.writeVersion!)).toBeGreaterThan(0n); // orders it within its slot, on the bus too
    expect(validateEvent(event), JSON.stringify(validateEvent.errors)).toBe(true);
    const moved = await eventually(async () => {
      const q = await quote(e);
      return q.pool === before.pool && BigInt(q.outputAmount) > BigInt(before.outputAmount) ? q : undefined;
    }, 10_000, "the quote on the swap's state");
    chain.advanceSlot(1); // the rest of the slot: nothing else moved the pool
    const after = await servedMatchesChain(e, before.pool, 'quote once the slot committed');
    expect(after.outputAmount).toBe(moved.outputAmount);
    // The swap's writes (pool, vaults, arrays) arrive together and make one refresh: one event.
    expect(e.events.filter((ev) => ev.transaction.signature === signature && ev.pool.address === before.pool)).toHaveLength(1);
  });

  it('moves the quote when a bin array changes without a write of its pool account', async () => {
    const chain = e.sim.chain;
    const view = chain.pools().find((p) => p.dex === 'dexb_dlmm')!;
    const lbPair = view.pool as Extract<DecodedPool, { dex: 'dexb_dlmm' }>;
    const info = chain.poolInfo(view.address)!;
    const index = binArrayIndexOf(lbPair.activeId);
    const array = info.arrays.find((a) => a.key === index)!;
    const record = chain.getAccount(array.address)!;
    const poolBytes = Buffer.from(chain.getAccount(view.address)!.data);
    const cachedBefore = await eventually(() => cachedQuote(e, view.address), 10_000, 'the DLMM pool in the cache');
    // Every pool was read once through the stream's reader: its accounts are in the server's filters.
    chain.advanceSlot(1);
    await eventually(() => (e.events.filter((ev) => ev.pool.address === view.address).length > 0 ? true : undefined), 10_000, 'the DLMM pool read through the stream');
    const followed = e.engine.scanner.geyserStream!.followedAccounts;
    await eventually(() => (e.sim.servers.geyser.stats().filteredAccounts === followed ? true : undefined), 10_000, 'the filters on the server');
    expect(cachedBefore).toBe(chainQuote(e, view.address));
    // The active bin keeps a sliver of the token a SOL sale takes out: the swap must cross bins.
    const data = Uint8Array.from(record.data);
    const at = 56 + (lbPair.activeId - index * 70) * 144;
    const bins = new DataView(data.buffer);
    const [amountX, amountY] = [bins.getBigUint64(at, true), bins.getBigUint64(at + 8, true)];
    const solIsX = lbPair.tokenA === WSOL_MINT;
    writeBinAmounts(data, index, lbPair.activeId, solIsX ? amountX : amountX / 1000n, solIsX ? amountY / 1000n : amountY);
    chain.writeAccount(array.address, { ...record, data });
    chain.advanceSlot(1);
    expect(Buffer.from(chain.getAccount(view.address)!.data).equals(poolBytes)).toBe(true); // the pool account did not move
    const expected = chainQuote(e, view.address);
    expect(expected).not.toBe(cachedBefore);
    await eventually(() => (cachedQuote(e, view.address) === expected ? true : undefined), 10_000, 'the cached quote on the new bins');
  });

  it('converges after the Geyser server drops every stream', async () => {
    const before = await quote(e);
    expect(e.sim.servers.geyser.disconnectAll()).toBeGreaterThan(0);
    swapUsdcIn(e, before.pool, 3_000_000_000n);
    const after = await servedMatchesChain(e, before.pool, 'quote after a reconnect');
    expect(BigInt(after.outputAmount)).toBeGreaterThan(BigInt(before.outputAmount));
  });

  it('converges after slots the stream skipped (gap healed with one RPC read)', async () => {
    const before = await quote(e);
    e.sim.servers.geyser.skipSlots(1);
    swapUsdcIn(e, before.pool, 2_000_000_000n);
    e.sim.chain.advanceSlot(1);
    const after = await servedMatchesChain(e, before.pool, 'quote after a gap');
    expect(BigInt(after.outputAmount)).toBeGreaterThan(BigInt(before.outputAmount));
  });
});
