import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DEFAULT_ARRAYS_EACH_SIDE, DEX_KINDS, createDecoderRegistry, quoteSwap } from '../dex/index.js';
import { EpochClock, RpcPoolLoader, type LoadedPool } from '../pools/index.js';
import { manualSimulator } from '../quote/testing.js';
import { AccountFetcher, RpcClient } from '../rpc/index.js';
import { openPriceGap, type Simulator } from '../sim/index.js';
import { EventStateWriter, type EventState } from './event-state.js';
import { EventStateReplay } from './event-state-replay.js';
import { decodeMarketEvent, encodeMarketEvent, type MarketEvent } from '../messages/market-event.js';

let sim: Simulator;
let rpc: RpcClient;
let loader: RpcPoolLoader;

beforeAll(async () => {
  sim = manualSimulator(41);
  const endpoints = await sim.start();
  rpc = new RpcClient({ endpoints: [endpoints.rpc] });
  // As the market scanner with market.eventState on: mints read, accounts kept.
  loader = new RpcPoolLoader({ fetcher: new AccountFetcher(rpc), registry: createDecoderRegistry(), readMints: true, epochs: new EpochClock({ getEpochInfo: () => rpc.getEpochInfo() }), keepAccounts: true });
});

afterAll(async () => {
  await rpc?.close();
  await sim?.close();
});

async function load(address: string): Promise<LoadedPool> {
  const [r] = await loader.load([address]);
  if (!r!.ok) throw new Error(r!.error.message);
  return r!.value;
}

/** A pool_update carrying `state`, through the wire form (schema checked both ways). */
function eventOf(loaded: LoadedPool, state: EventState | undefined): MarketEvent {
  const data: Record<string, unknown> = { signature: '', reserveA: '0', reserveB: '0', price: 1, fee: 0 };
  if (state !== undefined) data['state'] = state;
  const event: MarketEvent = { version: 1, id: `${loaded.address}:${loaded.slot}:-:pool_update`, type: 'pool_update', protocol: loaded.dex, poolAddress: loaded.address, tokenA: loaded.pool.tokenA, tokenB: loaded.pool.tokenB, timestamp: 1, slot: loaded.slot.toString(), data };
  return decodeMarketEvent(encodeMarketEvent(event));
}

function sameQuotes(a: LoadedPool, b: LoadedPool): void {
  for (const aToB of [true, false]) {
    for (const amount of [1_000n, 1_000_000n, 1_000_000_000n]) {
      const qa = quoteSwap(a.pool, { aToB, mode: 'ExactIn', amount }, a.context, a.transferFees);
      const qb = quoteSwap(b.pool, { aToB, mode: 'ExactIn', amount }, b.context, b.transferFees);
      expect(qb).toEqual(qa);
    }
  }
}

describe('event state: the accounts of a pool state, carried in its pool_update and loaded back', () => {
  it.each(DEX_KINDS.map((dex) => ({ dex })))('gives back the same $dex pool, context, reserves, mints and quotes with no RPC', async ({ dex }) => {
    const view = sim.chain.pools().find((p) => p.dex === dex)!;
    const loaded = await load(view.address);
    const writer = new EventStateWriter({ arraysEachSide: DEFAULT_ARRAYS_EACH_SIDE });
    const state = writer.stateOf(loaded, 1_000)!;
    expect(state.full).toBe(true);
    const bytes = encodeMarketEvent(eventOf(loaded, state)).length;
    expect(bytes).toBeLessThan(1024 * 1024); // the streams' max message size
    const replay = new EventStateReplay();
    expect(replay.apply(eventOf(loaded, state))).toBe('applied');
    const back = await replay.loaded(view.address);
    if (typeof back === 'string') throw new Error(back);
    expect(back.slot).toBe(loaded.slot);
    expect(back.pool).toEqual(loaded.pool);
    expect(back.context).toEqual(loaded.context);
    expect(back.reserves).toEqual(loaded.reserves);
    expect(back.mints).toEqual(loaded.mints);
    expect(back.transferFees).toEqual(loaded.transferFees);
    sameQuotes(loaded, back);
  });

  it('sends only the changed accounts after a swap, and the replay follows the delta', async () => {
    const view = sim.chain.pools().find((p) => p.dex === 'dexa_clmm' && p.transferFees === undefined)!;
    const writer = new EventStateWriter({ arraysEachSide: DEFAULT_ARRAYS_EACH_SIDE, snapshotIntervalMs: 60_000 });
    const first = await load(view.address);
    const full = writer.stateOf(first, 1_000)!;
    openPriceGap(sim.chain, { pool: view.address, gapBps: 50 });
    sim.chain.advanceSlot();
    const second = await load(view.address);
    const delta = writer.stateOf(second, 2_000)!;
    expect(delta.full).toBe(false);
    expect(delta.previousSlot).toBe(first.slot.toString());
    expect(delta.accounts.length).toBeLessThan(full.accounts.length);
    expect(delta.accounts.map((a) => a.address)).toContain(view.address);
    expect(JSON.stringify(delta).length).toBeLessThan(JSON.stringify(full).length / 4);

    const replay = new EventStateReplay();
    expect(replay.apply(eventOf(first, full))).toBe('applied');
    expect(replay.apply(eventOf(second, delta))).toBe('applied');
    const back = await replay.loaded(view.address);
    if (typeof back === 'string') throw new Error(back);
    expect(back.slot).toBe(second.slot);
    expect(back.pool).toEqual(second.pool);
    sameQuotes(second, back);

    // A replay that starts at the delta has no base; one that missed a state sees the gap.
    const late = new EventStateReplay();
    expect(late.apply(eventOf(second, delta))).toBe('no_base');
    expect(typeof (await late.loaded(view.address))).toBe('string');
    sim.chain.advanceSlot();
    openPriceGap(sim.chain, { pool: view.address, gapBps: 50, direction: 'down' });
    sim.chain.advanceSlot();
    const third = await load(view.address);
    const next = writer.stateOf(third, 3_000)!;
    const missed = new EventStateReplay();
    expect(missed.apply(eventOf(first, full))).toBe('applied');
    expect(missed.apply(eventOf(third, next))).toBe('gap');
    expect(missed.has(view.address)).toBe(false);

    // Past the snapshot interval, or after forget(), the state is full again.
    expect(writer.stateOf({ ...third, slot: third.slot + 1n }, 62_000)!.full).toBe(true);
    writer.forget(view.address);
    expect(writer.stateOf({ ...third, slot: third.slot + 2n }, 62_001)!.full).toBe(true);
  });

  it('calls malformed a state with an account read after its event, or without the pool account', async () => {
    const view = sim.chain.pools()[0]!;
    const loaded = await load(view.address);
    const state = new EventStateWriter({ arraysEachSide: DEFAULT_ARRAYS_EACH_SIDE }).stateOf(loaded, 1_000)!;
    const later = { ...state, accounts: state.accounts.map((a) => ('missing' in a ? a : { ...a, slot: (loaded.slot + 1n).toString() })) };
    const replay = new EventStateReplay();
    expect(replay.apply(eventOf(loaded, later))).toBe('malformed');
    const withoutPool = { ...state, accounts: state.accounts.filter((a) => a.address !== view.address) };
    expect(replay.apply(eventOf(loaded, withoutPool))).toBe('malformed');
    expect(await replay.loaded(view.address)).toMatch(/^missing/);
    expect(replay.apply(eventOf(loaded, state))).toBe('applied');
  });

  it('says no_state for an event without state, and gives no pool from it', async () => {
    const view = sim.chain.pools()[0]!;
    const loaded = await load(view.address);
    const replay = new EventStateReplay();
    expect(replay.apply(eventOf(loaded, undefined))).toBe('no_state');
    expect(await replay.loaded(view.address)).toMatch(/^missing/);
  });
});
