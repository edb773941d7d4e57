import { existsSync } from 'node:fs';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { SwapMode, quoteSwap } from '../dex/index.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { swapTransaction, trader } from '../sim/testing/chain-fixtures.js';
import { PARSE_WORKER, eventually, startEngineUnderSim, type EngineUnderSim } from './testing.js';

/**
 * scanner.stateSource geyser: the one-process engine takes pool state from the simulator's Geyser
 * stream. The block-entry stream points at a closed port, so a quote that moves after a swap can
 * only have come through the account stream; faults of the Geyser server (disconnect, skipped
 * slots) must not stop the state from converging on the chain's.
 */

const built = existsSync(PARSE_WORKER);
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

async function servedMatchesChain(e: EngineUnderSim, pool: string, what: string): Promise<QuoteBody> {
  return eventually(async () => {
    const q = await quote(e);
    return q.pool === pool && q.outputAmount === chainQuote(e, pool) ? q : undefined;
  }, 10_000, what);
}

describe.skipIf(!built)('the engine on the Geyser state source', () => {
  let e: EngineUnderSim;

  beforeAll(async () => {
    e = await startEngineUnderSim({ engine: { 'state-source': 'geyser', 'blockstream-port': '1' } });
    await eventually(() => (e.engine.scanner.connected ? true : undefined), 10_000, 'Geyser stream connected');
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
