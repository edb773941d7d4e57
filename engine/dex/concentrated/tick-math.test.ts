import { sqrtPriceToTickIndex, tickIndexToSqrtPrice } from '@orca-so/whirlpools-core';
import { TickUtil, toBN } from '@raydium-io/raydium-sdk-v2';
import { describe, expect, it } from 'vitest';

import { Prng } from '../testing/prng.js';
import {
  MAX_TICK,
  MIN_SQRT_PRICE,
  MIN_TICK,
  RAYDIUM_MAX_SQRT_PRICE,
  WHIRLPOOL_MAX_SQRT_PRICE,
  raydiumSqrtPriceAtTick,
  raydiumTickAtSqrtPrice,
  raydiumTickAtSqrtPriceExact,
  whirlpoolSqrtPriceAtTick,
  whirlpoolTickAtSqrtPrice,
  whirlpoolTickAtSqrtPriceExact,
} from './tick-math.js';

function raydiumSdkSqrtPrice(tick: number): bigint {
  return BigInt(TickUtil.getSqrtPriceAtTick(tick).toString());
}

function someTicks(rng: Prng): number[] {
  const ticks = [MIN_TICK, MIN_TICK + 1, -1, 0, 1, MAX_TICK - 1, MAX_TICK, -115109];
  for (let bit = 0; bit < 19; bit++) ticks.push(1 << bit, -(1 << bit), (1 << bit) - 1, -((1 << bit) - 1));
  for (let i = 0; i < 20_000; i++) ticks.push(rng.int(MIN_TICK, MAX_TICK));
  return ticks.filter((t) => t >= MIN_TICK && t <= MAX_TICK).map((t) => t + 0); // no -0
}

describe('tick math', () => {
  it('gives the price bounds of the reference at the tick bounds', () => {
    expect(whirlpoolSqrtPriceAtTick(MIN_TICK)).toBe(MIN_SQRT_PRICE);
    expect(whirlpoolSqrtPriceAtTick(MAX_TICK)).toBe(WHIRLPOOL_MAX_SQRT_PRICE);
    expect(raydiumSqrtPriceAtTick(MIN_TICK)).toBe(MIN_SQRT_PRICE);
    expect(raydiumSqrtPriceAtTick(MAX_TICK)).toBe(RAYDIUM_MAX_SQRT_PRICE);
    expect(whirlpoolSqrtPriceAtTick(0)).toBe(1n << 64n);
    expect(raydiumSqrtPriceAtTick(0)).toBe(1n << 64n);
  });

  it('matches whirlpools-core tickIndexToSqrtPrice and sqrtPriceToTickIndex', () => {
    const rng = new Prng(0x71c4);
    for (const tick of someTicks(rng)) {
      const price = whirlpoolSqrtPriceAtTick(tick);
      expect(price).toBe(tickIndexToSqrtPrice(tick));
      expect(whirlpoolTickAtSqrtPrice(price)).toBe(tick);
      if (tick < MAX_TICK) {
        const inside = rng.bigint(price, whirlpoolSqrtPriceAtTick(tick + 1) - 1n);
        expect(whirlpoolTickAtSqrtPrice(inside)).toBe(sqrtPriceToTickIndex(inside));
        expect(whirlpoolTickAtSqrtPrice(inside)).toBe(tick);
      }
      if (tick > MIN_TICK) expect(whirlpoolTickAtSqrtPrice(price - 1n)).toBe(tick - 1);
    }
  });

  it('matches the Raydium SDK TickUtil.getSqrtPriceAtTick and getTickAtSqrtPrice', () => {
    const rng = new Prng(0x71c5);
    const ticks = someTicks(rng).slice(0, 6_000);
    for (const tick of ticks) {
      const price = raydiumSqrtPriceAtTick(tick);
      expect(price).toBe(raydiumSdkSqrtPrice(tick));
      expect(raydiumTickAtSqrtPrice(price)).toBe(tick);
      if (tick < MAX_TICK) {
        const inside = rng.bigint(price, raydiumSqrtPriceAtTick(tick + 1) - 1n);
        expect(raydiumTickAtSqrtPrice(inside)).toBe(TickUtil.getTickAtSqrtPrice(toBN(inside.toString())));
      }
    }
  });

  it('places the sqrt price of the reference Whirlpool dump (tick -115109) in its tick', () => {
    // orca-so/whirlpools legacy-sdk/whirlpool/tests/preload_account/reset_position_range:
    // tick_current_index -115109, sqrt_price 58410682143245572.
    const sqrtPrice = 58410682143245572n;
    expect(whirlpoolTickAtSqrtPrice(sqrtPrice)).toBe(-115109);
    expect(sqrtPriceToTickIndex(sqrtPrice)).toBe(-115109);
    expect(whirlpoolSqrtPriceAtTick(-115109) <= sqrtPrice).toBe(true);
    expect(sqrtPrice < whirlpoolSqrtPriceAtTick(-115108)).toBe(true);
  });

  it('answers as the programs\' own inverse from its double-precision estimate, at tick prices too', () => {
    const rng = new Prng(0x5eed);
    const protocols = [
      { at: whirlpoolSqrtPriceAtTick, fast: whirlpoolTickAtSqrtPrice, exact: whirlpoolTickAtSqrtPriceExact, max: WHIRLPOOL_MAX_SQRT_PRICE },
      { at: raydiumSqrtPriceAtTick, fast: raydiumTickAtSqrtPrice, exact: raydiumTickAtSqrtPriceExact, max: RAYDIUM_MAX_SQRT_PRICE },
    ];
    const edges: number[] = [];
    for (let i = 0; i < 300; i++) edges.push(MIN_TICK + i, MAX_TICK - 1 - i);
    for (const p of protocols) {
      // Prices on and beside tick prices, where a double cannot decide: the extremes and random ticks.
      for (const tick of [...edges, ...someTicks(rng).slice(0, 5_000)]) {
        if (tick >= MAX_TICK) continue;
        const at = p.at(tick);
        for (const price of [at - 2n, at - 1n, at, at + 1n, at + 2n, p.at(tick + 1) - 1n]) {
          if (price < MIN_SQRT_PRICE || price >= p.max) continue;
          expect(p.fast(price)).toBe(p.exact(price));
        }
      }
      // Prices spread evenly in log over the whole range (each bit length, random low bits).
      const minBits = MIN_SQRT_PRICE.toString(2).length;
      const maxBits = p.max.toString(2).length;
      for (let i = 0; i < 40_000; i++) {
        const bits = rng.int(minBits, maxBits);
        const price = rng.bigint(1n << BigInt(bits - 1), (1n << BigInt(bits)) - 1n);
        if (price < MIN_SQRT_PRICE || price >= p.max) continue;
        expect(p.fast(price)).toBe(p.exact(price));
      }
    }
  });
});

