/**
 * The planner's route template writes (route-template-writer.ts) on Redis: once per route within
 * the TTL (the LRU, no Redis round trip after), only where the route has none, never for a pool
 * without a plan, and a refused write tried again on the next opportunity.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { routeTemplateHash, type RouteTemplateHop, type RouteTemplatePlan, type RouteTemplateValue } from '../state/index.js';
import { createRedisKeySpace, type TestKeySpace } from '../state/kv/testing.js';
import { RouteTemplateWriter } from './route-template-writer.js';

const A = 'So11111111111111111111111111111111111111112';
const B = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const POOL1 = '58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2';
const POOL2 = '7qbRF6YsyGuLUVs6Y1q64bdVrfe4ZcUUz1JRdoVNUJnm';

const plans: Record<string, RouteTemplatePlan> = {
  [POOL1]: { owner: 'ProgA', dex: 'dexa_amm', accounts: ['VaultA', 'VaultB', A, B] },
  [POOL2]: { owner: 'ProgC', dex: 'dexc_whirlpool', accounts: ['Tick1', 'Tick2', 'VaultC', 'VaultD', A, B] },
};

const hop = (pool: string, dex: string, inputMint: string, outputMint: string): RouteTemplateHop => ({ pool, dex, inputMint, outputMint });

let kv: TestKeySpace;

beforeAll(async () => {
  kv = await createRedisKeySpace();
});

afterAll(async () => {
  await kv?.drop();
});

describe('RouteTemplateWriter', () => {
  it('writes a route once: the next opportunities on it cost no Redis call', async () => {
    const writer = new RouteTemplateWriter({ keys: kv.keys, planned: (p) => plans[p], now: () => 1_700_000_000_000 });
    const route = [hop(POOL1, 'dexa_amm', A, B), hop(POOL2, 'dexc_whirlpool', B, A)];
    expect(await writer.ensure(route)).toBe('written');
    const hash = routeTemplateHash(route);
    expect(await kv.keys.getRouteTemplate(hash)).toEqual({
      version: 1,
      writtenAt: 1_700_000_000_000,
      pools: [
        { address: POOL1, owner: 'ProgA', dex: 'dexa_amm', accounts: ['VaultA', 'VaultB', A, B] },
        { address: POOL2, owner: 'ProgC', dex: 'dexc_whirlpool', accounts: ['Tick1', 'Tick2', 'VaultC', 'VaultD', A, B] },
      ],
    });
    // Deleted behind its back: the writer remembers it wrote it and does not ask Redis again.
    await kv.keys.deleteRouteTemplate(hash);
    expect(await writer.ensure(route)).toBe('known');
    expect(await kv.keys.getRouteTemplate(hash)).toBeNull();
    // The reverse is another route.
    expect(await writer.ensure([hop(POOL2, 'dexc_whirlpool', A, B), hop(POOL1, 'dexa_amm', B, A)])).toBe('written');
    expect(writer.stats).toMatchObject({ written: 2, known: 1 });
  });

  it("leaves an executor's template as it is, and a route with an unplanned pool alone", async () => {
    const writer = new RouteTemplateWriter({ keys: kv.keys, planned: (p) => plans[p] });
    const route = [hop(POOL1, 'dexa_amm', B, A)];
    const executors: RouteTemplateValue = { version: 1, writtenAt: 5, pools: [{ address: POOL1, owner: 'ProgA', dex: 'dexa_amm', accounts: ['VaultA'] }] };
    await kv.keys.setRouteTemplate(routeTemplateHash(route), executors);
    expect(await writer.ensure(route)).toBe('present');
    expect(await kv.keys.getRouteTemplate(routeTemplateHash(route))).toEqual(executors);
    const unplanned = [hop(POOL1, 'dexa_amm', A, B), hop('Unknown1111111111111111111111111111111111111', 'dexb_dlmm', B, A)];
    expect(await writer.ensure(unplanned)).toBe('unplanned');
    expect(await kv.keys.getRouteTemplate(routeTemplateHash(unplanned))).toBeNull();
  });

  it('a refused write is counted, never thrown, and tried again on the next opportunity', async () => {
    let refuse = true;
    const keys = {
      setRouteTemplateIfAbsent: (hash: string, t: RouteTemplateValue): Promise<boolean> => (refuse ? Promise.reject(new Error('redis down (test)')) : kv.keys.setRouteTemplateIfAbsent(hash, t)),
    };
    const writer = new RouteTemplateWriter({ keys, planned: (p) => plans[p] });
    const route = [hop(POOL2, 'dexc_whirlpool', B, A)];
    expect(await writer.ensure(route)).toBe('error');
    refuse = false;
    expect(await writer.ensure(route)).toBe('written');
    expect(await kv.keys.getRouteTemplate(routeTemplateHash(route))).not.toBeNull();
  });
});
