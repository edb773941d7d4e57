import { describe, expect, it } from 'vitest';

import { Prng } from '../testing/prng.js';
import { MAX_TICK, MIN_TICK, raydiumSqrtPriceAtTick, whirlpoolSqrtPriceAtTick } from './tick-math.js';
import { MAX_TICK_PRICES, memoizedTickPrices, raydiumTickPrice, whirlpoolTickPrice } from './tick-price-memo.js';

describe('tick price memo', () => {
  it('answers each protocol\'s own tick price, again and again', () => {
    const rng = new Prng(0x71c7);
    for (let i = 0; i < 3_000; i++) {
      const tick = rng.int(MIN_TICK, MAX_TICK);
      for (let again = 0; again < 2; again++) {
        expect(whirlpoolTickPrice(tick)).toBe(whirlpoolSqrtPriceAtTick(tick));
        expect(raydiumTickPrice(tick)).toBe(raydiumSqrtPriceAtTick(tick));
      }
    }
  });

  it('computes a tick once, and starts over at its bound', () => {
    const computed: number[] = [];
    const price = memoizedTickPrices((tick) => {
      computed.push(tick);
      return BigInt(tick) * 3n;
    });
    expect([price(5), price(5), price(-7), price(5)]).toEqual([15n, 15n, -21n, 15n]);
    expect(computed).toEqual([5, -7]);
    for (let tick = 0; tick < MAX_TICK_PRICES + 10; tick++) price(tick);
    computed.length = 0;
    price(MAX_TICK_PRICES + 9); // kept after the map started over
    price(1); // dropped when it did
    expect(computed).toEqual([1]);
  });
});
