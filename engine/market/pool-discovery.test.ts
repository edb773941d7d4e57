import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createDecoderRegistry, DEFAULT_PROGRAM_IDS, Dex } from '../dex/index.js';
import { RpcPoolLoader } from '../pools/index.js';
import { manualSimulator } from '../quote/testing.js';
import { AccountFetcher, RpcClient } from '../rpc/index.js';
import type { SimEndpoints, Simulator } from '../sim/index.js';
import { discoverPools } from './pool-discovery.js';

const SOL = 'So11111111111111111111111111111111111111112';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
let sim: Simulator;
let endpoints: SimEndpoints;
let rpc: RpcClient;

beforeAll(async () => {
  sim = manualSimulator(61);
  endpoints = await sim.start();
  sim.chain.advanceSlot();
  rpc = new RpcClient({ endpoints: [endpoints.rpc] });
});
afterAll(async () => {
  await rpc?.close();
  await sim?.close();
});

async function call(method: string, params: unknown[]): Promise<any> {
  const res = await fetch(endpoints.rpc, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return res.json();
}

describe('getProgramAccounts on the simulator', () => {
  it('answers with the real shape and applies dataSize and memcmp filters', async () => {
    const filters = [{ dataSize: 752 }, { memcmp: { offset: 400, bytes: SOL } }];
    const plain = await call('getProgramAccounts', [DEFAULT_PROGRAM_IDS[Dex.Amm], { encoding: 'base64', filters }]);
    const expected = sim.chain.pools().filter((p) => p.dex === Dex.Amm && p.pool.tokenA === SOL).map((p) => p.address).sort();
    expect(expected.length).toBeGreaterThan(0);
    expect(plain.result.map((r: any) => r.pubkey).sort()).toEqual(expected);
    const first = plain.result[0];
    expect(first.account.owner).toBe(DEFAULT_PROGRAM_IDS[Dex.Amm]);
    expect(first.account.data[1]).toBe('base64');
    expect(Buffer.from(first.account.data[0], 'base64').length).toBe(752);
    const ctx = await call('getProgramAccounts', [DEFAULT_PROGRAM_IDS[Dex.Amm], { encoding: 'base64', filters, withContext: true }]);
    expect(typeof ctx.result.context.slot).toBe('number');
    expect(ctx.result.value.length).toBe(expected.length);
    const none = await call('getProgramAccounts', [DEFAULT_PROGRAM_IDS[Dex.Amm], { encoding: 'base64', filters: [{ dataSize: 751 }] }]);
    expect(none.result).toEqual([]);
    const bad = await call('getProgramAccounts', [DEFAULT_PROGRAM_IDS[Dex.Amm], { filters: [{ memcmp: { offset: 0, bytes: '0OIl' } }] }]);
    expect(bad.error.code).toBe(-32602);
    const tooMany = await call('getProgramAccounts', [DEFAULT_PROGRAM_IDS[Dex.Amm], { filters: [{ dataSize: 1 }, { dataSize: 1 }, { dataSize: 1 }, { dataSize: 1 }, { dataSize: 1 }] }]);
    expect(tooMany.error.code).toBe(-32602);
  });
});

describe('discoverPools', () => {
  it('finds every pool of the four kinds trading the mints, ranked by liquidity', async () => {
    const loader = new RpcPoolLoader({ fetcher: new AccountFetcher(rpc), registry: createDecoderRegistry() });
    const found = await discoverPools({ rpcUrl: endpoints.rpc, mints: [SOL, USDC], loader });
    const expected = sim.chain.pools().filter((p) => new Set([SOL, USDC]).has(p.pool.tokenA) && new Set([SOL, USDC]).has(p.pool.tokenB)).map((p) => p.address).sort();
    expect(found.map((p) => p.address).sort()).toEqual(expected);
    expect(new Set(found.map((p) => p.dex)).size).toBeGreaterThan(1);
    for (let i = 1; i < found.length; i++) expect(BigInt(found[i - 1]!.liquidity!)).toBeGreaterThanOrEqual(BigInt(found[i]!.liquidity!));
    expect(found.every((p) => p.liquidityMint === SOL)).toBe(true);
    const one = await discoverPools({ rpcUrl: endpoints.rpc, mints: [USDC], loader });
    expect(one.length).toBe(sim.chain.pools().filter((p) => p.pool.tokenA === USDC || p.pool.tokenB === USDC).length);
  });
});
