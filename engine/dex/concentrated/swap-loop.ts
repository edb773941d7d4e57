/**
 * The multi-tick swap of both concentrated-liquidity protocols: step toward the next initialized
 * tick (or the price limit), cross it, repeat until the amount is used up.
 *
 * The loop is Whirlpool `compute_swap` (rust-sdk/core/src/quote/swap.rs) and Raydium
 * `swap_internal` (SDK swapInternal): the same sequence of steps, crossings and tick updates. What
 * differs per protocol comes in through `ClProtocol` (tick math, price limits, array size) and the
 * options (fee on input or output, Raydium's dynamic fee, which adds inner steps bounded by tick
 * spacing). Where the next initialized tick lies is the navigator's business (tick-navigator.ts).
 */
import {
  SwapFailure,
  SwapMode,
  type ConcentratedPool,
  type SwapRequest,
  type SwapQuote,
  type SwapResult,
  type TickArray,
} from '../types.js';
import { clPriceImpact } from '../price-impact.js';
import { refuse } from '../swap-result.js';
import { U64_MAX } from './sqrt-price-math.js';
import { step, swapStepFeeOnInput, swapStepFeeOnOutput } from './swap-step.js';
import { NextTickKind, TickNavigator } from './tick-navigator.js';

/** What differs between the two protocols' math. */
export interface ClProtocol {
  readonly dex: ConcentratedPool['dex'];
  readonly name: string;
  readonly ticksPerArray: number;
  /** Price limit of a swap that may run as far as it likes, per direction. */
  readonly sqrtPriceLimitAToB: bigint;
  readonly sqrtPriceLimitBToA: bigint;
  readonly sqrtPriceAtTick: (tick: number) => bigint;
  readonly tickAtSqrtPrice: (sqrtPrice: bigint) => number;
  /** The program fails when token-A intermediates pass 256 bits (Whirlpool; sqrt-price-math.ts). */
  readonly wide256: boolean;
}

/**
 * A fee that changes within a swap (Raydium dynamic fee). Called in the order of the protocol:
 * `beforeStep` then `boundedTarget` before each inner step, `afterStep` after it.
 */
export interface VariableFee {
  /** Updates the volatility and returns the total fee rate (millionths) of the next step. */
  beforeStep(baseFeeRate: number): number;
  /** The step target, possibly moved closer to the next tick-spacing boundary; sets `skipped`. */
  boundedTarget(target: bigint, liquidity: bigint, aToB: boolean): bigint;
  /** Whether the last `boundedTarget` left the target unchanged. */
  readonly skipped: boolean;
  afterStep(sqrtPrice: bigint, nextTickSqrtPrice: bigint, nextTick: number, tick: number, aToB: boolean): void;
}

export interface ClSwapOptions {
  feeRate: number;
  /** Fee taken from the input token (Whirlpool always; Raydium unless fee_on says otherwise). */
  feeOnInput: boolean;
  variableFee?: VariableFee | undefined;
  tickArrays?: readonly TickArray[] | undefined;
  /** Raydium tick_array_bitmap: lets the navigator skip arrays proven empty. */
  tickArrayBitmap?: readonly bigint[] | undefined;
}

const NO_ARRAYS: readonly TickArray[] = [];

/**
 * Quotes a swap on a concentrated-liquidity pool. The caller has validated the amount (> 0,
 * <= u64) and the pool (enabled, fee rate known).
 */
export function swapConcentrated(
  protocol: ClProtocol,
  pool: ConcentratedPool,
  req: SwapRequest,
  options: ClSwapOptions,
): SwapResult {
  const aToB = req.aToB;
  const exactIn = req.mode === SwapMode.ExactIn;
  const feeOnInput = options.feeOnInput;
  const variableFee = options.variableFee;
  const baseFeeRate = options.feeRate;
  const baseFee = BigInt(baseFeeRate);
  const limit = aToB ? protocol.sqrtPriceLimitAToB : protocol.sqrtPriceLimitBToA;
  const navigator = new TickNavigator(
    protocol.dex,
    pool.address,
    pool.tickSpacing,
    protocol.ticksPerArray,
    options.tickArrays ?? NO_ARRAYS,
    aToB,
    options.tickArrayBitmap,
  );

  let remaining = req.amount;
  let calculated = 0n;
  let feeTotal = 0n;
  let price = pool.sqrtPrice;
  let tick = pool.tick;
  let liquidity = pool.liquidity;

  if (aToB ? price < limit : price > limit) {
    return refuse(SwapFailure.InsufficientLiquidity, `${protocol.name}: pool price is beyond the price limit`);
  }

  while (remaining > 0n && price !== limit) {
    const kind = navigator.next(tick);
    if (kind === NextTickKind.NoLiquidity) {
      return refuse(
        SwapFailure.InsufficientLiquidity,
        `${protocol.name}: no initialized tick left ${aToB ? 'below' : 'above'} tick ${tick}`,
      );
    }
    const nextTick = navigator.tick;
    const nextTickPrice = protocol.sqrtPriceAtTick(nextTick);
    const target = aToB ? (nextTickPrice > limit ? nextTickPrice : limit) : nextTickPrice < limit ? nextTickPrice : limit;

    for (;;) {
      let feeRate = baseFeeRate;
      let stepTarget = target;
      if (variableFee !== undefined) {
        feeRate = variableFee.beforeStep(baseFeeRate);
        stepTarget = variableFee.boundedTarget(target, liquidity, aToB);
      }
      let next = stepTarget;
      if (price !== stepTarget) {
        const fee = variableFee === undefined ? baseFee : BigInt(feeRate);
        const ok = feeOnInput
          ? swapStepFeeOnInput(remaining, fee, liquidity, price, stepTarget, aToB, exactIn, protocol.wide256)
          : swapStepFeeOnOutput(remaining, fee, liquidity, price, stepTarget, aToB, exactIn);
        if (!ok) {
          return refuse(
            SwapFailure.InsufficientLiquidity,
            `${protocol.name}: the swap exceeds the protocol's u64 amounts or price range`,
          );
        }
        next = step.nextSqrtPrice;
        feeTotal += step.fee;
        const inConsumed = feeOnInput ? step.amountIn + step.fee : step.amountIn;
        if (exactIn) {
          remaining -= inConsumed;
          calculated += step.amountOut;
        } else {
          remaining -= step.amountOut;
          calculated += inConsumed;
        }
      }

      if (next === nextTickPrice) {
        if (kind === NextTickKind.Edge && next !== limit) {
          // Reaching the edge is not enough even when the amount is used up exactly: with the
          // data beyond it the step would have aimed further, and rounding (one atom of input
          // moves a thin range a long way) can then give a different result.
          return refuse(
            SwapFailure.InsufficientLiquidityData,
            `${protocol.name}: the swap reaches tick ${nextTick}, the end of the tick data it was given (supply the tick arrays on its path)`,
          );
        }
        if (navigator.limitOrders) {
          return refuse(
            SwapFailure.InsufficientLiquidityData,
            `${protocol.name}: tick ${nextTick} holds limit orders, which tidepool does not model`,
          );
        }
        liquidity = aToB ? liquidity - navigator.liquidityNet : liquidity + navigator.liquidityNet;
        if (liquidity < 0n) {
          return refuse(
            SwapFailure.InsufficientLiquidityData,
            `${protocol.name}: tick data is inconsistent with the pool (liquidity below zero at tick ${nextTick})`,
          );
        }
        tick = aToB ? nextTick - 1 : nextTick;
      } else if (next !== price) {
        tick = protocol.tickAtSqrtPrice(next);
      }
      price = next;
      if (variableFee !== undefined) variableFee.afterStep(price, nextTickPrice, nextTick, tick, aToB);
      if (remaining === 0n || price === target) break;
    }
  }

  if (remaining > 0n) {
    return refuse(
      SwapFailure.InsufficientLiquidity,
      `${protocol.name}: the pool reaches its price limit before the swap completes`,
    );
  }
  if (calculated > U64_MAX) {
    return refuse(SwapFailure.InsufficientLiquidity, `${protocol.name}: the swap amount exceeds u64`);
  }
  const amountIn = exactIn ? req.amount : calculated;
  const amountOut = exactIn ? calculated : req.amount;
  if (amountOut === 0n) {
    return refuse(SwapFailure.ZeroAmount, `${protocol.name}: the output rounds down to zero`);
  }
  const quote: SwapQuote = {
    ok: true,
    amountIn,
    amountOut,
    fee: feeTotal,
    priceImpact: feeOnInput
      ? clPriceImpact(pool.sqrtPrice, aToB, amountOut, amountIn - feeTotal)
      : clPriceImpact(pool.sqrtPrice, aToB, amountOut + feeTotal, amountIn),
    sqrtPriceAfter: price,
    tickAfter: tick,
    liquidityAfter: liquidity,
  };
  if (!feeOnInput) quote.feeInOutput = true;
  return quote;
}
