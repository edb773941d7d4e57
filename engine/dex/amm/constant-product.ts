/**
 * dexa_amm swap math: Raydium AMM v4 constant product (docs/wire-formats.md §5.1, docs/architecture.md §3).
 *
 * Exact in:  fee = ceil(in * num / den), net = in - fee (= floor(in * (den - num) / den)),
 *            out = floor(reserveOut * net / (reserveIn + net)); refused when out = 0 or
 *            out >= reserveOut.
 * Exact out: net = ceil(reserveIn * out / (reserveOut - out)),
 *            in  = ceil(net * den / (den - num)); refused when out >= reserveOut.
 *
 * Rounding note: Raydium's on-chain `checked_ceil_div` rounds half up instead of up when the
 * quotient is below 1 (reserveIn * out < reserveOut - out), which can return an input of 0. The
 * quote uses the plain ceiling of the reference there: never less input than the pool needs.
 */
import { priceImpact } from '../price-impact.js';
import { checkAmount, refuse } from '../swap-result.js';
import { SwapFailure, SwapMode, type AmmPool, type SwapRequest, type SwapResult } from '../types.js';
import { ammSwapEnabled } from './amm-pool.js';

const U64_MAX = (1n << 64n) - 1n;

function ceilDiv(n: bigint, d: bigint): bigint {
  const q = n / d;
  return q * d === n ? q : q + 1n;
}

/** Fee of an exact-in swap: ceil(amountIn * num / den). */
export function constantProductFee(amountIn: bigint, feeNumerator: bigint, feeDenominator: bigint): bigint {
  return ceilDiv(amountIn * feeNumerator, feeDenominator);
}

/** Output for `net` input after the fee: floor(reserveOut * net / (reserveIn + net)). */
export function constantProductOut(net: bigint, reserveIn: bigint, reserveOut: bigint): bigint {
  const denominator = reserveIn + net;
  return denominator === 0n ? 0n : (reserveOut * net) / denominator;
}

/** Input after the fee needed for `amountOut` (< reserveOut): ceil(reserveIn * out / (reserveOut - out)). */
export function constantProductNetIn(amountOut: bigint, reserveIn: bigint, reserveOut: bigint): bigint {
  return ceilDiv(reserveIn * amountOut, reserveOut - amountOut);
}

/** Gross input for a net input: ceil(net * den / (den - num)). */
export function constantProductGrossIn(net: bigint, feeNumerator: bigint, feeDenominator: bigint): bigint {
  return ceilDiv(net * feeDenominator, feeDenominator - feeNumerator);
}

/** Quotes a swap on a dexa_amm pool. */
export function quoteConstantProduct(pool: AmmPool, req: SwapRequest): SwapResult {
  const zero = checkAmount(req);
  if (zero !== undefined) return zero;
  if (!ammSwapEnabled(pool.status)) {
    return refuse(SwapFailure.PoolDisabled, `AMM pool status ${pool.status} does not allow swaps`);
  }
  const reserveIn = req.aToB ? pool.reserveA : pool.reserveB;
  const reserveOut = req.aToB ? pool.reserveB : pool.reserveA;
  if (reserveIn === 0n || reserveOut === 0n) {
    return refuse(SwapFailure.InsufficientLiquidity, 'AMM pool has an empty reserve');
  }
  const { feeNumerator: num, feeDenominator: den } = pool;

  if (req.mode === SwapMode.ExactIn) {
    const fee = constantProductFee(req.amount, num, den);
    const amountOut = constantProductOut(req.amount - fee, reserveIn, reserveOut);
    if (amountOut === 0n) return refuse(SwapFailure.ZeroAmount, 'AMM output rounds down to zero');
    if (amountOut >= reserveOut) {
      return refuse(SwapFailure.InsufficientLiquidity, 'AMM output would empty the reserve');
    }
    return {
      ok: true,
      amountIn: req.amount,
      amountOut,
      fee,
      priceImpact: priceImpact(amountOut, req.amount - fee, reserveOut, reserveIn),
    };
  }

  if (req.amount >= reserveOut) {
    return refuse(SwapFailure.InsufficientLiquidity, `AMM reserve ${reserveOut} cannot pay ${req.amount}`);
  }
  const net = constantProductNetIn(req.amount, reserveIn, reserveOut);
  const amountIn = constantProductGrossIn(net, num, den);
  const fee = amountIn - net;
  if (amountIn > U64_MAX) return refuse(SwapFailure.InsufficientLiquidity, 'AMM input would exceed u64');
  return {
    ok: true,
    amountIn,
    amountOut: req.amount,
    fee,
    priceImpact: priceImpact(req.amount, amountIn - fee, reserveOut, reserveIn),
  };
}
