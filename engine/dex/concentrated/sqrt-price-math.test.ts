import {
  tryGetAmountDeltaA,
  tryGetAmountDeltaB,
  tryGetNextSqrtPriceFromA,
  tryGetNextSqrtPriceFromB,
} from '@orca-so/whirlpools-core';
import { LiquidityMathUtil, SqrtPriceMath, toBN } from '@raydium-io/raydium-sdk-v2';
import { describe, expect, it } from 'vitest';

import { Prng } from '../testing/prng.js';
import {
  FAILED,
  U64_MAX,
  amountDeltaA,
  amountDeltaB,
  nextSqrtPriceFromAmountA,
  nextSqrtPriceFromAmountB,
} from './sqrt-price-math.js';
import { MIN_SQRT_PRICE, WHIRLPOOL_MAX_SQRT_PRICE } from './tick-math.js';

function orca(fn: () => bigint): bigint | 'error' {
  try {
    return fn();
  } catch {
    return 'error';
  }
}

const big = (x: { toString(): string }): bigint => BigInt(x.toString());

describe('sqrt price math', () => {
  it('matches whirlpools-core and the Raydium SDK on random prices, liquidity and amounts', () => {
    const rng = new Prng(0x5971);
    for (let i = 0; i < 4000; i++) {
      const p1 = rng.bigint(MIN_SQRT_PRICE, WHIRLPOOL_MAX_SQRT_PRICE);
      const p2 = rng.chance(0.5) ? rng.bigint(MIN_SQRT_PRICE, WHIRLPOOL_MAX_SQRT_PRICE) : p1 + rng.logBig(1, 60);
      const liquidity = rng.logBig(1, 100);
      const roundUp = rng.chance(0.5);
      for (const [ours, theirs, raydium] of [
        [
          amountDeltaA(p1, p2, liquidity, roundUp, true),
          orca(() => tryGetAmountDeltaA(p1, p2, liquidity, roundUp)),
          p1 < p2 ? LiquidityMathUtil.getDeltaAmountAUnsigned : undefined,
        ],
        [
          amountDeltaB(p1, p2, liquidity, roundUp),
          orca(() => tryGetAmountDeltaB(p1, p2, liquidity, roundUp)),
          LiquidityMathUtil.getDeltaAmountBUnsigned,
        ],
      ] as const) {
        // whirlpools-core fails past u64 (and wraps silently past 256 bits, where ours fails).
        if (ours === FAILED) continue;
        expect(theirs).toBe(ours > U64_MAX ? 'error' : ours);
        if (raydium !== undefined && ours <= U64_MAX) {
          expect(big(raydium(toBN(p1.toString()), toBN(p2.toString()), toBN(liquidity.toString()), roundUp))).toBe(ours);
        }
      }
      const amount = rng.logBig(1, 64);
      const add = rng.chance(0.5);
      const nextA = nextSqrtPriceFromAmountA(p1, liquidity, amount, add, true);
      const expectedA = orca(() => tryGetNextSqrtPriceFromA(p1, liquidity, amount, add));
      if (nextA !== FAILED && nextA >= MIN_SQRT_PRICE && nextA <= WHIRLPOOL_MAX_SQRT_PRICE) {
        expect(expectedA).toBe(nextA);
        expect(
          big(SqrtPriceMath.getNextSqrtPriceFromAmountARoundingUp(toBN(p1.toString()), toBN(liquidity.toString()), toBN(amount.toString()), add)),
        ).toBe(nextA);
      }
      const nextB = nextSqrtPriceFromAmountB(p1, liquidity, amount, add);
      if (nextB !== FAILED && nextB >= MIN_SQRT_PRICE && nextB <= WHIRLPOOL_MAX_SQRT_PRICE) {
        expect(orca(() => tryGetNextSqrtPriceFromB(p1, liquidity, amount, add))).toBe(nextB);
      }
    }
  });

  it('fails where Whirlpool overflows 256 bits', () => {
    expect(amountDeltaA(MIN_SQRT_PRICE, WHIRLPOOL_MAX_SQRT_PRICE, (1n << 128n) - 1n, true, true)).toBe(FAILED);
    expect(amountDeltaA(MIN_SQRT_PRICE, WHIRLPOOL_MAX_SQRT_PRICE, (1n << 128n) - 1n, true, false) > U64_MAX).toBe(true);
    expect(nextSqrtPriceFromAmountA(WHIRLPOOL_MAX_SQRT_PRICE, 1n << 127n, 1n, true, true)).toBe(FAILED);
  });

  it('fails when an output would empty the range', () => {
    expect(nextSqrtPriceFromAmountA(1n << 64n, 1000n, 1000n, false)).toBe(FAILED);
    expect(nextSqrtPriceFromAmountB(1n << 64n, 1000n, 1000n, false)).toBe(FAILED);
    expect(nextSqrtPriceFromAmountB(1n << 64n, 1000n, 999n, false)).toBe((1n << 64n) - ((999n << 64n) + 999n) / 1000n);
  });
});
