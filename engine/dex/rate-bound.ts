/**
 * An upper bound on what a pool pays per atom sold, for any swap in one direction: the spot price
 * at the pool's current state less its base trade fee, as a float.
 *
 *   exact in:  amountOut <= amountIn × bound
 *   exact out: amountIn  >= amountOut / bound
 *
 * It holds for each protocol's exact math because the price only moves against the trader during
 * a swap and every rounding is in the pool's favour:
 * - dexa_amm: out = floor(reserveOut × net / (reserveIn + net)) <= net × reserveOut / reserveIn,
 *   with net = in − ceil(in × num / den) <= in × (1 − num / den);
 * - Whirlpool and Raydium CLMM: each step trades at a price between the step's start (the spot
 *   price, sqrtPrice² / 2¹²⁸ B per A, its inverse for B → A) and a worse one; the fee (millionths)
 *   leaves at most (1 − feeRate) of each step's input in the pool, or of its output with Raydium's
 *   fee on the output; Raydium's dynamic fee only adds to the base rate;
 * - Meteora DLMM: the active bin's price ((1 + binStep / 10⁴)^activeId Y per X, Q64.64) and bins
 *   further on at worse prices; the total fee rate is the base rate plus a variable one (capped at
 *   10 %), so (1 − min(base, cap)) bounds what stays;
 * - Token-2022 transfer fees only take more from the trader.
 * A pool that cannot quote (disabled, fee unknown, empty reserve) gets Infinity: the bound prunes
 * nothing then, and the swap math gives its refusal as before.
 *
 * Floating point: the bound is computed in double precision; `boundedOutput` and `boundedInput`
 * widen it by a relative 1e-9 and 2 atoms (the rounding of a fee taken from the output), far
 * beyond the error of the conversions.
 *
 * Use: the cache computes both directions when a pool's state is stored (PoolCache.rateBoundAt);
 * the route search quotes a leg's pools best bound first and stops once no pool left can beat the
 * best exact quote, and drops an intermediate token whose two legs' bounds cannot beat the best
 * route found (engine/quote/route-search.ts).
 */
import { binPrice, q64ToNumber } from './dlmm/bin-price.js';
import { FEE_PRECISION, MAX_FEE_RATE } from './dlmm/constants.js';
import { baseFeeRate } from './dlmm/fees.js';
import { Dex, type DecodedPool } from './types.js';

const TWO_64 = 18446744073709551616;
const MILLION = 1_000_000;
const RELATIVE_SLACK = 1 + 1e-9;
const ATOM_SLACK = 2;

/** Output atoms per input atom at most, selling token A (`aToB`) or token B; Infinity when unknown. */
export function rateBound(pool: DecodedPool, aToB: boolean): number {
  let rate: number;
  switch (pool.dex) {
    case Dex.Amm: {
      const reserveIn = Number(aToB ? pool.reserveA : pool.reserveB);
      const reserveOut = Number(aToB ? pool.reserveB : pool.reserveA);
      if (reserveIn <= 0 || pool.feeDenominator === 0n || pool.feeNumerator >= pool.feeDenominator) return Infinity;
      rate = (reserveOut / reserveIn) * (1 - Number(pool.feeNumerator) / Number(pool.feeDenominator));
      break;
    }
    case Dex.Whirlpool:
    case Dex.Clmm: {
      if (pool.feeRate === undefined) return Infinity;
      const sqrt = Number(pool.sqrtPrice) / TWO_64;
      const price = sqrt * sqrt;
      if (!(price > 0)) return Infinity;
      // Raydium's fee on the output token (fee_on) cuts the output by the same rate.
      rate = (aToB ? price : 1 / price) * (1 - pool.feeRate / MILLION);
      break;
    }
    case Dex.Dlmm: {
      const price = q64ToNumber(binPrice(pool.activeId, pool.binStep));
      if (!(price > 0)) return Infinity;
      const base = baseFeeRate(pool.binStep, pool.parameters);
      const fee = Number(base > MAX_FEE_RATE ? MAX_FEE_RATE : base) / Number(FEE_PRECISION);
      rate = (aToB ? price : 1 / price) * (1 - fee);
      break;
    }
    default:
      return Infinity;
  }
  return Number.isFinite(rate) && rate >= 0 ? rate : Infinity;
}

/** The most an exact-in swap of `amountIn` can pay at rate bound `bound` (widened for rounding). */
export function boundedOutput(amountIn: number, bound: number): number {
  return amountIn * bound * RELATIVE_SLACK + ATOM_SLACK;
}

/** The least an exact-out swap of `amountOut` can ask at rate bound `bound` (widened for rounding). */
export function boundedInput(amountOut: number, bound: number): number {
  return (amountOut - ATOM_SLACK) / (bound * RELATIVE_SLACK);
}
