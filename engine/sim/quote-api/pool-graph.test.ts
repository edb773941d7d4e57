import { describe, expect, it } from 'vitest';

import { PoolGraph } from './pool-graph.js';
import { MINT, POOL, ammPool, buildFixtureMarket, testKey } from './testing/market-fixture.js';

describe('PoolGraph', () => {
  it('lists the pools of a pair in either order, and each mint’s neighbours', () => {
    const market = buildFixtureMarket();
    const graph = new PoolGraph(market);
    graph.sync();
    const addresses = (x: string, y: string): string[] => graph.poolsFor(x, y).map((p) => graph.views[p.index]!.address);
    expect(addresses(MINT.SOL, MINT.USDC)).toEqual([POOL.solUsdcAmm, POOL.solUsdcWhirlpool]);
    expect(addresses(MINT.USDC, MINT.SOL)).toEqual([POOL.solUsdcAmm, POOL.solUsdcWhirlpool]);
    expect(addresses(MINT.P, MINT.Q)).toEqual([]);
    expect([...graph.neighboursOf(MINT.X)].sort()).toEqual([MINT.SOL, MINT.USDC].sort());
    expect(graph.neighboursOf(MINT.LONE).size).toBe(0);
    expect(graph.poolsFor(MINT.SOL, MINT.USDC).map((p) => p.labelKey)).toEqual(['raydium', 'whirlpool']);
  });

  it('rebuilds only when the set of pools changes, and always serves the newest views', () => {
    const market = buildFixtureMarket();
    const graph = new PoolGraph(market);
    graph.sync();
    graph.sync();
    expect(graph.buildCount).toBe(1);

    // New states of the same pools: a new array, no rebuild, new views.
    const fresh = ammPool(POOL.pWAmm, MINT.P, MINT.W, 1n, 2n);
    market.setPools(market.pools().map((p) => (p.address === POOL.pWAmm ? fresh : p)));
    graph.sync();
    expect(graph.buildCount).toBe(1);
    expect(graph.views[graph.poolsFor(MINT.P, MINT.W)[0]!.index]).toBe(fresh);

    // A new pool: rebuilt.
    market.setPools([...market.pools(), ammPool(testKey(150), MINT.P, MINT.Q, 10n, 10n)]);
    graph.sync();
    expect(graph.buildCount).toBe(2);
    expect(graph.poolsFor(MINT.Q, MINT.P)).toHaveLength(1);
    expect(graph.neighboursOf(MINT.P).has(MINT.Q)).toBe(true);
  });
});
