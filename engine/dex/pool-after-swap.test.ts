import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../config/index.js';
import { createLogger } from '../obs/index.js';
import { RpcPoolLoader, type LoadedPool } from '../pools/index.js';
import { AccountFetcher, RpcClient } from '../rpc/index.js';
import { createSimulator, openPriceGap, simSchema, type Simulator } from '../sim/index.js';
import { createDecoderRegistry } from './registry.js';
import { poolAfterSwap } from './pool-after-swap.js';
import { quoteSwap } from './quote.js';
import { Dex, type DlmmPool } from './types.js';
import type { DlmmBinArray } from './dlmm/bin-array.js';

/**
 * The state `poolAfterSwap` computes is the one the chain holds after the same swap: a swap landed
 * on the simulator (whose swap program runs the engine's math and writes the accounts as the DEX
 * programs do), each pool kind, read back over RPC.
 */

let sim: Simulator;
let rpc: RpcClient;
let loader: RpcPoolLoader;

beforeAll(async () => {
  const config = loadConfig(simSchema, { env: {}, flags: { seed: '73', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', 'tx-rate': '0', tokens: '2', 'pools-per-kind': '1' } }).values;
  sim = createSimulator(config, { manual: true, logger: createLogger({ name: 'pool-after-swap-test', level: 'silent' }) });
  const endpoints = await sim.start();
  sim.chain.advanceSlot();
  rpc = new RpcClient({ endpoints: [endpoints.rpc] });
  loader = new RpcPoolLoader({ fetcher: new AccountFetcher(rpc), registry: createDecoderRegistry() });
}, 60_000);

afterAll(async () => {
  await rpc?.close();
  await sim?.close();
});

async function load(address: string): Promise<LoadedPool> {
  const [r] = await loader.load([address]);
  if (!r!.ok) throw new Error(r!.error.message);
  return r!.value;
}

describe('poolAfterSwap', () => {
  for (const dex of [Dex.Amm, Dex.Clmm, Dex.Whirlpool, Dex.Dlmm]) {
    it(`${dex}: the state after a swap is the chain's after the same swap`, async () => {
      const view = sim.chain.pools().find((p) => p.dex === dex && p.transferFees === undefined)!;
      const before = await load(view.address);
      const swap = openPriceGap(sim.chain, { pool: view.address, gapBps: 40, direction: 'up' });
      sim.chain.advanceSlot();
      const landed = await load(view.address);
      const after = poolAfterSwap(before.pool, before.context, swap.aToB, swap.amountIn, before.transferFees);
      if (!after.ok) throw new Error(after.message);
      expect(after.quote.amountOut).toBe(swap.expectedOut);
      const computed = after.pool;
      const chain = landed.pool;
      switch (computed.dex) {
        case Dex.Amm:
          expect([computed.reserveA, computed.reserveB]).toEqual([(chain as typeof computed).reserveA, (chain as typeof computed).reserveB]);
          break;
        case Dex.Clmm:
        case Dex.Whirlpool: {
          const c = chain as typeof computed;
          expect([computed.sqrtPrice, computed.tick, computed.liquidity]).toEqual([c.sqrtPrice, c.tick, c.liquidity]);
          break;
        }
        case Dex.Dlmm: {
          const c = chain as DlmmPool;
          expect(computed.activeId).toBe(c.activeId);
          const bins = (ctx: typeof after.context): string[] => ((ctx?.binArrays ?? []) as DlmmBinArray[]).flatMap((a) => a.bins.map((b) => `${b.amountX}:${b.amountY}`));
          expect(bins(after.context)).toEqual(bins(landed.context));
          break;
        }
      }
      // Quoting on the computed state is quoting on the chain's.
      const next = { aToB: !swap.aToB, mode: 'ExactIn' as const, amount: swap.expectedOut / 10n };
      expect(quoteSwap(after.pool, next, after.context)).toEqual(quoteSwap(landed.pool, next, landed.context));
    });
  }
});
