import { existsSync } from 'node:fs';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { USDC_MINT, WSOL_MINT } from '../chain/index.js';
import { Dex } from '../dex/index.js';
import { PARSE_WORKER, eventually, startEngineUnderSim, type EngineUnderSim } from './testing.js';

/**
 * Issue 28 item 3: with `pools.discoverMints` the engine keeps its monitored pools current by
 * itself: a pool created on chain for the mints joins (up to `pools.maxCount`), a closed one
 * leaves, each change logged and counted, without a restart or a POST /config/pools.
 */
const built = existsSync(PARSE_WORKER);

describe.skipIf(!built)('pool discovery keeps the monitored set current', () => {
  let e: EngineUnderSim;
  let start: readonly string[];
  beforeAll(async () => {
    e = await startEngineUnderSim({
      // Start from two SOL/USDC pools; discovery adds the others of the pair, up to 6 pools in all.
      pools: (sim) => sim.chain.poolsForPair(WSOL_MINT, USDC_MINT).slice(0, 2).map((p) => p.address),
      engine: { 'discover-mints': `${WSOL_MINT},${USDC_MINT}`, 'discover-interval': '1000', 'pools-max-count': '6' },
    });
    start = e.engine.scanner.pools;
  });
  afterAll(async () => {
    await e?.close();
  });

  const metric = async (name: string): Promise<number> => {
    const text = await (await fetch(e.endpoints.scannerMetrics)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line === undefined ? 0 : Number(line.split(' ')[1]);
  };

  it('adds the pools of the mints it finds, in their ranking, never past pools.maxCount', async () => {
    const pairPools = e.sim.chain.poolsForPair(WSOL_MINT, USDC_MINT).map((p) => p.address);
    expect(start).toHaveLength(2);
    const pools = await eventually(() => (e.engine.scanner.pools.length > 2 ? e.engine.scanner.pools : undefined), 15_000, 'discovery adding pools');
    expect(pools.length).toBeLessThanOrEqual(6);
    expect(pools.slice(0, 2)).toEqual(start);
    for (const p of pools) expect(pairPools).toContain(p);
    expect(await metric('pool_discovery_pools_added_total')).toBe(pools.length - 2);
  });

  it('takes in a pool created on chain, and lets a closed pool go', async () => {
    const full = await eventually(() => (e.engine.scanner.pools.length === Math.min(6, e.sim.chain.poolsForPair(WSOL_MINT, USDC_MINT).length) ? e.engine.scanner.pools : undefined), 15_000, 'the set filled');
    // Close one monitored pool: it leaves, and its place is free for a pool created meanwhile.
    const closed = full[0]!;
    e.sim.chain.closePool(closed);
    const created = e.sim.chain.createPool({ dex: Dex.Whirlpool, tokenA: WSOL_MINT, tokenB: USDC_MINT, tvlUsd: 5_000_000 });
    e.sim.chain.advanceSlot(2); // past confirmed
    const after = await eventually(() => (!e.engine.scanner.pools.includes(closed) && e.engine.scanner.pools.includes(created.address) ? e.engine.scanner.pools : undefined), 15_000, 'the closed pool out, the new one in');
    expect(after.length).toBeLessThanOrEqual(6);
    expect(await metric('pool_discovery_pools_removed_total')).toBeGreaterThanOrEqual(1);
  });
});
