import { describe, expect, it } from 'vitest';

import { quoteClmm } from './clmm/clmm-swap.js';
import { clPriceImpact, priceImpact } from './price-impact.js';
import { Dex, SwapMode, type ConcentratedPool, type SwapQuote } from './types.js';
import { quoteWhirlpool } from './whirlpool/whirlpool-swap.js';

const Q64 = 1n << 64n;

function pool(dex: ConcentratedPool['dex'], feeOn = 0): ConcentratedPool {
  // Price 4 (sqrt 2): 4 B atoms per A atom, tick 13_863; the slot [12_000, 14_000] of tick
  // spacing 2000 holds every swap below without tick arrays.
  return {
    dex,
    tokenA: 'A',
    tokenB: 'B',
    sqrtPrice: 2n * Q64,
    tick: 13_863,
    tickSpacing: 2000,
    liquidity: 10n ** 18n,
    feeRate: 3000,
    vaultA: 'va',
    vaultB: 'vb',
    feeOn,
  };
}

describe('price impact', () => {
  it('is 1 - execution / spot, never negative', () => {
    expect(priceImpact(90n, 100n, 1n, 1n)).toBeCloseTo(0.1, 12);
    expect(priceImpact(180n, 100n, 2n, 1n)).toBeCloseTo(0.1, 12);
    expect(priceImpact(110n, 100n, 1n, 1n)).toBe(0);
    expect(priceImpact(5n, 0n, 1n, 1n)).toBe(0);
    expect(clPriceImpact(2n * Q64, true, 360n, 100n)).toBeCloseTo(0.1, 12);
    expect(clPriceImpact(2n * Q64, false, 90n, 400n)).toBeCloseTo(0.1, 12);
  });

  it('is about zero for a tiny swap and grows with its size, the fee excluded', () => {
    for (const quote of [
      (amount: bigint) => quoteWhirlpool(pool(Dex.Whirlpool), { aToB: true, mode: SwapMode.ExactIn, amount }),
      (amount: bigint) => quoteClmm(pool(Dex.Clmm), { aToB: false, mode: SwapMode.ExactIn, amount }),
      // Fee on token A only: for bToA it is cut from the output (feeInOutput).
      (amount: bigint) => quoteClmm(pool(Dex.Clmm, 1), { aToB: false, mode: SwapMode.ExactIn, amount }),
    ]) {
      const tiny = quote(10n ** 9n) as SwapQuote;
      const large = quote(10n ** 15n) as SwapQuote;
      const larger = quote(10n ** 16n) as SwapQuote;
      expect([tiny.ok, large.ok, larger.ok]).toEqual([true, true, true]);
      expect(tiny.priceImpact).toBeLessThan(1e-8);
      expect(large.priceImpact).toBeGreaterThan(1e-4);
      expect(larger.priceImpact).toBeGreaterThan(large.priceImpact);
      expect(larger.priceImpact).toBeLessThan(0.1);
    }
    expect((quoteClmm(pool(Dex.Clmm, 1), { aToB: false, mode: SwapMode.ExactIn, amount: 10n ** 9n }) as SwapQuote).feeInOutput).toBe(true);
  });
});
