/**
 * Token amounts between two sqrt prices and the next sqrt price after an amount, in Q64.64, with
 * the rounding both protocols use (amounts in round up, amounts out round down, the price moves
 * in the pool's favour). Whirlpool (rust-sdk/core/src/math/token.rs) and Raydium CLMM
 * (libraries/{liquidity_math,sqrt_price_math}.rs) give identical results: Raydium's nested
 * ceil(ceil(x / a) / b) equals Whirlpool's ceil(x / (a * b)) for positive integers.
 *
 * BigInt is exact, so the wide intermediates of the on-chain code need no emulation, except where
 * a program fails on them: Whirlpool keeps L * diff * 2^64 (amount of A) and L * sqrtP * 2^64
 * (price from an amount of A) in 256 bits and fails past that (`wide256` true); Raydium's
 * mul_div has 512-bit room. The u64 limits on amounts are kept too: past them the programs fail
 * or take another branch. Failures return FAILED (-1n) rather than throwing: they are normal
 * answers of a quote.
 */

export const Q64 = 1n << 64n;
export const U64_MAX = (1n << 64n) - 1n;
export const U128_MAX = (1n << 128n) - 1n;
export const FAILED = -1n;
const U256_LIMIT = 1n << 256n;

/**
 * Amount of token A between two sqrt prices: L * (upper - lower) * 2^64 / (lower * upper).
 * FAILED when `wide256` and the numerator does not fit 256 bits (Whirlpool MultiplicationOverflow).
 */
export function amountDeltaA(
  sqrtPrice1: bigint,
  sqrtPrice2: bigint,
  liquidity: bigint,
  roundUp: boolean,
  wide256 = false,
): bigint {
  const lower = sqrtPrice1 < sqrtPrice2 ? sqrtPrice1 : sqrtPrice2;
  const upper = sqrtPrice1 < sqrtPrice2 ? sqrtPrice2 : sqrtPrice1;
  const numerator = (liquidity * (upper - lower)) << 64n;
  if (wide256 && numerator >= U256_LIMIT) return FAILED;
  const denominator = lower * upper;
  const quotient = numerator / denominator;
  return roundUp && quotient * denominator !== numerator ? quotient + 1n : quotient;
}

/** Amount of token B between two sqrt prices: L * (upper - lower) / 2^64. */
export function amountDeltaB(sqrtPrice1: bigint, sqrtPrice2: bigint, liquidity: bigint, roundUp: boolean): bigint {
  const diff = sqrtPrice1 < sqrtPrice2 ? sqrtPrice2 - sqrtPrice1 : sqrtPrice1 - sqrtPrice2;
  const product = liquidity * diff;
  const quotient = product >> 64n;
  return roundUp && (product & U64_MAX) !== 0n ? quotient + 1n : quotient;
}

/**
 * Sqrt price after adding (`add`, price falls) or removing (price rises) `amount` of token A:
 * ceil(L * 2^64 * sqrtP / (L * 2^64 +- amount * sqrtP)). FAILED when the removal would empty the
 * range (denominator <= 0), or when `wide256` and the numerator does not fit 256 bits.
 */
export function nextSqrtPriceFromAmountA(
  sqrtPrice: bigint,
  liquidity: bigint,
  amount: bigint,
  add: boolean,
  wide256 = false,
): bigint {
  if (amount === 0n) return sqrtPrice;
  const liquidityShifted = liquidity << 64n;
  const numerator = liquidityShifted * sqrtPrice;
  if (wide256 && numerator >= U256_LIMIT) return FAILED;
  const product = amount * sqrtPrice;
  const denominator = add ? liquidityShifted + product : liquidityShifted - product;
  if (denominator <= 0n) return FAILED;
  const quotient = numerator / denominator;
  return quotient * denominator === numerator ? quotient : quotient + 1n;
}

/**
 * Sqrt price after adding (`add`, price rises) or removing (price falls) `amount` of token B:
 * sqrtP + floor(amount * 2^64 / L), or sqrtP - ceil(amount * 2^64 / L). FAILED at or below zero.
 */
export function nextSqrtPriceFromAmountB(sqrtPrice: bigint, liquidity: bigint, amount: bigint, add: boolean): bigint {
  if (amount === 0n) return sqrtPrice;
  if (liquidity === 0n) return FAILED;
  const shifted = amount << 64n;
  if (add) return sqrtPrice + shifted / liquidity;
  const quotient = shifted / liquidity;
  const delta = quotient * liquidity === shifted ? quotient : quotient + 1n;
  return delta >= sqrtPrice ? FAILED : sqrtPrice - delta;
}

/** floor(a * b / d) and ceil(a * b / d) for non-negative operands. */
export function mulDivFloor(a: bigint, b: bigint, d: bigint): bigint {
  return (a * b) / d;
}

export function mulDivCeil(a: bigint, b: bigint, d: bigint): bigint {
  const n = a * b;
  const q = n / d;
  return q * d === n ? q : q + 1n;
}
