/**
 * Raydium CLMM dynamic fee: a volatility fee on top of the AmmConfig trade fee, for pools whose
 * `dynamic_fee_info` is set (SDK libraries/{swapMath,pool}.ts: SwapState, DynamicFeeInfo):
 *
 * - once per swap, the reference is refreshed from the time since `last_update_timestamp`:
 *   below `filter_period` nothing changes; below `decay_period` the reference index becomes the
 *   current tick-spacing index and volatility_reference = volatility_accumulator *
 *   reduction_factor / 10_000; after that the reference resets to 0;
 * - before each step, volatility_accumulator = min(volatility_reference + |reference index -
 *   tick-spacing index| * 10_000, max_volatility_accumulator);
 * - fee = base + min(ceil(dynamic_fee_control * (accumulator * tick_spacing)^2 / (100_000 *
 *   10_000^2)), 100_000), capped at 100_000 (10%);
 * - while the accumulator is below its maximum and there is liquidity, a step never crosses a
 *   tick-spacing boundary, so the fee is recomputed for each spacing the price moves through.
 */
import type { VariableFee } from '../concentrated/swap-loop.js';
import { MAX_TICK, MIN_TICK, raydiumSqrtPriceAtTick } from '../concentrated/tick-math.js';
import type { ClmmDynamicFee } from '../types.js';

const VOLATILITY_ACCUMULATOR_SCALE = 10_000;
const REDUCTION_FACTOR_DENOMINATOR = 10_000;
const DYNAMIC_FEE_CONTROL_DENOMINATOR = 100_000n;
const MAX_FEE_RATE = 100_000;
const DYNAMIC_FEE_DENOMINATOR = DYNAMIC_FEE_CONTROL_DENOMINATOR * 10_000n * 10_000n;

function floorDiv(a: number, b: number): number {
  return Math.floor(a / b);
}

/** The dynamic fee state of one swap (a working copy: the pool's own record is not changed). */
export class ClmmDynamicFeeState implements VariableFee {
  skipped = true;
  private volatilityAccumulator: number;
  private volatilityReference: number;
  private indexReference: number;
  private tickSpacingIndex: number;

  constructor(
    private readonly info: ClmmDynamicFee,
    tick: number,
    private readonly tickSpacing: number,
    nowSeconds: bigint,
  ) {
    this.volatilityAccumulator = info.volatilityAccumulator;
    this.volatilityReference = info.volatilityReference;
    this.indexReference = info.tickSpacingIndexReference;
    this.tickSpacingIndex = floorDiv(tick, tickSpacing);
    const elapsed = nowSeconds - info.lastUpdateTimestamp;
    if (elapsed < BigInt(info.filterPeriod)) return;
    this.indexReference = this.tickSpacingIndex;
    this.volatilityReference =
      elapsed < BigInt(info.decayPeriod)
        ? Math.floor((this.volatilityAccumulator * info.reductionFactor) / REDUCTION_FACTOR_DENOMINATOR)
        : 0;
  }

  private updateVolatilityAccumulator(): void {
    const delta = Math.abs(this.indexReference - this.tickSpacingIndex);
    const accumulator = this.volatilityReference + delta * VOLATILITY_ACCUMULATOR_SCALE;
    this.volatilityAccumulator = Math.min(accumulator, this.info.maxVolatilityAccumulator);
  }

  beforeStep(baseFeeRate: number): number {
    this.updateVolatilityAccumulator();
    const crossed = BigInt(this.volatilityAccumulator) * BigInt(this.tickSpacing);
    const product = BigInt(this.info.dynamicFeeControl) * crossed * crossed;
    let dynamic = product / DYNAMIC_FEE_DENOMINATOR;
    if (dynamic * DYNAMIC_FEE_DENOMINATOR !== product) dynamic += 1n;
    const dynamicRate = dynamic > BigInt(MAX_FEE_RATE) ? MAX_FEE_RATE : Number(dynamic);
    return Math.min(MAX_FEE_RATE, baseFeeRate + dynamicRate);
  }

  boundedTarget(target: bigint, liquidity: bigint, aToB: boolean): bigint {
    if (liquidity === 0n || this.volatilityAccumulator === this.info.maxVolatilityAccumulator) {
      this.skipped = true;
      return target;
    }
    this.skipped = false;
    const ts = this.tickSpacing;
    const boundary = aToB ? this.tickSpacingIndex * ts : (this.tickSpacingIndex + 1) * ts;
    const bound = raydiumSqrtPriceAtTick(boundary < MIN_TICK ? MIN_TICK : boundary > MAX_TICK ? MAX_TICK : boundary);
    if (aToB) return bound > target ? bound : target;
    return bound < target ? bound : target;
  }

  afterStep(sqrtPrice: bigint, nextTickSqrtPrice: bigint, nextTick: number, tick: number, aToB: boolean): void {
    if (this.skipped) {
      const tickIndex = sqrtPrice === nextTickSqrtPrice ? nextTick : tick;
      let index = floorDiv(tickIndex, this.tickSpacing);
      if (!aToB && tickIndex % this.tickSpacing === 0) index -= 1;
      this.tickSpacingIndex = index;
      if (this.volatilityAccumulator !== this.info.maxVolatilityAccumulator) this.updateVolatilityAccumulator();
    }
    this.tickSpacingIndex += aToB ? -1 : 1;
  }
}
