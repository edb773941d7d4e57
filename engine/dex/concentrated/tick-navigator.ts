/**
 * Finds, for each step of a concentrated-liquidity swap, the next initialized tick in the swap
 * direction, or the edge of what the supplied data proves.
 *
 * What is known. Initialized ticks sit on multiples of the tick spacing. A supplied tick array
 * proves which of its ticks are initialized. A Raydium pool's tick_array_bitmap proves which tick
 * arrays (within +-512 arrays of tick 0) hold no initialized tick at all. Nothing else is known:
 * a Whirlpool tick array that was not supplied, a Raydium array the bitmap marks initialized but
 * that was not supplied, and every Raydium array beyond the bitmap's range are unknown.
 *
 * The rule. Scanning in the swap direction from the current tick, the first initializable tick
 * that is not proven is the edge: liquidity is constant up to it, so a swap may move the price
 * exactly onto it, never across it. Without any tick arrays the edge is therefore the current
 * tick-spacing slot: price can move down to the initializable tick at or below the current tick
 * (aToB), or up to the next one above it (bToA), and a swap that needs to go further is refused
 * with InsufficientLiquidityData. With arrays, the same rule extends over everything they prove.
 *
 * This covers at least what the protocols' own quoters accept (Whirlpool's TickArraySequence
 * stops at the first array's start or one tick below the last array's end; Raydium's needs every
 * initialized array), and a swap that ends inside the proven range gives the same numbers as with
 * complete data, because a step toward a farther target that it does not reach computes the same.
 *
 * A packed array (the cache's form, packed-tick-array.ts) is searched through its slot masks; any
 * other TickArray slot by slot, a missing or uninitialized tick read as not initialized.
 *
 * Raydium: when the bitmap proves there is no initialized array left in the swap direction, the
 * program fails with LiquidityInsufficient; `next` reports NoLiquidity.
 */
import { type Dex, type Tick, type TickArray } from '../types.js';
import { PackedTickArray } from './packed-tick-array.js';
import { MAX_TICK, MIN_TICK } from './tick-math.js';

export const NextTickKind = {
  /** An initialized tick (or a proven bound of the tick range): reaching it crosses it. */
  Tick: 0,
  /** The edge of the proven range: reaching it with amount left means more data is needed. */
  Edge: 1,
  /** Raydium: the bitmap proves no initialized tick lies ahead. */
  NoLiquidity: 2,
} as const;
export type NextTickKind = (typeof NextTickKind)[keyof typeof NextTickKind];

/** Raydium's default bitmap covers tick array indexes [-512, 511]. */
const BITMAP_HALF = 512;

const bitmapWordsCache = new WeakMap<readonly bigint[], Uint32Array>();

/** The bitmap as 32-bit words, computed once per decoded pool. */
function bitmapWords(bitmap: readonly bigint[]): Uint32Array {
  let words = bitmapWordsCache.get(bitmap);
  if (words === undefined) {
    words = new Uint32Array(bitmap.length * 2);
    for (let i = 0; i < bitmap.length; i++) {
      words[2 * i] = Number(bitmap[i]! & 0xffffffffn);
      words[2 * i + 1] = Number((bitmap[i]! >> 32n) & 0xffffffffn);
    }
    bitmapWordsCache.set(bitmap, words);
  }
  return words;
}

function floorDiv(a: number, b: number): number {
  return Math.floor(a / b);
}

export class TickNavigator {
  /** Result of the last `next` call. */
  tick = 0;
  liquidityNet = 0n;
  /** The tick carries Raydium limit orders. */
  limitOrders = false;

  private readonly span: number;
  private readonly words: Uint32Array | undefined;
  private readonly minArrayIndex: number;
  private readonly maxArrayIndex: number;

  constructor(
    private readonly dex: typeof Dex.Clmm | typeof Dex.Whirlpool,
    private readonly pool: string | undefined,
    private readonly tickSpacing: number,
    private readonly ticksPerArray: number,
    private readonly arrays: readonly TickArray[],
    private readonly aToB: boolean,
    bitmap: readonly bigint[] | undefined,
  ) {
    this.span = tickSpacing * ticksPerArray;
    this.words = bitmap !== undefined && bitmap.length > 0 ? bitmapWords(bitmap) : undefined;
    this.minArrayIndex = floorDiv(MIN_TICK, this.span);
    this.maxArrayIndex = floorDiv(MAX_TICK, this.span);
  }

  /** Finds what lies ahead of `currentTick` (the pool's tick convention). */
  next(currentTick: number): NextTickKind {
    const { tickSpacing: ts, span, aToB } = this;
    let pos = floorDiv(currentTick, ts) * ts + (aToB ? 0 : ts);
    for (;;) {
      if (aToB ? pos < MIN_TICK : pos > MAX_TICK) {
        // Proven empty to the end of the tick range: the bound itself, nothing to cross.
        return this.found(aToB ? MIN_TICK : MAX_TICK, undefined);
      }
      const arrayIndex = floorDiv(pos, span);
      const arrayStart = arrayIndex * span;
      const array = this.find(arrayStart);
      if (array instanceof PackedTickArray) {
        const from = (pos - arrayStart) / ts;
        const slot = aToB ? array.initializedAtOrBelow(from) : array.initializedAtOrAbove(from, this.ticksPerArray);
        if (slot >= 0) return this.foundPacked(arrayStart + slot * ts, array, slot);
        pos = aToB ? arrayStart - ts : arrayStart + span;
        continue;
      }
      if (array !== undefined) {
        const ticks = array.ticks;
        let slot = (pos - arrayStart) / ts;
        if (aToB) {
          for (; slot >= 0; slot--) {
            const t = ticks[slot];
            if (t !== undefined && t.initialized) return this.found(arrayStart + slot * ts, t);
          }
          pos = arrayStart - ts;
        } else {
          for (; slot < this.ticksPerArray; slot++) {
            const t = ticks[slot];
            if (t !== undefined && t.initialized) return this.found(arrayStart + slot * ts, t);
          }
          pos = arrayStart + span;
        }
        continue;
      }
      const state = this.bitmapState(arrayIndex);
      if (state !== 0) return this.edge(pos); // initialized but not supplied, or unknown
      // Proven empty: jump to the next initialized array the bitmap shows.
      const nextIndex = this.nextInitializedArray(arrayIndex);
      if (nextIndex === null) return NextTickKind.NoLiquidity;
      if (nextIndex === undefined) {
        // Past the bitmap's range: everything up to its end is proven empty.
        return this.edge(aToB ? -BITMAP_HALF * span - ts : BITMAP_HALF * span);
      }
      pos = aToB ? nextIndex * span + span - ts : nextIndex * span;
    }
  }

  private found(index: number, t: Tick | undefined): NextTickKind {
    this.tick = index;
    this.liquidityNet = t === undefined ? 0n : t.liquidityNet;
    this.limitOrders = t !== undefined && t.limitOrderAmount !== undefined && t.limitOrderAmount > 0n;
    return NextTickKind.Tick;
  }

  private foundPacked(index: number, array: PackedTickArray, slot: number): NextTickKind {
    this.tick = index;
    this.liquidityNet = array.liquidityNetAt(slot);
    this.limitOrders = array.hasLimitOrders && array.limitOrderAmountAt(slot) > 0n;
    return NextTickKind.Tick;
  }

  private edge(index: number): NextTickKind {
    this.tick = index < MIN_TICK ? MIN_TICK : index > MAX_TICK ? MAX_TICK : index;
    this.liquidityNet = 0n;
    this.limitOrders = false;
    return NextTickKind.Edge;
  }

  private find(startTickIndex: number): TickArray | undefined {
    const arrays = this.arrays;
    for (let i = 0; i < arrays.length; i++) {
      const a = arrays[i]!;
      if (a.startTickIndex === startTickIndex && a.dex === this.dex && (this.pool === undefined || a.pool === this.pool)) {
        return a;
      }
    }
    return undefined;
  }

  /** 0 proven empty, 1 initialized, 2 unknown. */
  private bitmapState(arrayIndex: number): 0 | 1 | 2 {
    const words = this.words;
    if (words === undefined || arrayIndex < -BITMAP_HALF || arrayIndex >= BITMAP_HALF) return 2;
    const bit = arrayIndex + BITMAP_HALF;
    return ((words[bit >>> 5]! >>> (bit & 31)) & 1) as 0 | 1;
  }

  /**
   * Next array index past `arrayIndex` in the swap direction whose bitmap bit is set; undefined
   * when the search leaves the bitmap's range into arrays that exist but are not covered by it;
   * null when no initialized array is left anywhere in that direction.
   */
  private nextInitializedArray(arrayIndex: number): number | null | undefined {
    const words = this.words!;
    if (this.aToB) {
      for (let i = arrayIndex - 1; i >= -BITMAP_HALF; i--) {
        const bit = i + BITMAP_HALF;
        if (((words[bit >>> 5]! >>> (bit & 31)) & 1) !== 0) return i;
      }
      return this.minArrayIndex < -BITMAP_HALF ? undefined : null;
    }
    for (let i = arrayIndex + 1; i < BITMAP_HALF; i++) {
      const bit = i + BITMAP_HALF;
      if (((words[bit >>> 5]! >>> (bit & 31)) & 1) !== 0) return i;
    }
    return this.maxArrayIndex >= BITMAP_HALF ? undefined : null;
  }
}
