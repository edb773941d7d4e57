import { describe, expect, it } from 'vitest';

import type { BinArray } from '../types.js';
import type { DlmmBin } from './bin-array.js';
import { U128_MAX, U64_MAX } from './constants.js';
import { PackedBinArray, PackedBinView } from './packed-bin-array.js';
import { Prng, randomScenario } from './testing/random-pools.js';

function bin(id: number, fields: Partial<DlmmBin> = {}): DlmmBin {
  return { id, amountX: 0n, amountY: 0n, price: 0n, liquiditySupply: 0n, openOrderAmount: 0n, processedOrderRemainingAmount: 0n, limitOrderAskSide: false, ...fields };
}

describe('PackedBinArray', () => {
  it('gives back every field of random decoded bin arrays, u128 halves and limit orders included', () => {
    const rng = new Prng(31);
    let arrays = 0;
    for (let s = 0; s < 40; s++) {
      for (const array of randomScenario(rng).binArrays) {
        const packed = PackedBinArray.pack(array)!;
        expect(packed.pool).toBe(array.pool);
        expect(packed.index).toBe(array.index);
        expect(packed.version).toBe(array.version);
        expect(packed.binCount).toBe(array.bins.length);
        const withOrders = array.bins.some((b) => b.openOrderAmount !== 0n || b.processedOrderRemainingAmount !== 0n || b.limitOrderAskSide);
        expect(packed.hasLimitOrders).toBe(withOrders);
        const view = new PackedBinView();
        array.bins.forEach((b, i) => {
          expect(view.moveTo(packed, i)).toBe(true);
          expect({ ...view, price: view.price, liquiditySupply: view.liquiditySupply }).toMatchObject(b);
          expect(packed.priceAt(i)).toBe(b.price);
          expect(packed.liquiditySupplyAt(i)).toBe(b.liquiditySupply);
        });
        if (withOrders) expect(packed.bins).toEqual(array.bins);
        else expect(packed.bins).toEqual(array.bins.map(({ id, amountX, amountY, price, liquiditySupply }) => ({ id, amountX, amountY, price, liquiditySupply })));
        arrays++;
      }
    }
    expect(arrays).toBeGreaterThan(100);
  });

  it('keeps the largest u64 amounts and u128 prices exactly', () => {
    const array: BinArray = { pool: 'P', index: 0n, bins: [bin(0, { amountX: U64_MAX, amountY: 1n, price: U128_MAX, liquiditySupply: 1n << 64n }), bin(1, { price: (1n << 64n) - 1n })] };
    expect(PackedBinArray.pack(array)!.bins).toEqual(array.bins.map(({ id, amountX, amountY, price, liquiditySupply }) => ({ id, amountX, amountY, price, liquiditySupply })));
  });

  it('refuses what it cannot keep exactly: no bins, gaps in the ids, values out of range', () => {
    expect(PackedBinArray.pack({ pool: 'P', index: 0n, bins: [] })).toBeUndefined();
    expect(PackedBinArray.pack({ pool: 'P', index: 0n, bins: [bin(0), bin(2)] })).toBeUndefined();
    expect(PackedBinArray.pack({ pool: 'P', index: 0n, bins: [bin(0, { amountX: U64_MAX + 1n })] })).toBeUndefined();
    expect(PackedBinArray.pack({ pool: 'P', index: 0n, bins: [bin(0, { amountY: -1n })] })).toBeUndefined();
    expect(PackedBinArray.pack({ pool: 'P', index: 0n, bins: [bin(0, { price: U128_MAX + 1n })] })).toBeUndefined();
    expect(PackedBinArray.pack({ pool: 'P', index: 0n, bins: [bin(0, { openOrderAmount: U64_MAX + 1n })] })).toBeUndefined();
  });

  it('returns an array already packed as it is', () => {
    const packed = PackedBinArray.pack({ pool: 'P', index: 0n, bins: [bin(0)] })!;
    expect(PackedBinArray.pack(packed)).toBe(packed);
  });

  it('moves the view only within the array', () => {
    const packed = PackedBinArray.pack({ pool: 'P', index: 1n, bins: [bin(70, { amountX: 5n }), bin(71, { amountY: 6n })] })!;
    const view = new PackedBinView();
    expect(view.moveTo(packed, 1)).toBe(true);
    expect(view.moveTo(packed, 2)).toBe(false);
    expect(view.moveTo(packed, -1)).toBe(false);
    expect([view.id, view.amountX, view.amountY]).toEqual([71, 0n, 6n]);
  });

  it('writes new amounts into a copy, and falls back to bin objects past u64', () => {
    const array: BinArray = { pool: 'P', index: 0n, bins: [bin(0, { amountX: 1n, price: 3n }), bin(1, { amountY: 2n, price: 4n })] };
    const packed = PackedBinArray.pack(array)!;
    const moved = packed.withAmounts([{ offset: 1, amountX: 7n, amountY: 8n }, { offset: 5, amountX: 1n, amountY: 1n }]);
    expect(moved).toBeInstanceOf(PackedBinArray);
    expect(moved.bins.map((b) => [b.id, b.amountX, b.amountY, b.price])).toEqual([[0, 1n, 0n, 3n], [1, 7n, 8n, 4n]]);
    expect(packed.amountXAt(1)).toBe(0n);
    const wide = packed.withAmounts([{ offset: 0, amountX: U64_MAX + 1n, amountY: 0n }]);
    expect(wide).not.toBeInstanceOf(PackedBinArray);
    expect(wide.bins.map((b) => [b.id, b.amountX, b.amountY, b.price])).toEqual([[0, U64_MAX + 1n, 0n, 3n], [1, 0n, 2n, 4n]]);
  });
});
