/**
 * DLMM fee rates and fee amounts (docs/wire-formats.md §5.3; the program's `LbPair::get_total_fee`,
 * `compute_fee`, `compute_fee_from_amount`), and the volatility accumulator that drives the
 * variable fee. Rates are in units of 1e-9 (`FEE_PRECISION`).
 */
import type { DlmmStaticParameters } from '../types.js';
import { BASIS_POINT_MAX, FEE_PRECISION, LIMIT_ORDER_FEE_SHARE, MAX_FEE_RATE } from './constants.js';

const BPS = BigInt(BASIS_POINT_MAX);
const VARIABLE_FEE_SCALE = 100_000_000_000n;

/** `base_factor * bin_step * 10 * 10^base_fee_power_factor`. */
export function baseFeeRate(binStep: number, params: DlmmStaticParameters): bigint {
  return BigInt(params.baseFactor) * BigInt(binStep) * 10n * 10n ** BigInt(params.baseFeePowerFactor);
}

/** `ceil(variable_fee_control * (volatility_accumulator * bin_step)^2 / 1e11)`, 0 when the control is 0. */
export function variableFeeRate(binStep: number, params: DlmmStaticParameters, volatilityAccumulator: number): bigint {
  if (params.variableFeeControl === 0) return 0n;
  const vb = BigInt(volatilityAccumulator) * BigInt(binStep);
  return (BigInt(params.variableFeeControl) * vb * vb + VARIABLE_FEE_SCALE - 1n) / VARIABLE_FEE_SCALE;
}

/** Base plus variable fee rate, capped at `MAX_FEE_RATE` (10%). */
export function totalFeeRate(binStep: number, params: DlmmStaticParameters, volatilityAccumulator: number): bigint {
  const total = baseFeeRate(binStep, params) + variableFeeRate(binStep, params, volatilityAccumulator);
  return total > MAX_FEE_RATE ? MAX_FEE_RATE : total;
}

/** Fee inside a gross amount (`compute_fee_from_amount`): `ceil(amount * rate / 1e9)`. */
export function feeFromGross(amount: bigint, rate: bigint): bigint {
  return (amount * rate + FEE_PRECISION - 1n) / FEE_PRECISION;
}

/** Fee to add on top of a net amount (`compute_fee`): `ceil(amount * rate / (1e9 - rate))`. */
export function feeOnNet(amount: bigint, rate: bigint): bigint {
  const denominator = FEE_PRECISION - rate;
  return (amount * rate + denominator - 1n) / denominator;
}

/** The protocol's part of a market-maker fee: `floor(fee * protocol_share / 10_000)`. */
export function protocolFeeOf(fee: bigint, protocolShare: number): bigint {
  return (fee * BigInt(protocolShare)) / BPS;
}

/**
 * The protocol's part of a bin's trading fee when limit orders took part of the input
 * (`split_fee`): the market makers' share `ceil(fee * mmIn / totalIn)` pays `protocol_share`;
 * of the limit orders' share, half (`LIMIT_ORDER_FEE_SHARE`) goes to the order placers and the
 * rest to the protocol. The LP fee is the trading fee minus this.
 */
export function protocolFeeOfSplit(tradingFee: bigint, protocolShare: number, mmAmountIn: bigint, totalAmountIn: bigint): bigint {
  if (totalAmountIn === 0n || tradingFee === 0n) return 0n;
  if (mmAmountIn === totalAmountIn) return protocolFeeOf(tradingFee, protocolShare);
  const mmFee = (tradingFee * mmAmountIn + totalAmountIn - 1n) / totalAmountIn;
  const limitOrderFee = tradingFee - mmFee;
  const limitOrderProtocolFee = limitOrderFee - (limitOrderFee * LIMIT_ORDER_FEE_SHARE) / BPS;
  return limitOrderProtocolFee + protocolFeeOf(mmFee, protocolShare);
}

/** The volatility state one swap works on (`VariableParameters` without the timestamp). */
export interface VolatilityState {
  volatilityAccumulator: number;
  volatilityReference: number;
  indexReference: number;
}

/**
 * `update_references`, once per swap before the first bin: if at least `filter_period` seconds
 * passed since the last update, the reference moves to the active bin and the reference volatility
 * decays (`accumulator * reduction_factor / 10_000` inside `decay_period`, 0 after). Mutates `state`.
 */
export function updateReferences(
  state: VolatilityState,
  params: DlmmStaticParameters,
  activeId: number,
  lastUpdateTimestamp: bigint,
  nowSeconds: bigint,
): void {
  const elapsed = nowSeconds - lastUpdateTimestamp;
  if (elapsed < BigInt(params.filterPeriod)) return;
  state.indexReference = activeId;
  state.volatilityReference =
    elapsed < BigInt(params.decayPeriod)
      ? Math.floor((state.volatilityAccumulator * params.reductionFactor) / BASIS_POINT_MAX)
      : 0;
}

/**
 * `update_volatility_accumulator`, before swapping in each bin: the reference volatility plus
 * 10_000 per bin between the reference index and `binId`, capped at `max_volatility_accumulator`.
 */
export function volatilityAccumulatorAt(
  volatilityReference: number,
  indexReference: number,
  binId: number,
  maxVolatilityAccumulator: number,
): number {
  const accumulator = volatilityReference + Math.abs(indexReference - binId) * BASIS_POINT_MAX;
  return accumulator < maxVolatilityAccumulator ? accumulator : maxVolatilityAccumulator;
}
