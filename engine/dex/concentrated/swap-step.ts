/**
 * One swap step inside a range of constant liquidity, from the current sqrt price toward a target
 * (the next initialized tick, the price limit, or a dynamic-fee bound).
 *
 * `swapStepFeeOnInput` is Whirlpool `compute_swap_step` (rust-sdk/core/src/quote/swap.rs), which
 * Raydium CLMM `compute_swap_step` with the fee on the input token matches step for step.
 * `swapStepFeeOnOutput` is Raydium's variant for pools whose `fee_on` puts the fee on the output
 * token (SDK SwapMathUtil.computeSwap with isFeeOnInput false).
 *
 * Results go to the shared `step` scratch record (no allocation per step). A step returns false
 * when the protocol would fail: an amount past u64, or a price the amount cannot reach.
 */
import {
  FAILED,
  U64_MAX,
  amountDeltaA,
  amountDeltaB,
  mulDivCeil,
  nextSqrtPriceFromAmountA,
  nextSqrtPriceFromAmountB,
} from './sqrt-price-math.js';

export const FEE_RATE_DENOMINATOR = 1_000_000n;

export interface SwapStep {
  /** Input token used by the step, fee excluded when the fee is on the input. */
  amountIn: bigint;
  /** Output token paid by the step, after the fee when the fee is on the output. */
  amountOut: bigint;
  /** Fee charged, in input atoms (fee on input) or output atoms (fee on output). */
  fee: bigint;
  nextSqrtPrice: bigint;
}

export const step: SwapStep = { amountIn: 0n, amountOut: 0n, fee: 0n, nextSqrtPrice: 0n };

/** Input needed between two prices (rounded up). aToB pays A, bToA pays B. FAILED on overflow. */
function deltaIn(from: bigint, to: bigint, liquidity: bigint, aToB: boolean, wide: boolean): bigint {
  return aToB ? amountDeltaA(from, to, liquidity, true, wide) : amountDeltaB(from, to, liquidity, true);
}

/** Output paid between two prices (rounded down). FAILED on overflow. */
function deltaOut(from: bigint, to: bigint, liquidity: bigint, aToB: boolean, wide: boolean): bigint {
  return aToB ? amountDeltaB(from, to, liquidity, false) : amountDeltaA(from, to, liquidity, false, wide);
}

function nextFromInput(price: bigint, liquidity: bigint, amount: bigint, aToB: boolean, wide: boolean): bigint {
  return aToB
    ? nextSqrtPriceFromAmountA(price, liquidity, amount, true, wide)
    : nextSqrtPriceFromAmountB(price, liquidity, amount, true);
}

function nextFromOutput(price: bigint, liquidity: bigint, amount: bigint, aToB: boolean, wide: boolean): bigint {
  return aToB
    ? nextSqrtPriceFromAmountB(price, liquidity, amount, false)
    : nextSqrtPriceFromAmountA(price, liquidity, amount, false, wide);
}

/** An amount the program cannot represent: FAILED (overflowed intermediate) or past u64. */
function unrepresentable(amount: bigint): boolean {
  return amount < 0n || amount > U64_MAX;
}

/**
 * Step with the fee taken from the input. `feeRate` in millionths. The fixed side is the one the
 * caller specified (input for exact in, output for exact out). `wide256`: the protocol fails when
 * token-A intermediates pass 256 bits (Whirlpool, see sqrt-price-math.ts).
 */
export function swapStepFeeOnInput(
  remaining: bigint,
  feeRate: bigint,
  liquidity: bigint,
  price: bigint,
  target: bigint,
  aToB: boolean,
  exactIn: boolean,
  wide256: boolean,
): boolean {
  const fixedToTarget = exactIn ? deltaIn(price, target, liquidity, aToB, wide256) : deltaOut(price, target, liquidity, aToB, wide256);
  if (fixedToTarget === FAILED) return false;
  // Past u64 the program takes the "target not reached" branch instead of failing.
  const fixedOverflow = fixedToTarget > U64_MAX;
  const usable = exactIn ? (remaining * (FEE_RATE_DENOMINATOR - feeRate)) / FEE_RATE_DENOMINATOR : remaining;

  let next: bigint;
  if (!fixedOverflow && fixedToTarget <= usable) {
    next = target;
  } else {
    next = exactIn ? nextFromInput(price, liquidity, usable, aToB, wide256) : nextFromOutput(price, liquidity, usable, aToB, wide256);
    if (next === FAILED) return false;
  }
  const reachedTarget = next === target;

  const unfixed = exactIn ? deltaOut(price, next, liquidity, aToB, wide256) : deltaIn(price, next, liquidity, aToB, wide256);
  if (unrepresentable(unfixed)) return false;
  let fixed = fixedToTarget;
  if (!reachedTarget || fixedOverflow) {
    fixed = exactIn ? deltaIn(price, next, liquidity, aToB, wide256) : deltaOut(price, next, liquidity, aToB, wide256);
    if (unrepresentable(fixed)) return false;
  }

  let amountIn: bigint;
  let amountOut: bigint;
  if (exactIn) {
    amountIn = fixed;
    amountOut = unfixed;
  } else {
    amountIn = unfixed;
    amountOut = fixed > remaining ? remaining : fixed;
  }

  let fee: bigint;
  if (exactIn && !reachedTarget) {
    fee = remaining - amountIn;
  } else {
    // ceil(amountIn * 1e6 / (1e6 - rate)) - amountIn = ceil(amountIn * rate / (1e6 - rate))
    fee = mulDivCeil(amountIn, feeRate, FEE_RATE_DENOMINATOR - feeRate);
    if (amountIn + fee > U64_MAX) return false;
  }

  step.amountIn = amountIn;
  step.amountOut = amountOut;
  step.fee = fee;
  step.nextSqrtPrice = next;
  return true;
}

/**
 * Raydium CLMM step with the fee taken from the output token: exact in swaps the whole input and
 * cuts ceil(out * rate / 1e6) from the output; exact out grosses the wanted output up by
 * 1e6 / (1e6 - rate) to find the price, then pays at most what remains.
 */
export function swapStepFeeOnOutput(
  remaining: bigint,
  feeRate: bigint,
  liquidity: bigint,
  price: bigint,
  target: bigint,
  aToB: boolean,
  exactIn: boolean,
): boolean {
  let next: bigint;
  let amountIn: bigint;
  let amountOut: bigint;
  if (exactIn) {
    const inToTarget = deltaIn(price, target, liquidity, aToB, false);
    if (!unrepresentable(inToTarget) && remaining >= inToTarget) {
      next = target;
      amountIn = inToTarget;
    } else {
      next = nextFromInput(price, liquidity, remaining, aToB, false);
      if (next === FAILED) return false;
      amountIn = deltaIn(price, next, liquidity, aToB, false);
      if (unrepresentable(amountIn)) return false;
    }
    amountOut = deltaOut(price, next, liquidity, aToB, false);
    if (unrepresentable(amountOut)) return false;
    const fee = mulDivCeil(amountOut, feeRate, FEE_RATE_DENOMINATOR);
    step.amountIn = next === target ? amountIn : remaining;
    step.amountOut = amountOut - fee;
    step.fee = fee;
    step.nextSqrtPrice = next;
    return true;
  }

  const grossWanted = mulDivCeil(remaining, FEE_RATE_DENOMINATOR, FEE_RATE_DENOMINATOR - feeRate);
  const outToTarget = deltaOut(price, target, liquidity, aToB, false);
  if (outToTarget <= U64_MAX && grossWanted >= outToTarget) {
    next = target;
    amountOut = outToTarget;
  } else {
    next = nextFromOutput(price, liquidity, grossWanted, aToB, false);
    if (next === FAILED) return false;
    amountOut = deltaOut(price, next, liquidity, aToB, false);
    if (unrepresentable(amountOut)) return false;
  }
  amountIn = deltaIn(price, next, liquidity, aToB, false);
  if (unrepresentable(amountIn)) return false;
  let fee = mulDivCeil(amountOut, feeRate, FEE_RATE_DENOMINATOR);
  if (amountOut - fee > remaining) {
    fee = amountOut - remaining;
    amountOut = remaining;
  } else {
    amountOut -= fee;
  }
  step.amountIn = amountIn;
  step.amountOut = amountOut;
  step.fee = fee;
  step.nextSqrtPrice = next;
  return true;
}
