import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PoolCache } from '../cache/index.js';
import { createDecoderRegistry } from '../dex/index.js';
import { createLogger } from '../obs/logger.js';
import { RpcPoolLoader } from '../pools/index.js';
import { AccountFetcher, RpcClient } from '../rpc/index.js';
import type { SimEndpoints, Simulator } from '../sim/simulator.js';
import { swapTransaction, trader } from '../sim/testing/chain-fixtures.js';
import { PoolRefresher } from './pool-refresher.js';
import { manualSimulator } from './testing.js';

let sim: Simulator;
let endpoints: SimEndpoints;
let rpc: RpcClient;
const logger = createLogger({ name: 'refresher-test', level: 'silent' });

beforeAll(async () => {
  sim = manualSimulator(13);
  endpoints = await sim.start();
  sim.chain.advanceSlot(1);
  rpc = new RpcClient({ endpoints: [endpoints.rpc] });
});

afterAll(async () => {
  await rpc.close();
  await sim.close();
});

function refresher(cache: PoolCache, pools: () => readonly string[]): PoolRefresher {
  const loader = new RpcPoolLoader({ fetcher: new AccountFetcher(rpc), registry: createDecoderRegistry() });
  return new PoolRefresher({ loader, cache, pools, intervalMs: 3_600_000, logger });
}

describe('PoolRefresher (RefreshSeconds)', () => {
  it('fills an empty cache with every pool at start, at the chain\'s slot and state', async () => {
    const cache = new PoolCache();
    const pools = sim.chain.pools().map((p) => p.address);
    const r = refresher(cache, () => pools);
    const round = await r.start();
    await r.close();
    expect(round).toEqual({ pools: pools.length, stored: pools.length, failed: 0 });
    for (const view of sim.chain.pools()) {
      const entry = cache.get(view.address)!;
      expect(entry.slot).toBe(sim.chain.slot());
      expect(entry.pool).toEqual(view.pool);
    }
  });

  it('stores a newer state after the chain moves, under the slot rule', async () => {
    const cache = new PoolCache();
    const view = sim.chain.pools()[0]!;
    const r = refresher(cache, () => [view.address]);
    await r.refresh();
    const before = cache.get(view.address)!;
    const info = sim.chain.poolInfo(view.address)!;
    sim.chain.sendTransaction(swapTransaction(sim.chain, trader(sim.chain), info, { aToB: true, exactIn: true, amount: 1_000_000n, threshold: 0n }));
    sim.chain.advanceSlot(1);
    await r.refresh();
    const after = cache.get(view.address)!;
    expect(after.slot).toBeGreaterThan(before.slot);
    expect(after.pool).toEqual(sim.chain.pool(view.address)!.pool);
    // Same slot again: ignored, as the slot rule says.
    await r.refresh();
    expect(cache.stats().ignoredEqualSlot).toBeGreaterThan(0);
    await r.close();
  });

  it('counts the pools it cannot read and keeps the rest', async () => {
    const cache = new PoolCache();
    const good = sim.chain.pools()[1]!.address;
    const missing = '11111111111111111111111111111112';
    const r = refresher(cache, () => [good, missing]);
    expect(await r.refresh()).toEqual({ pools: 2, stored: 1, failed: 1 });
    sim.faults.setRpcFault('getMultipleAccounts', { errorRate: 1 });
    try {
      expect(await r.refresh()).toMatchObject({ stored: 0, failed: 2 });
    } finally {
      sim.faults.clear();
    }
    expect(cache.get(good)).toBeDefined();
    await r.close();
  });
});
