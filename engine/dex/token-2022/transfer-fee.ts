/**
 * Token-2022 transfer fees, computed exactly as the program computes them (token-2022
 * interface/src/extension/transfer_fee/mod.rs): the fee of the epoch, the fee on a transfer, and
 * the inverse, the amount to send so that a given amount arrives.
 *
 * A transfer of `amount` with a fee credits the destination `amount - fee` and withholds `fee` in
 * the destination account's TransferFeeAmount extension (harvested to the mint later).
 */
import { MAX_FEE_BASIS_POINTS } from './token-programs.js';

/** One `TransferFee`: in force from `epoch` on. */
export interface TransferFee {
  /** First epoch where this fee takes effect. */
  epoch: bigint;
  /** Cap on the fee of one transfer, in token atoms. */
  maximumFee: bigint;
  /** Fee in basis points of the transfer, 0..10000. */
  transferFeeBasisPoints: number;
}

/** A mint's `TransferFeeConfig` extension. */
export interface TransferFeeConfig {
  /** May set the fee; null when none. */
  transferFeeConfigAuthority: string | null;
  /** May withdraw withheld fees; null when none. */
  withdrawWithheldAuthority: string | null;
  /** Fees harvested to the mint, not yet withdrawn. */
  withheldAmount: bigint;
  /** In force while the epoch is below `newerTransferFee.epoch`. */
  olderTransferFee: TransferFee;
  /** In force from its own `epoch` on. */
  newerTransferFee: TransferFee;
}

const U64_MAX = (1n << 64n) - 1n;
const ONE_IN_BASIS_POINTS = BigInt(MAX_FEE_BASIS_POINTS);

/** The fee in force at `epoch`: the newer one from its epoch on, the older one before (`get_epoch_fee`). */
export function epochFee(config: TransferFeeConfig, epoch: bigint): TransferFee {
  return epoch >= config.newerTransferFee.epoch ? config.newerTransferFee : config.olderTransferFee;
}

/**
 * The fee withheld from a transfer of `preFeeAmount` (`calculate_fee`): ceil(amount · bps / 10000),
 * at most `maximumFee`; 0 for a zero amount or a zero rate.
 */
export function calculateFee(fee: TransferFee, preFeeAmount: bigint): bigint {
  const bps = BigInt(fee.transferFeeBasisPoints);
  if (bps === 0n || preFeeAmount === 0n) return 0n;
  const raw = (preFeeAmount * bps + ONE_IN_BASIS_POINTS - 1n) / ONE_IN_BASIS_POINTS;
  return raw < fee.maximumFee ? raw : fee.maximumFee;
}

/** What arrives of a transfer of `preFeeAmount` (`calculate_post_fee_amount`). */
export function calculatePostFeeAmount(fee: TransferFee, preFeeAmount: bigint): bigint {
  return preFeeAmount - calculateFee(fee, preFeeAmount);
}

/**
 * The smallest amount to send so that `postFeeAmount` arrives (`calculate_pre_fee_amount`), or
 * undefined when it would exceed a u64. At 100 % the fee is always the maximum, so the answer is
 * `postFeeAmount + maximumFee`; nothing at all arrives of any amount when the maximum is u64::MAX.
 */
export function calculatePreFeeAmount(fee: TransferFee, postFeeAmount: bigint): bigint | undefined {
  const bps = BigInt(fee.transferFeeBasisPoints);
  if (bps === 0n) return postFeeAmount;
  if (postFeeAmount === 0n) return 0n;
  if (bps === ONE_IN_BASIS_POINTS) return checkedU64(postFeeAmount + fee.maximumFee);
  const denominator = ONE_IN_BASIS_POINTS - bps;
  if (denominator < 0n) return undefined; // rates above 100 % have no inverse (the program rejects them)
  const rawPreFee = (postFeeAmount * ONE_IN_BASIS_POINTS + denominator - 1n) / denominator;
  if (rawPreFee - postFeeAmount >= fee.maximumFee) return checkedU64(postFeeAmount + fee.maximumFee);
  return checkedU64(rawPreFee);
}

/**
 * The fee on the transfer that delivers `postFeeAmount` (`calculate_inverse_fee`): the fee of
 * `calculatePreFeeAmount`. undefined when that amount exceeds a u64.
 */
export function calculateInverseFee(fee: TransferFee, postFeeAmount: bigint): bigint | undefined {
  const pre = calculatePreFeeAmount(fee, postFeeAmount);
  return pre === undefined ? undefined : calculateFee(fee, pre);
}

/** `calculate_epoch_fee`. */
export function calculateEpochFee(config: TransferFeeConfig, epoch: bigint, preFeeAmount: bigint): bigint {
  return calculateFee(epochFee(config, epoch), preFeeAmount);
}

/** `calculate_inverse_epoch_fee`. */
export function calculateInverseEpochFee(config: TransferFeeConfig, epoch: bigint, postFeeAmount: bigint): bigint | undefined {
  return calculateInverseFee(epochFee(config, epoch), postFeeAmount);
}

function checkedU64(value: bigint): bigint | undefined {
  return value > U64_MAX ? undefined : value;
}
