import { afterAll, describe, expect, it } from 'vitest';

import { PoolCache } from '../cache/index.js';
import { createQuoteMetrics } from '../obs/quote-metrics.js';
import { heapProfileResponse } from '../common/index.js';
import { ErrorCode } from '../errors.js';
import { PoolDirectory } from './pool-directory.js';
import { PoolUpdateHandler } from './pool-update-handler.js';
import { manualSimulator, storePool } from './testing.js';

const sim = manualSimulator(3);
const views = sim.chain.pools();
afterAll(() => sim.close());
const identity = (i: number) => {
  const v = views[i]!;
  return { address: v.address, dex: v.dex, tokenA: v.pool.tokenA, tokenB: v.pool.tokenB };
};

describe('PoolDirectory', () => {
  it('keeps every pool the cache held, after the cache evicts it', () => {
    let now = 0;
    const cache = new PoolCache({ now: () => now, stalenessThresholdMs: 10 });
    for (const v of views) storePool(cache, v, 1n);
    const directory = new PoolDirectory();
    expect(directory.syncFrom(cache)).toBe(views.length);
    expect(directory.syncFrom(cache)).toBe(0);
    now = 100;
    cache.evictStale();
    expect(cache.size).toBe(0);
    const v = views[0]!;
    expect(directory.poolsForPair(v.pool.tokenB, v.pool.tokenA)).toContain(v.address);
    expect(directory.hasMint(v.pool.tokenA)).toBe(true);
  });

  it('forgets the pool known the longest past maxPools, and its mints with it', () => {
    const directory = new PoolDirectory({ maxPools: 2 });
    directory.add(identity(0));
    directory.add(identity(1));
    directory.add(identity(2));
    expect(directory.size).toBe(2);
    expect(directory.get(views[0]!.address)).toBeUndefined();
    const pairsLeft = [1, 2].map((i) => directory.poolsForPair(views[i]!.pool.tokenA, views[i]!.pool.tokenB));
    expect(pairsLeft.every((p) => p.length >= 1)).toBe(true);
    expect(() => new PoolDirectory({ maxPools: 0 })).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'maxPools', value: 0 } }));
  });
});

describe('PoolUpdateHandler', () => {
  const event = (state: Record<string, unknown>) =>
    JSON.stringify({ pool: { ...identity(0) }, state: { slot: '5', reserveA: '1', reserveB: '2', ...state } });

  it('refuses values outside u64 and non-decimal strings as parse errors', () => {
    const metrics = createQuoteMetrics();
    const h = new PoolUpdateHandler({ cache: new PoolCache(), directory: new PoolDirectory(), metrics });
    expect(h.handleMessage(event({ reserveA: '18446744073709551616' }))).toBe('parse_error');
    expect(h.handleMessage(event({ slot: 5 }))).toBe('parse_error');
    expect(h.handleMessage(event({ reserveB: '0x10' }))).toBe('parse_error');
    expect(h.handleMessage(event({ rawData: 12 }))).toBe('parse_error');
    expect(h.handleMessage(event({}))).toBe('inserted');
    expect(h.handleMessage(event({ slot: '4' }))).toBe('ignored_older_slot');
    expect(h.handleMessage(event({ writeVersion: 'x' }))).toBe('parse_error');
  });

  it('orders two states of one slot by their account-stream write version', () => {
    const cache = new PoolCache();
    const h = new PoolUpdateHandler({ cache, directory: new PoolDirectory(), metrics: createQuoteMetrics() });
    expect(h.handleMessage(event({ writeVersion: '10' }))).toBe('inserted');
    expect(h.handleMessage(event({ writeVersion: '12', reserveA: '7' }))).toBe('replaced');
    expect(h.handleMessage(event({ writeVersion: '11', reserveA: '8' }))).toBe('ignored_equal_slot');
    expect(cache.get(identity(0).address)!.reserveA).toBe(7n);
  });

  it('with the cache disabled, only feeds the directory', () => {
    const cache = new PoolCache();
    const directory = new PoolDirectory();
    const h = new PoolUpdateHandler({ cache, directory, metrics: createQuoteMetrics(), cacheEnabled: false });
    expect(h.handleMessage(event({}))).toBe('cache_disabled');
    expect(cache.size).toBe(0);
    expect(directory.size).toBe(1);
  });
});

describe('heapProfileResponse', () => {
  it('is 404 while no service keeps heap sampling on', async () => {
    const r = await heapProfileResponse('');
    expect(r.status).toBe(404);
    expect(JSON.parse(String(r.body))).toEqual({ error: { code: 'TP_ERR_NOT_FOUND', message: 'heap profiling is off (HEAP_PROFILE=false)' } });
  });
});
