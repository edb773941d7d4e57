import { describe, expect, it } from 'vitest';

import type { DlmmBin } from './bin-array.js';
import { binPrice } from './bin-price.js';
import { amountInForOut, amountOutForIn, newBinStep, swapExactInAtBin, swapExactOutAtBin, type BinStepParams } from './bin-swap.js';
import { U64_MAX } from './constants.js';
import { totalFeeRate } from './fees.js';
import { big, bn, dlmmSdk, type SdkRecord, type SdkStaticParameters } from './testing/meteora-sdk.js';
import { BIN_STEPS, emptyBin, Prng } from './testing/random-pools.js';

const ONE = 1n << 64n;

function bin(fields: Partial<DlmmBin>): DlmmBin {
  return { ...emptyBin(0, 10), ...fields };
}

function params(p: Partial<BinStepParams>): BinStepParams {
  return { swapForY: true, feeOnInput: true, supportLimitOrders: false, protocolShare: 0, feeRate: 1_000_000n, ...p };
}

function sdkBin(b: DlmmBin): SdkRecord {
  return {
    amountX: bn(b.amountX),
    amountY: bn(b.amountY),
    price: bn(b.price),
    openOrderAmount: bn(b.openOrderAmount),
    processedOrderRemainingAmount: bn(b.processedOrderRemainingAmount),
    limitOrderAskSide: b.limitOrderAskSide ? 1 : 0,
  };
}

describe('bin price conversions', () => {
  it('round inputs up and outputs down', () => {
    const price = (ONE * 3n) / 2n; // 1.5 Y per X
    expect(amountOutForIn(3n, price, true)).toBe(4n); // 4.5 Y
    expect(amountInForOut(4n, price, true)).toBe(3n); // 2.67 X
    expect(amountInForOut(6n, price, true)).toBe(4n); // exactly 4 X: no rounding
    expect(amountOutForIn(4n, price, false)).toBe(2n); // 2.67 X
    expect(amountInForOut(3n, price, false)).toBe(5n); // 4.5 Y
    expect(amountInForOut(4n, price, false)).toBe(6n); // exactly 6 Y
  });
});

describe('swapExactInAtBin', () => {
  it('takes the fee from the input, then swaps the rest at the bin price (hand-worked)', () => {
    const r = swapExactInAtBin(bin({ amountY: 1_000_000n, price: ONE }), ONE, 100_000n, params({ protocolShare: 2_000 }), newBinStep());
    expect(r).toEqual({ amountIn: 100_000n, amountOut: 99_900n, tradingFee: 100n, lpFee: 80n, protocolFee: 20n });
  });

  it('drains the bin and recomputes the fee on the input it used (hand-worked)', () => {
    // max input 1_000_000; fee on it: ceil(1e6 * 1e6 / (1e9 - 1e6)) = 1_002
    const r = swapExactInAtBin(bin({ amountY: 1_000_000n, price: ONE }), ONE, 2_000_000n, params({}), newBinStep());
    expect(r).toEqual({ amountIn: 1_001_002n, amountOut: 1_000_000n, tradingFee: 1_002n, lpFee: 1_002n, protocolFee: 0n });
  });

  it('cuts the fee from the output when the fee is collected in Y on an X→Y swap (hand-worked)', () => {
    const r = swapExactInAtBin(bin({ amountY: 1_000_000n, price: ONE }), ONE, 100_000n, params({ feeOnInput: false }), newBinStep());
    expect(r).toEqual({ amountIn: 100_000n, amountOut: 99_900n, tradingFee: 100n, lpFee: 100n, protocolFee: 0n });
  });

  it('fills processed then open limit orders after the market makers, when the pair supports them', () => {
    const b = bin({ amountY: 1_000n, price: ONE, processedOrderRemainingAmount: 500n, openOrderAmount: 700n, limitOrderAskSide: false });
    const p = params({ feeRate: 0n });
    expect(swapExactInAtBin(b, ONE, 5_000n, p, newBinStep()).amountOut).toBe(1_000n);
    expect(swapExactInAtBin(b, ONE, 5_000n, { ...p, supportLimitOrders: true }, newBinStep()).amountOut).toBe(2_200n);
    // Ask-side orders sell X: an X→Y swap cannot fill them.
    expect(swapExactInAtBin({ ...b, limitOrderAskSide: true }, ONE, 5_000n, { ...p, supportLimitOrders: true }, newBinStep()).amountOut).toBe(1_000n);
  });

  it('equals the SDK swapExactInQuoteAtBin on random bins, both directions and fee modes', () => {
    const sdk = dlmmSdk();
    const rng = new Prng(31);
    for (let i = 0; i < 4_000; i++) {
      const c = randomCase(rng);
      const amount = rng.chance(0.02) ? U64_MAX : rng.logBig(1, 60);
      const ours = swapExactInAtBin(c.bin, c.bin.price, amount, c.p, newBinStep());
      const ref = sdk.swapExactInQuoteAtBin(sdkBin(c.bin), c.binStep, c.s, c.v, bn(amount), c.p.swapForY, c.p.supportLimitOrders, c.p.feeOnInput);
      // The SDK reports no fee split when the fee ate the whole input (nothing was filled).
      if (big(ref.fee) + big(ref.protocolFee) !== ours.tradingFee) expect([ours.amountOut, big(ref.fee), big(ref.protocolFee)]).toEqual([0n, 0n, 0n]);
      expect([ours.amountIn, ours.amountOut, ours.lpFee, ours.protocolFee], `case ${i}`).toEqual([
        big(ref.amountIn),
        big(ref.amountOut),
        big(ref.fee),
        big(ref.protocolFee),
      ]);
    }
  });
});

describe('swapExactOutAtBin', () => {
  it('charges the input that buys the output, fee on top (hand-worked)', () => {
    // out 99_900 needs 99_900 net; fee ceil(99_900 * 1e6 / 999e6) = 100
    const r = swapExactOutAtBin(bin({ amountY: 1_000_000n, price: ONE }), ONE, 99_900n, params({}), newBinStep());
    expect(r).toEqual({ amountIn: 100_000n, amountOut: 99_900n, tradingFee: 100n, lpFee: 100n, protocolFee: 0n });
  });

  it('drains a bin that cannot pay the whole output', () => {
    const r = swapExactOutAtBin(bin({ amountY: 1_000n, price: ONE }), ONE, 5_000n, params({}), newBinStep());
    expect(r.amountOut).toBe(1_000n);
    expect(r.amountIn).toBe(1_000n + 2n); // ceil(1000 * 1e6 / 999e6) = 2
  });

  it('equals the SDK swapExactOutQuoteAtBin on random bins, both directions and fee modes', () => {
    const sdk = dlmmSdk();
    const rng = new Prng(32);
    for (let i = 0; i < 4_000; i++) {
      const c = randomCase(rng);
      const amount = rng.logBig(1, 52);
      const ours = swapExactOutAtBin(c.bin, c.bin.price, amount, c.p, newBinStep());
      const ref = sdk.swapExactOutQuoteAtBin(sdkBin(c.bin), c.binStep, c.s, c.v, bn(amount), c.p.swapForY, c.p.supportLimitOrders, c.p.feeOnInput);
      expect([ours.amountIn, ours.amountOut, ours.lpFee, ours.protocolFee], `case ${i}`).toEqual([
        big(ref.amountIn),
        big(ref.amountOut),
        big(ref.fee),
        big(ref.protocolFee),
      ]);
    }
  });
});

interface Case {
  bin: DlmmBin;
  binStep: number;
  s: SdkStaticParameters;
  v: { volatilityAccumulator: number };
  p: BinStepParams;
}

function randomCase(rng: Prng): Case {
  const binStep = rng.pick(BIN_STEPS);
  // Ids whose prices keep amounts within u64-ish ranges for this step.
  const limit = Math.min(2_000, Math.floor(Math.log(2 ** 40) / Math.log(1 + binStep / 10_000)));
  const id = rng.int(-limit, limit);
  const b = bin({
    id,
    price: binPrice(id, binStep),
    amountX: rng.chance(0.2) ? 0n : rng.logBig(1, 50),
    amountY: rng.chance(0.2) ? 0n : rng.logBig(1, 50),
    openOrderAmount: rng.chance(0.6) ? 0n : rng.logBig(1, 45),
    processedOrderRemainingAmount: rng.chance(0.6) ? 0n : rng.logBig(1, 45),
    limitOrderAskSide: rng.chance(0.5),
  });
  const s: SdkStaticParameters = {
    baseFactor: rng.int(1, 20_000),
    filterPeriod: 30,
    decayPeriod: 600,
    reductionFactor: 5_000,
    variableFeeControl: rng.chance(0.3) ? 0 : rng.int(1, 200_000),
    maxVolatilityAccumulator: 350_000,
    protocolShare: rng.int(0, 2_500),
    baseFeePowerFactor: rng.chance(0.8) ? 0 : 1,
  };
  const v = { volatilityAccumulator: rng.int(0, 350_000) };
  const full = { ...s, minBinId: 0, maxBinId: 0, functionType: 0, collectFeeMode: 0 };
  const p: BinStepParams = {
    swapForY: rng.chance(0.5),
    feeOnInput: rng.chance(0.6),
    supportLimitOrders: rng.chance(0.5),
    protocolShare: s.protocolShare,
    feeRate: totalFeeRate(binStep, full, v.volatilityAccumulator),
  };
  return { bin: b, binStep, s, v, p };
}
