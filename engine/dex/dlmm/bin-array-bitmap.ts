/**
 * The LbPair's `bin_array_bitmap`: 16 u64 words (word 0 lowest), bit `index + 512` set when bin
 * array `index` has liquidity, for indexes -512..511. Swaps use it to skip empty arrays
 * (`next_bin_array_index_with_liquidity_internal`); arrays beyond it live in a separate
 * bitmap-extension account, which tidepool does not decode.
 */
import { invalidArgument } from '../../errors.js';
import { BIN_ARRAY_BITMAP_SIZE, BIN_ARRAY_BITMAP_WORDS } from './constants.js';

export const MIN_BITMAP_ARRAY_INDEX = -BIN_ARRAY_BITMAP_SIZE;
export const MAX_BITMAP_ARRAY_INDEX = BIN_ARRAY_BITMAP_SIZE - 1;

const U32 = 0xffffffffn;

export function isInBitmapRange(index: number): boolean {
  return index >= MIN_BITMAP_ARRAY_INDEX && index <= MAX_BITMAP_ARRAY_INDEX;
}

/** Whether the bitmap marks array `index` (which must be in range) as holding liquidity. */
export function binArrayHasLiquidity(bitmap: readonly bigint[], index: number): boolean {
  const bit = index + BIN_ARRAY_BITMAP_SIZE;
  return (((bitmap[bit >> 6] ?? 0n) >> BigInt(bit & 63)) & 1n) === 1n;
}

/**
 * The nearest array index with liquidity from `start` (inclusive) in the swap's direction: down
 * for X→Y (`swapForY`), up for Y→X. Undefined when the bitmap has none that way. `start` must be
 * in range.
 */
export function nextBinArrayWithLiquidity(bitmap: readonly bigint[], swapForY: boolean, start: number): number | undefined {
  const startBit = start + BIN_ARRAY_BITMAP_SIZE;
  if (swapForY) {
    for (let w = startBit >> 6; w >= 0; w--) {
      let word = bitmap[w] ?? 0n;
      if (w === startBit >> 6) word &= (2n << BigInt(startBit & 63)) - 1n; // bits <= startBit
      if (word !== 0n) return w * 64 + highestBit(word) - BIN_ARRAY_BITMAP_SIZE;
    }
  } else {
    for (let w = startBit >> 6; w < BIN_ARRAY_BITMAP_WORDS; w++) {
      let word = bitmap[w] ?? 0n;
      if (w === startBit >> 6) word = (word >> BigInt(startBit & 63)) << BigInt(startBit & 63); // bits >= startBit
      if (word !== 0n) return w * 64 + lowestBit(word) - BIN_ARRAY_BITMAP_SIZE;
    }
  }
  return undefined;
}

/** A copy of `bitmap` with array `index`'s bit set or cleared (for the simulator and tests). */
export function withBinArrayBit(bitmap: readonly bigint[], index: number, hasLiquidity: boolean): bigint[] {
  if (!isInBitmapRange(index)) throw invalidArgument('index', index, `bin array ${index} outside the LbPair bitmap (-512..511)`);
  const out = Array.from({ length: BIN_ARRAY_BITMAP_WORDS }, (_, i) => bitmap[i] ?? 0n);
  const bit = index + BIN_ARRAY_BITMAP_SIZE;
  const mask = 1n << BigInt(bit & 63);
  out[bit >> 6] = hasLiquidity ? out[bit >> 6]! | mask : out[bit >> 6]! & ~mask;
  return out;
}

function highestBit(word: bigint): number {
  const hi = Number(word >> 32n);
  return hi !== 0 ? 63 - Math.clz32(hi) : 31 - Math.clz32(Number(word & U32));
}

function lowestBit(word: bigint): number {
  const lo = Number(word & U32);
  if (lo !== 0) return 31 - Math.clz32(lo & -lo);
  const hi = Number(word >> 32n);
  return 63 - Math.clz32(hi & -hi);
}
