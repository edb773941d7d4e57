/**
 * SwapQuote.priceImpact: how much worse the execution price is than the pool's spot price before
 * the swap, as a fraction >= 0 (docs/architecture.md §3):
 *
 *   impact = 1 - (out / netIn) / spot
 *
 * with `spot` in output atoms per input atom and `netIn` the input after a fee on the input (or
 * `out` before a fee on the output), so the fee itself is not counted as impact. Computed from
 * exact integers, converted to floating point once.
 */

const Q128 = 1n << 128n;

/** Impact against a spot price given as a ratio spotNum / spotDen (output per input). */
export function priceImpact(out: bigint, netIn: bigint, spotNum: bigint, spotDen: bigint): number {
  if (netIn <= 0n || spotNum <= 0n || spotDen <= 0n) return 0;
  // (out / netIn) / (spotNum / spotDen) = out * spotDen / (netIn * spotNum)
  const ratio = Number(out * spotDen) / Number(netIn * spotNum);
  const impact = 1 - ratio;
  return impact > 0 ? impact : 0;
}

/**
 * Impact for a concentrated-liquidity pool at Q64.64 sqrt price `sqrtPrice` (sqrt of B per A):
 * spot is sqrtPrice^2 / 2^128 B per A for aToB, the inverse for bToA.
 */
export function clPriceImpact(sqrtPrice: bigint, aToB: boolean, out: bigint, netIn: bigint): number {
  const squared = sqrtPrice * sqrtPrice;
  return aToB ? priceImpact(out, netIn, squared, Q128) : priceImpact(out, netIn, Q128, squared);
}
