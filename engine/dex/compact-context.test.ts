/**
 * The cache's compact swap contexts quote exactly as the decoders' contexts: every pool of a
 * simulator (all four kinds: tick arrays with mostly uninitialized ticks, bin arrays with empty
 * bins), random amounts both ways, exact in and exact out, refusals included.
 */
import { afterAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../config/index.js';
import { Dex, SwapMode, quoteSwap, type Bin, type BinArray, type SwapContext, type TickArray } from './index.js';
import type { DlmmBin } from './dlmm/bin-array.js';
import { Prng } from './testing/prng.js';
import { createLogger } from '../obs/logger.js';
import { simSchema } from '../sim/sim-config.js';
import { createSimulator } from '../sim/simulator.js';
import { compactSwapContext } from './compact-context.js';

const config = loadConfig(simSchema, {
  env: {},
  flags: { seed: '11', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', tokens: '4', 'pools-per-kind': '6' },
}).values;
const sim = createSimulator(config, { manual: true, logger: createLogger({ name: 'compact-context-test', level: 'silent' }) });
afterAll(async () => {
  await sim.close();
});

describe('compactSwapContext', () => {
  it('quotes every simulator pool to the unit as the decoded context does, refusals included', () => {
    const rng = new Prng(20261122);
    let compared = 0;
    let refusals = 0;
    for (const view of sim.chain.pools()) {
      const compact = compactSwapContext(view.ctx);
      for (let i = 0; i < 60; i++) {
        const aToB = rng.chance(0.5);
        const mode = rng.chance(0.7) ? SwapMode.ExactIn : SwapMode.ExactOut;
        // From dust to beyond what the pool holds: 1 .. 2^63 atoms, log-uniform.
        const amount = 1n + rng.bits(rng.int(1, 63));
        const req = { aToB, mode, amount };
        const expected = quoteSwap(view.pool, req, view.ctx);
        expect(quoteSwap(view.pool, req, compact), `${view.dex} ${view.address} ${aToB} ${mode} ${amount}`).toEqual(expected);
        compared++;
        if (!expected.ok) refusals++;
      }
    }
    expect(compared).toBe(sim.chain.pools().length * 60);
    expect(refusals).toBeGreaterThan(0);
    expect(refusals).toBeLessThan(compared);
  });

  it('keeps only the initialized ticks, in their slots, and leaves the given context unchanged', () => {
    const view = sim.chain.pools().find((v) => v.dex === Dex.Whirlpool)!;
    const given = view.ctx.tickArrays!;
    const before = given.map((a) => a.ticks.length);
    const compact = compactSwapContext(view.ctx);
    expect(compact).not.toBe(view.ctx);
    expect(compact.nowSeconds).toBe(view.ctx.nowSeconds);
    compact.tickArrays!.forEach((a: TickArray, i: number) => {
      const original = given[i]!;
      expect(a.startTickIndex).toBe(original.startTickIndex);
      expect(a.ticks.length).toBe(original.ticks.length);
      for (let slot = 0; slot < a.ticks.length; slot++) {
        const t = original.ticks[slot]!;
        expect(a.ticks[slot]).toBe(t.initialized ? t : undefined);
      }
    });
    expect(given.map((a) => a.ticks.length)).toEqual(before);
    expect(given.every((a) => a.ticks.every((t) => t !== undefined))).toBe(true);
  });

  it('drops zero limit-order fields from bins and keeps them where orders rest', () => {
    const plain: DlmmBin = { id: 5, amountX: 0n, amountY: 7n, price: 1n << 64n, liquiditySupply: 0n, openOrderAmount: 0n, processedOrderRemainingAmount: 0n, limitOrderAskSide: false };
    const orders: DlmmBin = { ...plain, id: 6, openOrderAmount: 3n, limitOrderAskSide: true };
    const array: BinArray = { pool: 'P', index: 0n, bins: [plain, orders] };
    const ctx: SwapContext = { binArrays: [array] };
    const bins = compactSwapContext(ctx).binArrays![0]!.bins;
    expect(bins[0]).toEqual({ id: 5, amountX: 0n, amountY: 7n, price: 1n << 64n, liquiditySupply: 0n } satisfies Bin);
    expect(bins[1]).toEqual(orders);
    expect(array.bins[0]).toBe(plain);
  });

  it('returns the context itself when there is nothing to compact', () => {
    const empty: SwapContext = { tickArrays: [] };
    expect(compactSwapContext(empty)).toBe(empty);
    const dense: SwapContext = {
      tickArrays: [{ dex: Dex.Whirlpool, pool: 'P', startTickIndex: 0, ticks: [{ index: 0, initialized: true, liquidityNet: 1n, liquidityGross: 1n }] }],
    };
    expect(compactSwapContext(dense)).toBe(dense);
  });
});
