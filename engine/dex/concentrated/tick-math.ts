/**
 * Tick <-> Q64.64 sqrt price, bit-exact with each protocol's tick_math.
 *
 * Both protocols use ticks of 1.0001 in price (sqrt price 1.0001^(tick/2) * 2^64) over the same
 * tick range, but compute sqrt(1.0001^tick) with different fixed-point tables, so the two
 * functions can differ in the last bits for some ticks; each protocol's swap uses its own.
 *
 * - Orca Whirlpool (rust-sdk/core/src/math/tick.rs, programs/whirlpool/src/math/tick_math.rs):
 *   negative ticks multiply Q64 factors and shift by 64; positive ticks multiply Q96 factors,
 *   shift by 96 per step and by 32 at the end. The inverse uses a 14-bit log2 approximation.
 * - Raydium CLMM (programs/amm/src/libraries/tick_math.rs, SDK TickUtil): Q64 factors for |tick|,
 *   then 2^128 / ratio for positive ticks. The inverse uses 16 bits.
 */

export const MIN_TICK = -443636;
export const MAX_TICK = 443636;
/** sqrt price at MIN_TICK, both protocols. */
export const MIN_SQRT_PRICE = 4295048016n;
export const WHIRLPOOL_MAX_SQRT_PRICE = 79226673515401279992447579055n;
export const RAYDIUM_MAX_SQRT_PRICE = 79226673521066979257578248091n;

const Q64 = 1n << 64n;
const Q128 = 1n << 128n;

// Whirlpool, |tick| bits 0..18 for negative ticks (Q64).
const WP_NEG: readonly bigint[] = [
  18445821805675392311n,
  18444899583751176498n,
  18443055278223354162n,
  18439367220385604838n,
  18431993317065449817n,
  18417254355718160513n,
  18387811781193591352n,
  18329067761203520168n,
  18212142134806087854n,
  17980523815641551639n,
  17526086738831147013n,
  16651378430235024244n,
  15030750278693429944n,
  12247334978882834399n,
  8131365268884726200n,
  3584323654723342297n,
  696457651847595233n,
  26294789957452057n,
  37481735321082n,
];

// Whirlpool, tick bits 0..18 for positive ticks (Q96).
const WP_POS: readonly bigint[] = [
  79232123823359799118286999567n,
  79236085330515764027303304731n,
  79244008939048815603706035061n,
  79259858533276714757314932305n,
  79291567232598584799939703904n,
  79355022692464371645785046466n,
  79482085999252804386437311141n,
  79736823300114093921829183326n,
  80248749790819932309965073892n,
  81282483887344747381513967011n,
  83390072131320151908154831281n,
  87770609709833776024991924138n,
  97234110755111693312479820773n,
  119332217159966728226237229890n,
  179736315981702064433883588727n,
  407748233172238350107850275304n,
  2098478828474011932436660412517n,
  55581415166113811149459800483533n,
  38992368544603139932233054999993551n,
];
const WP_POS_ONE = 79228162514264337593543950336n; // 2^96

// Raydium, |tick| bits 0..18 (Q64).
const RAY_FACTORS: readonly bigint[] = [
  0xfffcb933bd6fb800n,
  0xfff97272373d4000n,
  0xfff2e50f5f657000n,
  0xffe5caca7e10f000n,
  0xffcb9843d60f7000n,
  0xff973b41fa98e800n,
  0xff2ea16466c9b000n,
  0xfe5dee046a9a3800n,
  0xfcbe86c7900bb000n,
  0xf987a7253ac65800n,
  0xf3392b0822bb6000n,
  0xe7159475a2caf000n,
  0xd097f3bdfd2f2000n,
  0xa9f746462d9f8000n,
  0x70d869a156f31c00n,
  0x31be135f97ed3200n,
  0x9aa508b5b85a500n,
  0x5d6af8dedc582cn,
  0x2216e584f5fan,
];

/** Orca Whirlpool `tick_index_to_sqrt_price`. Caller keeps `tick` within [MIN_TICK, MAX_TICK]. */
export function whirlpoolSqrtPriceAtTick(tick: number): bigint {
  if (tick >= 0) {
    let ratio = (tick & 1) !== 0 ? WP_POS[0]! : WP_POS_ONE;
    for (let bit = 1; bit < 19; bit++) {
      if ((tick & (1 << bit)) !== 0) ratio = (ratio * WP_POS[bit]!) >> 96n;
    }
    return ratio >> 32n;
  }
  const abs = -tick;
  let ratio = (abs & 1) !== 0 ? WP_NEG[0]! : Q64;
  for (let bit = 1; bit < 19; bit++) {
    if ((abs & (1 << bit)) !== 0) ratio = (ratio * WP_NEG[bit]!) >> 64n;
  }
  return ratio;
}

/** Raydium CLMM `get_sqrt_price_at_tick`. Caller keeps `tick` within [MIN_TICK, MAX_TICK]. */
export function raydiumSqrtPriceAtTick(tick: number): bigint {
  const abs = tick < 0 ? -tick : tick;
  let ratio = Q64;
  for (let bit = 0; bit < 19; bit++) {
    if ((abs & (1 << bit)) !== 0) ratio = (ratio * RAY_FACTORS[bit]!) >> 64n;
  }
  return tick > 0 ? Q128 / ratio : ratio;
}

const LOG_B_2_X32 = 59543866431248n;
const LOG_B_P_ERR_MARGIN_LOWER_X64 = 184467440737095516n;
const LOG_B_P_ERR_MARGIN_UPPER_X64 = 15793534762490258745n;

/**
 * Greatest tick whose sqrt price is <= `sqrtPrice` (the protocols' `sqrt_price_to_tick_index` /
 * `get_tick_at_sqrt_price`): a log2 estimate with `bitPrecision` fraction bits, then one exact
 * check of the upper candidate with the protocol's own sqrt-price-at-tick.
 */
function tickAtSqrtPrice(
  sqrtPrice: bigint,
  bitPrecision: number,
  sqrtPriceAtTick: (tick: number) => bigint,
): number {
  const msb = bitLength(sqrtPrice) - 1;
  const log2pIntegerX32 = BigInt(msb - 64) << 32n;
  let r = msb >= 64 ? sqrtPrice >> BigInt(msb - 63) : sqrtPrice << BigInt(63 - msb);
  let log2pFractionX64 = 0n;
  let bit = 0x8000000000000000n;
  for (let precision = 0; precision < bitPrecision && bit > 0n; precision++) {
    r *= r;
    const moreThanTwo = r >> 127n;
    r >>= 63n + moreThanTwo;
    if (moreThanTwo !== 0n) log2pFractionX64 += bit;
    bit >>= 1n;
  }
  const log2pX32 = log2pIntegerX32 + (log2pFractionX64 >> 32n);
  const logbpX64 = log2pX32 * LOG_B_2_X32;
  // BigInt >> is an arithmetic shift: floor division by 2^64, as the i128 shifts on chain.
  const tickLow = Number((logbpX64 - LOG_B_P_ERR_MARGIN_LOWER_X64) >> 64n);
  const tickHigh = Number((logbpX64 + LOG_B_P_ERR_MARGIN_UPPER_X64) >> 64n);
  if (tickLow === tickHigh) return tickLow;
  return sqrtPriceAtTick(tickHigh) <= sqrtPrice ? tickHigh : tickLow;
}

/** Orca Whirlpool `sqrt_price_to_tick_index`. Caller keeps the price within the protocol bounds. */
export function whirlpoolTickAtSqrtPrice(sqrtPrice: bigint): number {
  const tick = tickEstimate(sqrtPrice);
  return tick === UNSURE ? whirlpoolTickAtSqrtPriceExact(sqrtPrice) : tick;
}

/** Raydium CLMM `get_tick_at_sqrt_price`. Caller keeps the price within the protocol bounds. */
export function raydiumTickAtSqrtPrice(sqrtPrice: bigint): number {
  const tick = tickEstimate(sqrtPrice);
  return tick === UNSURE ? raydiumTickAtSqrtPriceExact(sqrtPrice) : tick;
}

/** `whirlpoolTickAtSqrtPrice` the program's way, every time (the reference of the estimate). */
export function whirlpoolTickAtSqrtPriceExact(sqrtPrice: bigint): number {
  return tickAtSqrtPrice(sqrtPrice, 14, whirlpoolSqrtPriceAtTick);
}

/** `raydiumTickAtSqrtPrice` the program's way, every time (the reference of the estimate). */
export function raydiumTickAtSqrtPriceExact(sqrtPrice: bigint): number {
  return tickAtSqrtPrice(sqrtPrice, 16, raydiumSqrtPriceAtTick);
}

/** `tickEstimate` could not be sure: the price is too close to a tick's own price. */
const UNSURE = 0x7fffffff;
const LN_Q64 = 64 * Math.LN2;
/** Ticks per unit of ln(sqrt price): sqrt price = 1.0001^(tick / 2) × 2^64. */
const TICKS_PER_LN = 2 / Math.log(1.0001);

/**
 * The greatest tick whose sqrt price is <= `sqrtPrice`, from a double-precision logarithm, without
 * BigInt arithmetic; UNSURE when the price lies too close to a tick's price for a double to decide
 * (about one price in a million), where the caller runs the program's own algorithm.
 *
 * Both programs' inverses return that greatest tick (their log2 estimate brackets it between two
 * candidates and the exact sqrt-price-at-tick decides), so the estimate may answer whenever it is
 * sure which side of each tick price the argument lies on. `x = ln(p / 2^64) × 2 / ln(1.0001)` is
 * the exact real tick coordinate of `p` under the ideal formula; `floor(x)` is the answer unless
 * `x` is within `margin` of an integer, where margin bounds two errors:
 * - the double arithmetic: Number(p) (relative 2^-53), Math.log and the constant (1 ulp each, the
 *   result below 89 in magnitude) and the products: below 1e-9 ticks;
 * - the programs' fixed-point tables against the ideal formula: each of at most 19 truncating
 *   multiplications loses under one unit of the Q64 (or Q96) ratio, so the tick price is off by
 *   under 40 units of 2^-64 relative to the ratio: relative error < 40 / p for the ratio read as
 *   the price (Whirlpool; Raydium negative ticks) and < 40 × p / 2^128 where the price is 2^128 /
 *   ratio (Raydium positive ticks). In ticks: relative error / (ln(1.0001) / 2).
 * For prices of real pools both terms are far below 1e-7, the margin's floor.
 * tick-math.test.ts compares the estimate with the exact algorithms on random and boundary prices
 * over the whole tick range, extremes included.
 */
function tickEstimate(sqrtPrice: bigint): number {
  const p = Number(sqrtPrice);
  const x = (Math.log(p) - LN_Q64) * TICKS_PER_LN;
  const tick = Math.floor(x);
  const fraction = x - tick;
  const relative = 40 / p + (40 * p) / 3.402823669209385e38;
  const margin = 1e-7 + relative * TICKS_PER_LN;
  return fraction > margin && fraction < 1 - margin ? tick : UNSURE;
}

function bitLength(x: bigint): number {
  let bits = 0;
  while (x >= 0x100000000n) {
    x >>= 32n;
    bits += 32;
  }
  return bits + 32 - Math.clz32(Number(x));
}
