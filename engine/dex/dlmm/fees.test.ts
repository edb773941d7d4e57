import { describe, expect, it } from 'vitest';

import type { DlmmStaticParameters } from '../types.js';
import {
  baseFeeRate,
  feeFromGross,
  feeOnNet,
  protocolFeeOf,
  protocolFeeOfSplit,
  totalFeeRate,
  updateReferences,
  variableFeeRate,
  volatilityAccumulatorAt,
  type VolatilityState,
} from './fees.js';
import { big, bn, dlmmSdk, type SdkVariableParameters } from './testing/meteora-sdk.js';
import { BIN_STEPS, Prng } from './testing/random-pools.js';

function randomParams(rng: Prng): DlmmStaticParameters {
  return {
    baseFactor: rng.int(0, 65_535),
    filterPeriod: rng.int(0, 300),
    decayPeriod: rng.int(0, 1_200),
    reductionFactor: rng.int(0, 10_000),
    variableFeeControl: rng.chance(0.2) ? 0 : rng.int(1, 2_000_000),
    maxVolatilityAccumulator: rng.int(0, 1_000_000),
    minBinId: -443_636,
    maxBinId: 443_636,
    protocolShare: rng.int(0, 10_000),
    baseFeePowerFactor: rng.int(0, 3),
    functionType: 0,
    collectFeeMode: 0,
  };
}

describe('fee rates', () => {
  it('match the worked example of reference 5.3', () => {
    // bin step 10, base factor 10_000: 10_000 * 10 * 10 = 1_000_000 = 0.1%.
    const params = { ...randomParams(new Prng(1)), baseFactor: 10_000, baseFeePowerFactor: 0, variableFeeControl: 40_000 };
    expect(baseFeeRate(10, params)).toBe(1_000_000n);
    // variable: ceil(40_000 * (30_000 * 10)^2 / 1e11) = 36_000
    expect(variableFeeRate(10, params, 30_000)).toBe(36_000n);
    expect(totalFeeRate(10, params, 30_000)).toBe(1_036_000n);
    expect(totalFeeRate(400, { ...params, baseFactor: 65_535, baseFeePowerFactor: 2 }, 0)).toBe(100_000_000n);
  });

  it('equal the SDK getBaseFee, getVariableFee and getTotalFee', () => {
    const sdk = dlmmSdk();
    const rng = new Prng(2);
    for (let i = 0; i < 2_000; i++) {
      const binStep = rng.pick(BIN_STEPS);
      const params = randomParams(rng);
      const v = { volatilityAccumulator: rng.int(0, params.maxVolatilityAccumulator) };
      expect(baseFeeRate(binStep, params)).toBe(big(sdk.getBaseFee(binStep, params)));
      expect(variableFeeRate(binStep, params, v.volatilityAccumulator)).toBe(big(sdk.getVariableFee(binStep, params, v)));
      expect(totalFeeRate(binStep, params, v.volatilityAccumulator)).toBe(big(sdk.getTotalFee(binStep, params, v)));
    }
  });
});

describe('fee amounts', () => {
  it('equal the SDK computeFee (on a net amount) and computeFeeFromAmount (inside a gross one)', () => {
    const sdk = dlmmSdk();
    const rng = new Prng(3);
    for (let i = 0; i < 2_000; i++) {
      const binStep = rng.pick(BIN_STEPS);
      const params = randomParams(rng);
      const v = { volatilityAccumulator: rng.int(0, params.maxVolatilityAccumulator) };
      const rate = totalFeeRate(binStep, params, v.volatilityAccumulator);
      const amount = rng.chance(0.05) ? 0n : rng.logBig(1, 64);
      expect(feeOnNet(amount, rate)).toBe(big(sdk.computeFee(binStep, params, v, bn(amount))));
      expect(feeFromGross(amount, rate)).toBe(big(sdk.computeFeeFromAmount(binStep, params, v, bn(amount))));
      const fee = feeFromGross(amount, rate);
      expect(protocolFeeOf(fee, params.protocolShare)).toBe(big(sdk.computeProtocolFee(bn(fee), params)));
    }
  });

  it('round up in the pool favour', () => {
    expect(feeFromGross(1n, 1n)).toBe(1n);
    expect(feeFromGross(999n, 1_000_000n)).toBe(1n);
    expect(feeFromGross(1_000n, 1_000_000n)).toBe(1n);
    expect(feeFromGross(1_001n, 1_000_000n)).toBe(2n);
    // net 999: 999 * 1e6 / (1e9 - 1e6) = 1.0000..., rounded up to 2
    expect(feeOnNet(999n, 1_000_000n)).toBe(1n);
    expect(feeOnNet(1_000n, 1_000_000n)).toBe(2n);
  });

  it('split the protocol share as the SDK splitFee does when limit orders took part', () => {
    const sdk = dlmmSdk();
    const rng = new Prng(4);
    for (let i = 0; i < 2_000; i++) {
      const total = rng.chance(0.02) ? 0n : rng.logBig(1, 60);
      const mm = total === 0n || rng.chance(0.3) ? total : rng.bits(64) % (total + 1n);
      const tradingFee = rng.chance(0.05) ? 0n : rng.logBig(1, 50);
      const share = rng.int(0, 10_000);
      const split = sdk.splitFee(bn(tradingFee), bn(share), bn(mm), bn(total));
      expect(protocolFeeOfSplit(tradingFee, share, mm, total)).toBe(big(split.protocolFee));
      if (total !== 0n) expect(tradingFee - protocolFeeOfSplit(tradingFee, share, mm, total)).toBe(big(split.fee));
    }
  });
});

describe('volatility', () => {
  it('updates the references once per swap as the SDK updateReference does', () => {
    const sdk = dlmmSdk();
    const rng = new Prng(5);
    for (let i = 0; i < 2_000; i++) {
      const params = randomParams(rng);
      const last = 1_700_000_000n + BigInt(rng.int(0, 1_000_000));
      const now = last + BigInt(rng.pick([0, rng.int(-10, params.filterPeriod + 2), rng.int(0, params.decayPeriod + 5), rng.int(0, 100_000)]));
      const activeId = rng.int(-100_000, 100_000);
      const state: VolatilityState = {
        volatilityAccumulator: rng.int(0, 1_000_000),
        volatilityReference: rng.int(0, 1_000_000),
        indexReference: activeId + rng.int(-500, 500),
      };
      const v: SdkVariableParameters = { ...state, lastUpdateTimestamp: bn(last) };
      updateReferences(state, params, activeId, last, now);
      sdk.updateReference(activeId, v, params, Number(now));
      expect(state.indexReference).toBe(v.indexReference);
      expect(state.volatilityReference).toBe(v.volatilityReference);

      const binId = activeId + rng.int(-300, 300);
      sdk.updateVolatilityAccumulator(v, params, binId);
      expect(volatilityAccumulatorAt(state.volatilityReference, state.indexReference, binId, params.maxVolatilityAccumulator)).toBe(v.volatilityAccumulator);
    }
  });

  it('decays inside the decay window, resets after it, and holds within the filter period', () => {
    const params = { ...randomParams(new Prng(6)), filterPeriod: 30, decayPeriod: 600, reductionFactor: 5_000 };
    const fresh = (): VolatilityState => ({ volatilityAccumulator: 40_000, volatilityReference: 7, indexReference: 3 });
    const held = fresh();
    updateReferences(held, params, 100, 1_000n, 1_029n);
    expect(held).toEqual(fresh());
    const decayed = fresh();
    updateReferences(decayed, params, 100, 1_000n, 1_030n);
    expect(decayed).toEqual({ volatilityAccumulator: 40_000, volatilityReference: 20_000, indexReference: 100 });
    const reset = fresh();
    updateReferences(reset, params, 100, 1_000n, 1_600n);
    expect(reset.volatilityReference).toBe(0);
    expect(volatilityAccumulatorAt(20_000, 100, 97, 350_000)).toBe(50_000);
    expect(volatilityAccumulatorAt(20_000, 100, 0, 350_000)).toBe(350_000);
  });
});
