import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PoolCache } from '../cache/index.js';
import type { SimEndpoints, Simulator } from '../sim/simulator.js';
import { PoolContextReader } from './pool-context-reader.js';
import { CountingLoader, manualSimulator } from './testing.js';

let sim: Simulator;
let endpoints: SimEndpoints;

beforeAll(async () => {
  sim = manualSimulator(17);
  endpoints = await sim.start();
  sim.chain.advanceSlot(1);
});

afterAll(async () => {
  await sim.close();
});

/** An event-built entry: the pool account and reserves, no context (what the bus carries). */
function storeWithoutContext(cache: PoolCache, address: string, slot: bigint): void {
  const view = sim.chain.pool(address)!;
  cache.upsert({ address, dex: view.dex, tokenA: view.pool.tokenA, tokenB: view.pool.tokenB, reserveA: 1n, reserveB: 1n, slot, pool: view.pool });
}

function contextPools(): string[] {
  return sim.chain
    .pools()
    .filter((p) => PoolContextReader.needsContext(p.dex))
    .map((p) => p.address);
}

async function chainSlot(loader: CountingLoader, address: string): Promise<bigint> {
  const [r] = await loader.load([address]);
  if (r === undefined || !r.ok) throw new Error('load failed');
  return r.value.slot;
}

describe('PoolContextReader', () => {
  it('attaches the context read at the same slot, keeping the event state', async () => {
    const loader = new CountingLoader(endpoints.rpc);
    const cache = new PoolCache();
    const reader = new PoolContextReader({ loader, cache });
    const address = contextPools()[0]!;
    const slot = await chainSlot(loader, address);
    storeWithoutContext(cache, address, slot);
    reader.request(address);
    await reader.idle();
    expect(cache.get(address)?.context).toBeDefined();
    expect(cache.get(address)?.reserveA).toBe(1n);
    expect(reader.stats).toMatchObject({ contexts: 1, replaced: 0 });
  });

  it('replaces the entry with the whole read when the read is newer, and drops an older read', async () => {
    const loader = new CountingLoader(endpoints.rpc);
    const cache = new PoolCache();
    const reader = new PoolContextReader({ loader, cache });
    const [older, newer] = contextPools();
    const slot = await chainSlot(loader, older!);
    storeWithoutContext(cache, newer!, slot - 1n);
    storeWithoutContext(cache, older!, slot + 1000n);
    reader.request(newer!);
    reader.request(older!);
    await reader.idle();
    expect(cache.get(newer!)?.slot).toBe(slot);
    expect(cache.get(newer!)?.context).toBeDefined();
    expect(cache.get(older!)?.context).toBeUndefined();
    expect(reader.stats).toMatchObject({ replaced: 1, older: 1 });
  });

  it('coalesces many events into one read per pool at a time, and skips AMM pools', async () => {
    const loader = new CountingLoader(endpoints.rpc);
    const cache = new PoolCache();
    const reader = new PoolContextReader({ loader, cache });
    const pools = contextPools();
    const slot = await chainSlot(loader, pools[0]!);
    loader.calls = 0;
    for (const p of pools) storeWithoutContext(cache, p, slot);
    const amm = sim.chain.pools().find((p) => p.dex === 'dexa_amm')!;
    storeWithoutContext(cache, amm.address, slot);
    for (let i = 0; i < 5; i++) for (const p of [...pools, amm.address]) reader.request(p);
    await reader.idle();
    // One batched read of every pool; requests that came while nothing was in flight were merged.
    expect(loader.calls).toBe(1);
    for (const p of pools) expect(cache.get(p)?.context).toBeDefined();
    expect(cache.get(amm.address)?.context).toBeUndefined();
  });
});
