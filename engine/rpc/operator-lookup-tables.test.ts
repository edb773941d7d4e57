import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../config/loader.js';
import { Dex, SwapMode, buildSwapRouteTransaction, createDecoderRegistry, planSwapRoute, type SwapPool } from '../dex/index.js';
import { createLogger } from '../obs/logger.js';
import { RpcPoolLoader } from '../pools/index.js';
import { AccountFetcher, RpcClient, type AccountReader } from './index.js';
import { USDC_MINT, WSOL_MINT as WSOL, createSimulator, simSchema, type Simulator } from '../sim/index.js';
import { swapPoolOfLoaded } from '../pools/index.js';
import { OperatorLookupTables } from './operator-lookup-tables.js';

const SOL = 1_000_000_000n;

let sim: Simulator;
let rpc: RpcClient;
let fetcher: AccountFetcher;
const registry = createDecoderRegistry();

beforeAll(async () => {
  const config = loadConfig(simSchema, {
    env: {},
    flags: { seed: '9', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', 'tx-rate': '0', tokens: '2', 'pools-per-kind': '2' },
  }).values;
  sim = createSimulator(config, { manual: true, logger: createLogger({ name: 'sim-test', level: 'silent' }) });
  const endpoints = await sim.start();
  rpc = new RpcClient({ endpoints: [endpoints.rpc] });
  fetcher = new AccountFetcher(rpc);
  sim.chain.advanceSlot(3);
});

afterAll(async () => {
  await rpc.close();
  await sim.close();
});

/** Counts the reads that reach the chain. */
function counting(reader: Pick<AccountReader, 'fetch'>): { reader: Pick<AccountReader, 'fetch'>; reads: () => number } {
  let reads = 0;
  return {
    reader: {
      fetch: (address, options) => {
        reads++;
        return reader.fetch(address, options);
      },
    },
    reads: () => reads,
  };
}

async function solUsdcSwapPools(): Promise<SwapPool[]> {
  const loader = new RpcPoolLoader({ fetcher, registry, readMints: true });
  const addresses = [Dex.Amm, Dex.Clmm, Dex.Whirlpool, Dex.Dlmm].map((dex) => sim.chain.poolsForPair(WSOL, USDC_MINT).find((p) => p.dex === dex)!.address);
  const loaded = await loader.load(addresses);
  return loaded.map((r) => {
    if (!r.ok) throw new Error(r.error.message);
    return swapPoolOfLoaded(r.value, registry);
  });
}

describe('OperatorLookupTables', () => {
  it("reads the operator's tables over RPC, reuses a read for the TTL, and leaves out what is not a table", async () => {
    const [table] = sim.chain.lookupTableAddresses();
    let clock = 1_000;
    const { reader, reads } = counting(fetcher);
    const tables = new OperatorLookupTables({ reader, addresses: [table!, WSOL], ttlMs: 500, now: () => clock });
    const first = await tables.current();
    expect(first).toEqual([{ address: table, addresses: sim.chain.lookupTable(table!)!.addresses }]);
    expect(reads()).toBe(2);
    clock += 500;
    expect(await tables.current()).toBe(first);
    expect(reads()).toBe(2);
    clock += 1;
    await tables.current();
    expect(reads()).toBe(4);
  });

  it('offers addresses appended in the slot of the read only from the next slot on', async () => {
    const [, table] = sim.chain.lookupTableAddresses();
    const before = sim.chain.lookupTable(table!)!.addresses;
    const added = sim.chain.genesis.actors.traders[5]!.keypair.address;
    sim.chain.extendLookupTable(table!, [added]);
    let clock = 0;
    const tables = new OperatorLookupTables({ reader: fetcher, addresses: [table!], ttlMs: 0, now: () => clock++ });
    expect((await tables.current())[0]!.addresses).toEqual(before);
    sim.chain.advanceSlot();
    expect((await tables.current())[0]!.addresses).toEqual([...before, added]);
  });

  it('make a four-hop route that does not fit a legacy transaction compile to v0 within a packet', async () => {
    const owner = sim.chain.genesis.actors.traders[0]!.keypair;
    const plan = planSwapRoute({ owner: owner.address, inputMint: WSOL, hops: await solUsdcSwapPools(), mode: SwapMode.ExactIn, amount: SOL, slippageBps: 100 });
    const blockhash = 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG';
    expect(() => buildSwapRouteTransaction(plan, { payer: owner, recentBlockhash: blockhash, lookupTables: [] })).toThrow(/does not fit/);
    const tables = new OperatorLookupTables({ reader: fetcher, addresses: sim.chain.lookupTableAddresses() });
    const tx = buildSwapRouteTransaction(plan, { payer: owner, recentBlockhash: blockhash, lookupTables: await tables.current() });
    expect(tx.version).toBe(0);
    expect(tx.size).toBeLessThanOrEqual(1232);
  });
});
