import { describe, expect, it } from 'vitest';

import { ErrorCode, isTpError } from '../errors.js';
import { quoteConstantProduct } from './amm/constant-product.js';
import { quoteClmm } from './clmm/clmm-swap.js';
import { quoteDlmm } from './dlmm/index.js';
import { randomScenario } from './dlmm/testing/random-pools.js';
import { directionFor, quoteSwap } from './quote.js';
import { Prng } from './testing/prng.js';
import { Dex, SwapMode, type AmmPool, type ConcentratedPool, type SwapRequest } from './types.js';
import { quoteWhirlpool } from './whirlpool/whirlpool-swap.js';

const amm: AmmPool = {
  dex: Dex.Amm,
  tokenA: 'A',
  tokenB: 'B',
  status: 1n,
  reserveA: 10n ** 12n,
  reserveB: 3n * 10n ** 12n,
  feeNumerator: 25n,
  feeDenominator: 10_000n,
};
const cl = (dex: ConcentratedPool['dex']): ConcentratedPool => ({
  dex,
  tokenA: 'A',
  tokenB: 'B',
  sqrtPrice: 1n << 64n,
  tick: 5,
  tickSpacing: 64,
  liquidity: 10n ** 15n,
  feeRate: 3000,
  vaultA: 'va',
  vaultB: 'vb',
  feeOn: 0,
});

describe('quoteSwap', () => {
  it('sends each pool to its protocol math', () => {
    const req: SwapRequest = { aToB: false, mode: SwapMode.ExactIn, amount: 1_000_000n };
    expect(quoteSwap(amm, req)).toEqual(quoteConstantProduct(amm, req));
    expect(quoteSwap(cl(Dex.Whirlpool), req)).toEqual(quoteWhirlpool(cl(Dex.Whirlpool), req));
    expect(quoteSwap(cl(Dex.Clmm), req)).toEqual(quoteClmm(cl(Dex.Clmm), req));
    // The protocols differ (tick math, limits): the two CL answers need not agree, but both quote.
    expect(quoteSwap(cl(Dex.Clmm), req).ok).toBe(true);
    const scenario = randomScenario(new Prng(3));
    const ctx = { binArrays: scenario.binArrays, nowSeconds: scenario.nowSeconds };
    expect(quoteSwap(scenario.pool, req, ctx)).toEqual(quoteDlmm(scenario.pool, req, ctx));
  });
});

describe('directionFor', () => {
  it('maps the pool order of mints to a direction, and refuses mints the pool does not trade', () => {
    expect(directionFor(amm, 'A', 'B')).toBe(true);
    expect(directionFor(amm, 'B', 'A')).toBe(false);
    for (const [input, output] of [
      ['A', 'A'],
      ['A', 'C'],
      ['C', 'B'],
    ] as const) {
      try {
        directionFor(amm, input, output);
        expect.unreachable();
      } catch (err) {
        expect(isTpError(err, ErrorCode.UnknownMint)).toBe(true);
      }
    }
  });
});
