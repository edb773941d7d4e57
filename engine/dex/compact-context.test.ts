/**
 * The cache's compact swap contexts quote exactly as the decoders' contexts: every pool of a
 * simulator (all four kinds: tick arrays with mostly uninitialized ticks, bin arrays with empty
 * bins), random amounts both ways, exact in and exact out, refusals included; random DLMM
 * pools (limit orders, both fee collection modes) whose bin arrays are packed; and random
 * concentrated pools of both protocols whose tick arrays are packed.
 */
import { afterAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../config/index.js';
import { Dex, SwapMode, quoteSwap, type Bin, type BinArray, type SwapContext, type TickArray } from './index.js';
import type { DlmmBin } from './dlmm/bin-array.js';
import { Prng } from './testing/prng.js';
import { createLogger } from '../obs/logger.js';
import { simSchema } from '../sim/sim-config.js';
import { createSimulator } from '../sim/simulator.js';
import { compactBinArray, compactSwapContext, compactTickArray } from './compact-context.js';
import { PackedTickArray } from './concentrated/packed-tick-array.js';
import { quoteDlmm, quoteDlmmWithBins } from './dlmm/dlmm-swap.js';
import { PackedBinArray } from './dlmm/packed-bin-array.js';
import { randomScenario } from './dlmm/testing/random-pools.js';
import { poolAfterSwap } from './pool-after-swap.js';
import { randomClPool, randomClRequest } from './testing/random-cl-pools.js';

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
      if (view.dex === Dex.Dlmm) expect(compact.binArrays!.every((a) => a instanceof PackedBinArray)).toBe(true);
      if (view.dex === Dex.Clmm || view.dex === Dex.Whirlpool) expect(compact.tickArrays!.every((a) => a instanceof PackedTickArray)).toBe(true);
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

  it('packs tick arrays, keeping the initialized ticks in their slots, and leaves the given context unchanged', () => {
    const view = sim.chain.pools().find((v) => v.dex === Dex.Whirlpool)!;
    const given = view.ctx.tickArrays!;
    const before = given.map((a) => a.ticks.length);
    const compact = compactSwapContext(view.ctx);
    expect(compact).not.toBe(view.ctx);
    expect(compact.nowSeconds).toBe(view.ctx.nowSeconds);
    compact.tickArrays!.forEach((a: TickArray, i: number) => {
      const original = given[i]!;
      expect(a).toBeInstanceOf(PackedTickArray);
      expect(a.startTickIndex).toBe(original.startTickIndex);
      const ticks = a.ticks;
      expect(ticks.length).toBe(original.ticks.length);
      for (let slot = 0; slot < ticks.length; slot++) {
        const t = original.ticks[slot]!;
        expect(ticks[slot]).toEqual(t.initialized ? t : undefined);
      }
    });
    expect(given.map((a) => a.ticks.length)).toEqual(before);
    expect(given.every((a) => a.ticks.every((t) => t !== undefined))).toBe(true);
  });

  it('packs bin arrays, limit orders included, and leaves the given bins unchanged', () => {
    const plain: DlmmBin = { id: 5, amountX: 0n, amountY: 7n, price: 1n << 64n, liquiditySupply: 0n, openOrderAmount: 0n, processedOrderRemainingAmount: 0n, limitOrderAskSide: false };
    const orders: DlmmBin = { ...plain, id: 6, openOrderAmount: 3n, limitOrderAskSide: true };
    const array: BinArray = { pool: 'P', index: 0n, bins: [plain, orders] };
    const packed = compactSwapContext({ binArrays: [array] }).binArrays![0]!;
    expect(packed).toBeInstanceOf(PackedBinArray);
    expect(packed.bins).toEqual([plain, orders]);
    expect(array.bins[0]).toBe(plain);
    // Without limit orders, materialized bins carry only the Bin fields.
    const noOrders: BinArray = { pool: 'P', index: 0n, bins: [plain] };
    expect(compactBinArray(noOrders).bins).toEqual([{ id: 5, amountX: 0n, amountY: 7n, price: 1n << 64n, liquiditySupply: 0n } satisfies Bin]);
  });

  it('keeps bin objects with zero limit-order fields dropped when an array cannot be packed', () => {
    const plain: DlmmBin = { id: 5, amountX: 0n, amountY: 7n, price: 1n << 64n, liquiditySupply: 0n, openOrderAmount: 0n, processedOrderRemainingAmount: 0n, limitOrderAskSide: false };
    // Ids 5 and 7: not consecutive, so not packed.
    const orders: DlmmBin = { ...plain, id: 7, openOrderAmount: 3n, limitOrderAskSide: true };
    const array: BinArray = { pool: 'P', index: 0n, bins: [plain, orders] };
    const compact = compactBinArray(array);
    expect(compact).not.toBeInstanceOf(PackedBinArray);
    expect(compact.bins[0]).toEqual({ id: 5, amountX: 0n, amountY: 7n, price: 1n << 64n, liquiditySupply: 0n } satisfies Bin);
    expect(compact.bins[1]).toEqual(orders);
  });

  it('quotes random DLMM pools to the unit as their decoded bin arrays, with the bins a swap leaves', () => {
    const rng = new Prng(20261129);
    let compared = 0;
    let refusals = 0;
    for (let s = 0; s < 150; s++) {
      const { pool, binArrays, nowSeconds } = randomScenario(rng);
      const given: SwapContext = { binArrays, nowSeconds };
      const compact = compactSwapContext(given);
      expect(compact.binArrays!.every((a) => a instanceof PackedBinArray)).toBe(true);
      for (let i = 0; i < 40; i++) {
        const aToB = rng.chance(0.5);
        const mode = rng.chance(0.6) ? SwapMode.ExactIn : SwapMode.ExactOut;
        const amount = 1n + rng.bits(rng.int(1, 50));
        const req = { aToB, mode, amount };
        const label = `scenario ${s} ${aToB} ${mode} ${amount}`;
        const expected = quoteDlmm(pool, req, given);
        expect(quoteDlmm(pool, req, compact), label).toEqual(expected);
        expect(quoteDlmmWithBins(pool, req, compact), label).toEqual(quoteDlmmWithBins(pool, req, given));
        compared++;
        if (!expected.ok) refusals++;
      }
    }
    expect(refusals).toBeGreaterThan(0);
    expect(refusals).toBeLessThan(compared);
  });

  it('moves packed bin arrays after a swap as it moves the decoded ones', () => {
    const rng = new Prng(7);
    let moved = 0;
    for (let s = 0; s < 60; s++) {
      const { pool, binArrays, nowSeconds } = randomScenario(rng);
      const given: SwapContext = { binArrays, nowSeconds };
      const compact = compactSwapContext(given);
      const aToB = rng.chance(0.5);
      const amount = 1n + rng.bits(rng.int(1, 44));
      const expected = poolAfterSwap(pool, given, aToB, amount);
      const actual = poolAfterSwap(pool, compact, aToB, amount);
      expect(actual.ok).toBe(expected.ok);
      if (!expected.ok || !actual.ok) continue;
      expect(actual.pool).toEqual(expected.pool);
      const amounts = (ctx: SwapContext | undefined) => ctx!.binArrays!.map((a) => a.bins.map((b) => [b.id, b.amountX, b.amountY]));
      expect(amounts(actual.context)).toEqual(amounts(expected.context));
      expect(actual.context!.binArrays!.every((a) => a instanceof PackedBinArray)).toBe(true);
      moved++;
    }
    expect(moved).toBeGreaterThan(10);
  });

  it('returns the context itself when there is nothing to compact', () => {
    const empty: SwapContext = { tickArrays: [] };
    expect(compactSwapContext(empty)).toBe(empty);
    const dense: SwapContext = {
      tickArrays: [{ dex: Dex.Whirlpool, pool: 'P', startTickIndex: 0, ticks: [{ index: 0, initialized: true, liquidityNet: 1n, liquidityGross: 1n }] }],
    };
    const packed = compactSwapContext(dense);
    expect(packed.tickArrays![0]).toBeInstanceOf(PackedTickArray);
    const again: SwapContext = { tickArrays: packed.tickArrays! };
    expect(compactSwapContext(again)).toBe(again);
  });

  it('keeps tick objects, initialized ones only, when an array cannot be packed', () => {
    // Index 7 in slot 1 of an array from 0, index 20 in slot 2: no one spacing gives both.
    const t1 = { index: 7, initialized: true, liquidityNet: 1n, liquidityGross: 1n };
    const t2 = { index: 20, initialized: true, liquidityNet: -1n, liquidityGross: 1n };
    const empty = { index: 0, initialized: false, liquidityNet: 0n, liquidityGross: 0n };
    const array: TickArray = { dex: Dex.Whirlpool, pool: 'P', startTickIndex: 0, ticks: [empty, t1, t2] };
    const compact = compactTickArray(array);
    expect(compact).not.toBeInstanceOf(PackedTickArray);
    expect(compact.ticks.length).toBe(3);
    expect([compact.ticks[0], compact.ticks[1], compact.ticks[2]]).toEqual([undefined, t1, t2]);
  });

  it('quotes random concentrated pools to the unit on packed tick arrays, both protocols', () => {
    const rng = new Prng(20261130);
    let compared = 0;
    let refusals = 0;
    let crossed = 0;
    const seen = { wide: 0, orders: 0, nanIndex: 0 };
    for (let s = 0; s < 300; s++) {
      const dex = s % 2 === 0 ? Dex.Whirlpool : Dex.Clmm;
      const { pool, tickArrays } = randomClPool(rng, dex);
      const given: SwapContext = { tickArrays };
      const compact = compactSwapContext(given);
      const packed = compact.tickArrays!;
      expect(packed.every((a) => a instanceof PackedTickArray)).toBe(true);
      for (const a of packed as PackedTickArray[]) {
        if (a.wide) seen.wide++;
        if (a.hasLimitOrders) seen.orders++;
      }
      if (tickArrays.some((a) => a.ticks.some((t) => Number.isNaN(t.index)))) seen.nanIndex++;
      for (let i = 0; i < 30; i++) {
        const req = randomClRequest(rng, pool);
        const expected = quoteSwap(pool, req, given);
        expect(quoteSwap(pool, req, compact), `scenario ${s} ${dex} ${req.aToB} ${req.mode} ${req.amount}`).toEqual(expected);
        compared++;
        if (!expected.ok) refusals++;
        else if (expected.liquidityAfter !== pool.liquidity) crossed++;
      }
    }
    expect(refusals).toBeGreaterThan(0);
    expect(crossed).toBeGreaterThan(compared / 20);
    expect(seen.wide).toBeGreaterThan(0);
    expect(seen.orders).toBeGreaterThan(0);
    expect(seen.nanIndex).toBeGreaterThan(0);
  });
});
