/**
 * The price of a DLMM bin, exactly as the program computes it (`price_math::get_price_from_id`):
 * `base = 2^64 + floor(bin_step * 2^64 / 10_000)` raised to the bin id with the program's Q64.64
 * `pow` (u64x64_math.rs), whose truncations this reproduces bit for bit.
 */
import { BASIS_POINT_MAX, ONE_Q64, SCALE_OFFSET, U128_MAX } from './constants.js';

/** `pow` refuses exponents from 2^19 on (`MAX_EXPONENTIAL`). */
const MAX_EXPONENTIAL = 0x80000;
const EXPONENT_BITS = 19;

/** Q64.64 `1 + bin_step / 10_000`, rounded down. */
export function binPriceBase(binStep: number): bigint {
  return ONE_Q64 + (BigInt(binStep) << SCALE_OFFSET) / BigInt(BASIS_POINT_MAX);
}

/**
 * Q64.64 `base ^ exp` as the program's `pow`: square-and-multiply over the exponent's 19 bits on
 * a base inverted below 1 (`u128::MAX / base`), each product truncated to Q64.64, then inverted
 * back (`u128::MAX / result`) when needed. Returns 0n where the program's `pow` returns None
 * (exponent too large, or the result truncates to zero).
 */
export function powQ64(base: bigint, exp: number): bigint {
  if (exp === 0) return ONE_Q64;
  let invert = exp < 0;
  const e = invert ? -exp : exp;
  if (e >= MAX_EXPONENTIAL) return 0n;

  let squared = base;
  let result = ONE_Q64;
  if (squared >= result) {
    squared = U128_MAX / squared;
    invert = !invert;
  }
  for (let bit = 0; bit < EXPONENT_BITS; bit++) {
    if ((e & (1 << bit)) !== 0) result = (result * squared) >> SCALE_OFFSET;
    // The program squares after every bit but the last; the final square is never used.
    if (bit < EXPONENT_BITS - 1) squared = (squared * squared) >> SCALE_OFFSET;
  }
  if (result === 0n) return 0n;
  return invert ? U128_MAX / result : result;
}

// pow costs ~20 µs in BigInt: prices are memoized per (bin step, id), and the table is simply
// dropped when full (quotes touch few distinct bins; a pool's bins already store their price).
const PRICE_CACHE_LIMIT = 1 << 16;
const priceCache = new Map<number, bigint>();

/** Q64.64 price of bin `binId` (Y atoms per X atom); 0n when the program could not compute it. */
export function binPrice(binId: number, binStep: number): bigint {
  if (binStep >= 1024) return powQ64(binPriceBase(binStep), binId); // beyond the key's room
  const key = binId * 1024 + binStep;
  let price = priceCache.get(key);
  if (price === undefined) {
    price = powQ64(binPriceBase(binStep), binId);
    if (priceCache.size >= PRICE_CACHE_LIMIT) priceCache.clear();
    priceCache.set(key, price);
  }
  return price;
}

/** A Q64.64 price as a float (for display and price impact; never for amounts). */
export function q64ToNumber(price: bigint): number {
  const whole = price >> SCALE_OFFSET;
  const frac = price & (ONE_Q64 - 1n);
  return Number(whole) + Number(frac) / 18446744073709551616;
}
