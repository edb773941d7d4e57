import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../../config/index.js';
import { Dex, DEX_KINDS } from '../../dex/index.js';
import { createLogger } from '../../obs/logger.js';
import type { SimPoolView } from '../market-view.js';
import { spotPrice } from '../pool-prices.js';
import { simSchema } from '../sim-config.js';
import { createSimulator, type SimEndpoints, type Simulator } from '../simulator.js';

let sim: Simulator;
let endpoints: SimEndpoints;

beforeAll(async () => {
  const config = loadConfig(simSchema, {
    env: {},
    flags: { seed: '11', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', 'tx-rate': '0', tokens: '2', 'pools-per-kind': '2' },
  }).values;
  sim = createSimulator(config, { manual: true, logger: createLogger({ name: 'sim-test', level: 'silent' }) });
  endpoints = await sim.start();
});

afterAll(async () => {
  await sim.close();
});

async function gap(body: unknown): Promise<{ status: number; body: Record<string, any> }> {
  const res = await fetch(`${endpoints.http}/admin/market/price-gap`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/** Two pools of `dex` and another kind trading the same mints, without transfer fees. */
function pairOf(dex: Dex): [SimPoolView, SimPoolView] {
  for (const p of sim.chain.pools()) {
    if (p.dex !== dex || p.transferFees !== undefined) continue;
    const other = sim.chain.poolsForPair(p.pool.tokenA, p.pool.tokenB).find((o) => o.address !== p.address && o.transferFees === undefined);
    if (other !== undefined) return [p, other];
  }
  throw new Error(`no pair for ${dex}`);
}

function relative(view: SimPoolView, ref: SimPoolView): number {
  const r = ref.pool.tokenA === view.pool.tokenA ? spotPrice(ref.pool) : 1 / spotPrice(ref.pool);
  return spotPrice(view.pool) / r - 1;
}

describe('POST /admin/market/price-gap', () => {
  it.each(DEX_KINDS)('opens a gap on a %s pool against another pool of the pair, landing in the next slot', async (dex) => {
    const [pool, reference] = pairOf(dex);
    const res = await gap({ pool: pool.address, reference: reference.address, gapBps: 50 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body['aToB']).toBe(false);
    expect(BigInt(res.body['amountIn'])).toBeGreaterThan(0n);
    sim.chain.advanceSlot();
    expect(sim.chain.signatureStatus(res.body['signature'])).toMatchObject({ err: null });
    const after = sim.chain.pool(pool.address)!;
    // At least the gap asked for; DLMM moves a whole bin at a time, the others land within a hair of it.
    expect(relative(after, sim.chain.pool(reference.address)!)).toBeGreaterThanOrEqual(0.00499);
    if (dex !== Dex.Dlmm) expect(relative(after, sim.chain.pool(reference.address)!)).toBeLessThan(0.0052);
    // Already 50 bps above the reference: a 10 bps gap up is refused.
    const past = await gap({ pool: pool.address, reference: reference.address, gapBps: 10 });
    expect(past.status).toBe(400);
    expect(past.body['error']['message']).toMatch(/already at or above/);
  });

  it('moves a pool down against its own price', async () => {
    const [pool] = pairOf(Dex.Amm);
    const before = spotPrice(sim.chain.pool(pool.address)!.pool);
    const res = await gap({ pool: pool.address, gapBps: 100, direction: 'down' });
    expect(res.status).toBe(200);
    sim.chain.advanceSlot();
    const after = spotPrice(sim.chain.pool(pool.address)!.pool);
    expect(after / before - 1).toBeLessThanOrEqual(-0.0099);
  });

  it('refuses bad bodies, unknown pools and a reference of other mints', async () => {
    const [pool] = pairOf(Dex.Amm);
    expect((await gap({ pool: pool.address })).status).toBe(400);
    expect((await gap({ pool: pool.address, gapBps: 0 })).status).toBe(400);
    expect((await gap({ pool: pool.address, gapBps: 100, direction: 'sideways' })).status).toBe(400);
    expect((await gap({ pool: pool.address, gapBps: 100, extra: 1 })).status).toBe(400);
    const unknown = await gap({ pool: '11111111111111111111111111111111', gapBps: 100 });
    expect(unknown.status).toBe(404);
    expect(unknown.body['error']['code']).toBe('TP_ERR_NOT_FOUND');
    const foreign = sim.chain.pools().find((p) => p.pool.tokenA !== pool.pool.tokenA && p.pool.tokenB !== pool.pool.tokenB && p.pool.tokenA !== pool.pool.tokenB && p.pool.tokenB !== pool.pool.tokenA);
    if (foreign !== undefined) expect((await gap({ pool: pool.address, reference: foreign.address, gapBps: 100 })).status).toBe(400);
  });
});

describe('POST /admin/market/pools and DELETE /admin/market/pools/:address', () => {
  async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, any> }> {
    const res = await fetch(`${endpoints.http}${path}`, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  }
  async function programAccounts(programId: string): Promise<string[]> {
    const res = await fetch(endpoints.rpc, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getProgramAccounts', params: [programId, { encoding: 'base64', dataSlice: { offset: 0, length: 0 }, commitment: 'processed' }] }) });
    return ((await res.json()) as { result: { pubkey: string }[] }).result.map((r) => r.pubkey);
  }

  it.each(DEX_KINDS)('creates a %s pool the chain then holds, quotes and lists; closing it removes it', async (dex) => {
    const [a, b] = sim.chain.tokens().map((t) => t.mint);
    const created = await call('POST', '/admin/market/pools', { dex, tokenA: a, tokenB: b, tvlUsd: 250_000 });
    expect(created.status).toBe(200);
    const address = created.body['address'] as string;
    const info = sim.chain.poolInfo(address)!;
    expect(info.dex).toBe(dex);
    expect(await programAccounts(info.programId)).toContain(address);
    const view = sim.chain.pool(address)!;
    expect(spotPrice(view.pool)).toBeGreaterThan(0);

    expect((await call('DELETE', `/admin/market/pools/${address}`)).status).toBe(200);
    expect(sim.chain.getAccount(address)).toBeNull();
    expect(sim.chain.pool(address)).toBeUndefined();
    expect(await programAccounts(info.programId)).not.toContain(address);
    // The generated flow and every view go on without it.
    sim.chain.advanceSlot();
    expect(sim.chain.pools().some((p) => p.address === address)).toBe(false);
  });

  it('refuses a bad body, an unknown token and an address that is no pool', async () => {
    const [a] = sim.chain.tokens().map((t) => t.mint);
    expect((await call('POST', '/admin/market/pools', { dex: 'dexz', tokenA: a, tokenB: a })).status).toBe(400);
    expect((await call('POST', '/admin/market/pools', { dex: 'dexa_amm', tokenA: a, tokenB: a })).body['error']).toMatchObject({ code: 'TP_ERR_BAD_PARAMETER' });
    expect((await call('POST', '/admin/market/pools', { dex: 'dexa_amm', tokenA: a, tokenB: '11111111111111111111111111111111' })).status).toBe(400);
    expect((await call('DELETE', `/admin/market/pools/${a}`)).status).toBe(404);
  });
});
