import { describe, expect, it } from 'vitest';

import { Dex, type Tick, type TickArray } from '../types.js';
import { Prng } from '../testing/prng.js';
import { randomClPool } from '../testing/random-cl-pools.js';
import { PACKED_TICK_SLOTS_MAX, PackedTickArray } from './packed-tick-array.js';

const U64_MAX = (1n << 64n) - 1n;

function uninitialized(index: number): Tick {
  return { index, initialized: false, liquidityNet: 0n, liquidityGross: 0n };
}

function initialized(index: number, liquidityNet: bigint, liquidityGross: bigint, limitOrderAmount?: bigint): Tick {
  const t: Tick = { index, initialized: true, liquidityNet, liquidityGross };
  if (limitOrderAmount !== undefined) t.limitOrderAmount = limitOrderAmount;
  return t;
}

/** An array of `slots` ticks `spacing` apart from `start`, initialized where `values` says. */
function array(start: number, spacing: number, slots: number, values: ReadonlyMap<number, Omit<Tick, 'index' | 'initialized'>>): TickArray {
  const ticks = Array.from({ length: slots }, (_, slot) => {
    const v = values.get(slot);
    const index = start + slot * spacing;
    return v === undefined ? uninitialized(index) : initialized(index, v.liquidityNet, v.liquidityGross, v.limitOrderAmount);
  });
  return { dex: Dex.Whirlpool, pool: 'P', startTickIndex: start, ticks };
}

/** What the packed array gives back: the initialized ticks in their slots, limit orders when not zero. */
function expectedTicks(given: TickArray): (Tick | undefined)[] {
  return given.ticks.map((t) => {
    if (!t.initialized) return undefined;
    const { limitOrderAmount, ...rest } = t;
    return limitOrderAmount === undefined || limitOrderAmount === 0n ? rest : t;
  });
}

describe('PackedTickArray', () => {
  it('gives back every initialized tick of random decoded arrays, wide values, orders and NaN indexes included', () => {
    const rng = new Prng(41);
    let arrays = 0;
    let wide = 0;
    for (let s = 0; s < 200; s++) {
      for (const given of randomClPool(rng, s % 2 === 0 ? Dex.Whirlpool : Dex.Clmm).tickArrays) {
        const packed = PackedTickArray.pack(given)!;
        expect(packed).toBeInstanceOf(PackedTickArray);
        expect([packed.dex, packed.pool, packed.startTickIndex, packed.slotCount]).toEqual([given.dex, given.pool, given.startTickIndex, given.ticks.length]);
        expect(packed.initializedCount).toBe(given.ticks.filter((t) => t.initialized).length);
        expect(packed.ticks).toEqual(expectedTicks(given));
        given.ticks.forEach((t, slot) => {
          expect(packed.isInitialized(slot)).toBe(t.initialized);
          expect(packed.liquidityNetAt(slot)).toBe(t.initialized ? t.liquidityNet : 0n);
          expect(packed.liquidityGrossAt(slot)).toBe(t.initialized ? t.liquidityGross : 0n);
          expect(packed.limitOrderAmountAt(slot)).toBe(t.initialized ? (t.limitOrderAmount ?? 0n) : 0n);
        });
        if (packed.wide) wide++;
        arrays++;
      }
    }
    expect(arrays).toBeGreaterThan(300);
    expect(wide).toBeGreaterThan(0);
  });

  it('keeps the extremes of i128 nets and u128 gross exactly, narrow and wide', () => {
    const extremes = new Map([
      [0, { liquidityNet: -(1n << 127n), liquidityGross: (1n << 128n) - 1n }],
      [29, { liquidityNet: (1n << 127n) - 1n, liquidityGross: 1n << 64n }],
      [30, { liquidityNet: -(1n << 63n) - 1n, liquidityGross: 0n, limitOrderAmount: U64_MAX }],
      [87, { liquidityNet: -1n, liquidityGross: U64_MAX }],
    ]);
    const wide = array(-8800, 100, 88, extremes);
    expect(PackedTickArray.pack(wide)!.wide).toBe(true);
    expect(PackedTickArray.pack(wide)!.ticks).toEqual(expectedTicks(wide));
    const narrow = array(0, 1, 88, new Map([[5, { liquidityNet: -(1n << 63n), liquidityGross: U64_MAX }], [59, { liquidityNet: (1n << 63n) - 1n, liquidityGross: 0n }]]));
    expect(PackedTickArray.pack(narrow)!.wide).toBe(false);
    expect(PackedTickArray.pack(narrow)!.ticks).toEqual(expectedTicks(narrow));
  });

  it('finds the next initialized slot either way across the mask words', () => {
    const rng = new Prng(5);
    for (let c = 0; c < 300; c++) {
      const values = new Map<number, Omit<Tick, 'index' | 'initialized'>>();
      const density = rng.pick([0.02, 0.1, 0.5]);
      for (let slot = 0; slot < 88; slot++) if (rng.chance(density)) values.set(slot, { liquidityNet: 1n, liquidityGross: 1n });
      const packed = PackedTickArray.pack(array(0, 1, 88, values))!;
      for (let slot = 0; slot < 88; slot++) {
        let below = -1;
        for (let s = slot; s >= 0 && below < 0; s--) if (values.has(s)) below = s;
        let above = -1;
        for (let s = slot; s < 60 && above < 0; s++) if (values.has(s)) above = s;
        expect(packed.initializedAtOrBelow(slot)).toBe(below);
        expect(packed.initializedAtOrAbove(slot, 60)).toBe(above);
      }
    }
  });

  it('packs an array with no initialized tick without a buffer', () => {
    const packed = PackedTickArray.pack(array(0, 8, 60, new Map()))!;
    expect(packed.initializedCount).toBe(0);
    expect(packed.initializedAtOrBelow(59)).toBe(-1);
    expect(packed.initializedAtOrAbove(0, 60)).toBe(-1);
    expect(packed.liquidityNetAt(3)).toBe(0n);
    expect(packed.ticks).toEqual(new Array(60));
  });

  it('refuses what it cannot keep exactly', () => {
    const one = (t: Tick, slots = 2): TickArray => ({ dex: Dex.Clmm, pool: 'P', startTickIndex: 0, ticks: [uninitialized(0), t, ...Array.from({ length: slots - 2 }, (_, i) => uninitialized(i + 2))] });
    expect(PackedTickArray.pack(one(initialized(1, 1n << 127n, 1n)))).toBeUndefined();
    expect(PackedTickArray.pack(one(initialized(1, 1n, 1n << 128n)))).toBeUndefined();
    expect(PackedTickArray.pack(one(initialized(1, 1n, -1n)))).toBeUndefined();
    expect(PackedTickArray.pack(one(initialized(1, 1n, 1n, U64_MAX + 1n)))).toBeUndefined();
    expect(PackedTickArray.pack(one(initialized(1, 1n, 1n), PACKED_TICK_SLOTS_MAX + 1))).toBeUndefined();
    // Indexes off one spacing, or NaN beside a number.
    const offGrid: TickArray = { dex: Dex.Clmm, pool: 'P', startTickIndex: 0, ticks: [uninitialized(0), initialized(10, 1n, 1n), initialized(25, 1n, 1n)] };
    expect(PackedTickArray.pack(offGrid)).toBeUndefined();
    const mixed: TickArray = { dex: Dex.Whirlpool, pool: 'P', startTickIndex: 0, ticks: [initialized(NaN, 1n, 1n), initialized(10, 1n, 1n)] };
    expect(PackedTickArray.pack(mixed)).toBeUndefined();
  });

  it('gives back a lone tick in slot 0 at the start index, and returns an array already packed as it is', () => {
    const given: TickArray = { dex: Dex.Clmm, pool: 'P', startTickIndex: -600, ticks: [initialized(-600, 5n, 5n), uninitialized(-590)] };
    const packed = PackedTickArray.pack(given)!;
    expect(packed.ticks).toEqual([given.ticks[0], undefined]);
    expect(PackedTickArray.pack(packed)).toBe(packed);
  });
});
