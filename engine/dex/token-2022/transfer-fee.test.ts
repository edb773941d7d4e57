/**
 * The transfer-fee math against two references on seeded random fees and amounts:
 * whirlpools-core (`tryApplyTransferFee`, `tryReverseApplyTransferFee`, the Rust core compiled to
 * wasm) and @solana/spl-token (`calculateFee`, `calculateEpochFee`, `getEpochFee`); plus the
 * program's own edge cases (transfer_fee/mod.rs tests) and the properties of the inverse.
 */
import { tryApplyTransferFee, tryReverseApplyTransferFee } from '@orca-so/whirlpools-core';
import { calculateEpochFee as splCalculateEpochFee, calculateFee as splCalculateFee, getEpochFee as splGetEpochFee } from '@solana/spl-token';
import { PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';

import { Prng } from '../testing/prng.js';
import {
  calculateEpochFee,
  calculateFee,
  calculateInverseEpochFee,
  calculateInverseFee,
  calculatePostFeeAmount,
  calculatePreFeeAmount,
  epochFee,
  type TransferFee,
  type TransferFeeConfig,
} from './transfer-fee.js';

const U64_MAX = (1n << 64n) - 1n;

function randomFee(rng: Prng): TransferFee {
  const bps = rng.pick([0, 1, 2, 7, 25, 50, 100, 150, 333, 1000, 2500, 5000, 9999, 10_000, rng.int(0, 10_000)]);
  const maximumFee = rng.chance(0.2) ? U64_MAX : rng.chance(0.1) ? 0n : rng.logBig(1, 64);
  return { epoch: BigInt(rng.int(0, 1000)), maximumFee, transferFeeBasisPoints: bps };
}

function randomAmount(rng: Prng): bigint {
  if (rng.chance(0.05)) return rng.pick([0n, 1n, 2n, 9_999n, 10_000n, 10_001n, U64_MAX, U64_MAX - 1n]);
  return rng.logBig(1, 64);
}

/** whirlpools-core's answer, or 'error' where it refuses. */
function orca(fn: () => bigint): bigint | 'error' {
  try {
    return fn();
  } catch {
    return 'error';
  }
}

describe('transfer fees against whirlpools-core and @solana/spl-token', () => {
  it('takes the same fee as both on random fees and amounts', () => {
    const rng = new Prng(0xfee5);
    let capped = 0;
    for (let i = 0; i < 20_000; i++) {
      const fee = randomFee(rng);
      const amount = randomAmount(rng);
      const ours = calculateFee(fee, amount);
      expect(ours, `${fee.transferFeeBasisPoints} bps max ${fee.maximumFee} amount ${amount}`).toBe(splCalculateFee(fee, amount));
      expect(amount - ours).toBe(tryApplyTransferFee(amount, { feeBps: fee.transferFeeBasisPoints, maxFee: fee.maximumFee }));
      expect(calculatePostFeeAmount(fee, amount)).toBe(amount - ours);
      if (ours === fee.maximumFee && ours > 0n) capped++;
    }
    expect(capped).toBeGreaterThan(500);
  });

  it('finds the same pre-fee amount as tryReverseApplyTransferFee, the smallest that delivers the amount', () => {
    const rng = new Prng(0x1e5e);
    let overflow = 0;
    let exact = 0;
    for (let i = 0; i < 20_000; i++) {
      const fee = randomFee(rng);
      const post = randomAmount(rng);
      const pre = calculatePreFeeAmount(fee, post);
      const label = `${fee.transferFeeBasisPoints} bps max ${fee.maximumFee} post ${post}`;
      const reference = orca(() => tryReverseApplyTransferFee(post, { feeBps: fee.transferFeeBasisPoints, maxFee: fee.maximumFee }));
      if (pre === undefined) {
        expect(reference, label).toBe('error');
        expect(calculateInverseFee(fee, post)).toBeUndefined();
        overflow++;
        continue;
      }
      expect(pre, label).toBe(reference);
      // The program's property: sending `pre` delivers exactly `post`, and its fee is the inverse fee.
      expect(pre - calculateFee(fee, pre), label).toBe(post);
      expect(calculateInverseFee(fee, post), label).toBe(pre - post);
      // Nothing smaller delivers it.
      if (pre > 0n) expect(pre - 1n - calculateFee(fee, pre - 1n), label).toBeLessThan(post);
      exact++;
    }
    expect(overflow).toBeGreaterThan(50);
    expect(exact).toBeGreaterThan(15_000);
  });

  it('keeps the program\'s edge cases', () => {
    const one = 10_000n;
    const fee1 = { epoch: 0n, maximumFee: 5_000n, transferFeeBasisPoints: 1 };
    // calculate_fee_max / _min
    expect(calculateFee(fee1, U64_MAX)).toBe(5_000n);
    expect(calculateFee(fee1, 5_000n * one - 1n)).toBe(5_000n);
    expect([1n, 2n, one].map((a) => calculateFee(fee1, a))).toEqual([1n, 1n, 1n]);
    expect(calculateFee(fee1, one + 1n)).toBe(2n);
    expect(calculateFee(fee1, 0n)).toBe(0n);
    // calculate_fee_zero: no rate, or 100 % with no maximum
    expect(calculateFee({ epoch: 0n, maximumFee: U64_MAX, transferFeeBasisPoints: 0 }, U64_MAX)).toBe(0n);
    expect(calculateFee({ epoch: 0n, maximumFee: 0n, transferFeeBasisPoints: 10_000 }, U64_MAX)).toBe(0n);
    // calculate_fee_exact_out_max / _min
    expect(calculateInverseFee(fee1, U64_MAX - 5_000n)).toBe(5_000n);
    expect(calculateInverseFee(fee1, 5_000n * one - 5_000n + 1n)).toBe(5_000n);
    expect([1n, 2n, one - 1n].map((a) => calculateInverseFee(fee1, a))).toEqual([1n, 1n, 1n]);
    expect(calculateInverseFee(fee1, one)).toBe(2n);
    expect(calculateInverseFee(fee1, 0n)).toBe(0n);
    // calculate_pre_fee_amount_edge_cases: 100 % costs the maximum on top; no rate costs nothing
    const full = { epoch: 0n, maximumFee: 5_000n, transferFeeBasisPoints: 10_000 };
    expect(calculatePreFeeAmount(full, 0n)).toBe(0n);
    expect(calculatePreFeeAmount(full, 1n)).toBe(5_001n);
    expect(calculateFee(full, 5_001n)).toBe(5_000n);
    expect(calculatePreFeeAmount({ ...full, transferFeeBasisPoints: 0 }, 1n)).toBe(1n);
    // 10 % of 10 and of 11 are both 1 after rounding up... 10 → 9 and 11 → 9: the smaller wins.
    expect(calculatePreFeeAmount({ epoch: 0n, maximumFee: U64_MAX, transferFeeBasisPoints: 1000 }, 9n)).toBe(10n);
    expect(calculatePreFeeAmount(full, U64_MAX)).toBeUndefined();
  });

  it('uses the older fee before the newer one\'s epoch and the newer from it on, as spl-token does', () => {
    const config: TransferFeeConfig = {
      transferFeeConfigAuthority: null,
      withdrawWithheldAuthority: null,
      withheldAmount: 0n,
      olderTransferFee: { epoch: 1n, maximumFee: 10n, transferFeeBasisPoints: 100 },
      newerTransferFee: { epoch: 100n, maximumFee: 5_000n, transferFeeBasisPoints: 1 },
    };
    const spl = { ...config, transferFeeConfigAuthority: PublicKey.default, withdrawWithheldAuthority: PublicKey.default };
    for (const epoch of [0n, 1n, 2n, 99n, 100n, 101n, U64_MAX]) {
      expect(epochFee(config, epoch)).toEqual(splGetEpochFee(spl, epoch));
      for (const amount of [1n, 999n, 1_000n, 10_001n, 50_000_000n]) {
        expect(calculateEpochFee(config, epoch, amount)).toBe(splCalculateEpochFee(spl, epoch, amount));
        expect(calculateInverseEpochFee(config, epoch, amount)).toBe(calculateInverseFee(epochFee(config, epoch), amount));
      }
    }
    expect(epochFee(config, 99n)).toBe(config.olderTransferFee);
    expect(epochFee(config, 100n)).toBe(config.newerTransferFee);
  });
});
