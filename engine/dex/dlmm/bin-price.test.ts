import { describe, expect, it } from 'vitest';

import { binPrice, binPriceBase, powQ64, q64ToNumber } from './bin-price.js';
import { big, bn, dlmmSdk } from './testing/meteora-sdk.js';
import { BIN_STEPS, Prng } from './testing/random-pools.js';

describe('binPrice', () => {
  it('matches the verified mainnet example: bin step 10, bin 141 is 1.001^141 = 1.15134', () => {
    const price = q64ToNumber(binPrice(141, 10));
    expect(price).toBeCloseTo(1.15134, 5);
    expect(Math.abs(price / 1.001 ** 141 - 1)).toBeLessThan(1e-12);
  });

  it('is exactly 2^64 at bin 0 and the Q64.64 base at bin 1', () => {
    expect(binPrice(0, 25)).toBe(1n << 64n);
    expect(binPrice(1, 25)).toBe(binPriceBase(25));
    expect(binPriceBase(10)).toBe((1n << 64n) + ((10n << 64n) / 10_000n));
  });

  it('prices negative ids as the inverse, with the program rounding', () => {
    const p = q64ToNumber(binPrice(-141, 10));
    expect(Math.abs(p * 1.001 ** 141 - 1)).toBeLessThan(1e-12);
  });

  it('equals the SDK getQPriceFromId to the unit for every bin step and random ids', () => {
    const sdk = dlmmSdk();
    const rng = new Prng(21);
    let checked = 0;
    for (const binStep of BIN_STEPS) {
      // Ids over the whole range the program can price for this step, ends included.
      const limit = Math.min(443_636, Math.floor(Math.log(2 ** 63) / Math.log(1 + binStep / 10_000)));
      const ids = [0, 1, -1, 69, 70, -70, -71, limit, -limit];
      for (let i = 0; i < 150; i++) ids.push(rng.int(-limit, limit));
      for (const id of ids) {
        expect(binPrice(id, binStep), `bin ${id} step ${binStep}`).toBe(big(sdk.getQPriceFromId(bn(id), bn(binStep))));
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(2_000);
  });

  it('returns 0 where the program pow fails (result truncated to zero)', () => {
    expect(binPrice(-443_636, 400)).toBe(0n);
    expect(powQ64(binPriceBase(1), 1 << 19)).toBe(0n);
  });
});
