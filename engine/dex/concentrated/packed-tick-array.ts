/**
 * A concentrated-liquidity tick array (Raydium CLMM or Whirlpool) as the pool cache and the RPC
 * pool loader keep it (compact-context.ts): no object and no BigInt per tick. Only initialized
 * ticks are kept (in the simulator's pools ~3% of the slots), in one BigUint64Array of word planes
 *
 *   words: [ liquidityNet × k | liquidityGross × k ]
 *          + [ liquidityNet high half × k | liquidityGross high half × k ]   (wide arrays only)
 *          + [ limit-order amount × k ]                                     (when some tick has orders)
 *
 * for its k initialized ticks, in slot order. A narrow array keeps each liquidityNet as an i64
 * (two's complement in the word) and each liquidityGross as a u64; an array where some value does
 * not fit is wide: i128 / u128 as two halves. Which slots are initialized is three 30-bit mask
 * fields (30 bits keep them small integers; 88 slots fit), so the navigator finds the next
 * initialized tick with Math.clz32 instead of visiting slots, and a tick's place in the planes is
 * the count of initialized slots below it. An array with no initialized tick has no buffer at all.
 *
 * `ticks` materializes fresh Tick objects (initialized ones, in their slots; the others are holes,
 * which the swap math reads as uninitialized): it keeps a packed array valid wherever a TickArray
 * is read outside the swap math (encoders, tests, the CLI), never on a hot path. A tick's
 * `limitOrderAmount` comes back only when it is not zero (the math treats absent and 0n alike).
 */
import type { Tick, TickArray } from '../types.js';
import { U128_MAX, U64_MAX } from './sqrt-price-math.js';

const I64_MIN = -(1n << 63n);
const I64_MAX = (1n << 63n) - 1n;
const I128_MIN = -(1n << 127n);
const I128_MAX = (1n << 127n) - 1n;

/** Slots per mask field: 30 bits keep each a small integer (Smi) on 64-bit V8. */
const MASK_BITS = 30;
/** Slots a packed array holds at most (three mask fields; Whirlpool has 88, Raydium 60). */
export const PACKED_TICK_SLOTS_MAX = 3 * MASK_BITS;

// Word planes of `words`, each `initializedCount` long.
const NET = 0;
const GROSS = 1;
const NET_HI = 2;
const GROSS_HI = 3;

/** The limit orders' plane: after net and gross, one plane each, or two when wide. */
function ordersPlaneOf(wide: boolean): number {
  return wide ? 4 : 2;
}

function popcount(v: number): number {
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

function fits(v: bigint, lo: bigint, hi: bigint): boolean {
  return v >= lo && v <= hi;
}

export class PackedTickArray implements TickArray {
  readonly dex: TickArray['dex'];
  readonly pool: string;
  readonly startTickIndex: number;
  /** The slot count of the array packed (`ticks.length`). */
  readonly slotCount: number;
  readonly initializedCount: number;
  /** Whether some tick holds limit orders (then `words` has their plane). */
  readonly hasLimitOrders: boolean;
  /** Whether the values are kept as two halves (some net past i64 or gross past u64). */
  readonly wide: boolean;
  /** `Tick.index` of slot s is `startTickIndex + s * indexStep`; NaN when the indexes were NaN. */
  private readonly indexStep: number;
  private readonly mask0: number;
  private readonly mask1: number;
  private readonly mask2: number;
  private readonly words: BigUint64Array | undefined;
  private readonly ordersPlane: number;

  private constructor(
    from: TickArray,
    masks: readonly [number, number, number],
    initializedCount: number,
    indexStep: number,
    wide: boolean,
    withOrders: boolean,
    words: BigUint64Array | undefined,
  ) {
    this.dex = from.dex;
    this.pool = from.pool;
    this.startTickIndex = from.startTickIndex;
    this.slotCount = from.ticks.length;
    this.initializedCount = initializedCount;
    this.wide = wide;
    this.hasLimitOrders = withOrders;
    this.ordersPlane = ordersPlaneOf(wide);
    this.indexStep = indexStep;
    this.mask0 = masks[0];
    this.mask1 = masks[1];
    this.mask2 = masks[2];
    this.words = words;
  }

  /**
   * `array` packed, or undefined when it cannot be without loss: more than 90 slots, a value out
   * of range (net outside i128, gross outside u128, limit orders outside u64), or tick indexes
   * that are not `startTickIndex + slot * spacing` for one spacing (nor all NaN).
   */
  static pack(array: TickArray): PackedTickArray | undefined {
    if (array instanceof PackedTickArray) return array;
    const ticks = array.ticks;
    if (ticks.length > PACKED_TICK_SLOTS_MAX) return undefined;
    const start = array.startTickIndex;
    const masks: [number, number, number] = [0, 0, 0];
    let k = 0;
    let wide = false;
    let withOrders = false;
    let step: number | undefined;
    let nanIndex: boolean | undefined;
    for (let slot = 0; slot < ticks.length; slot++) {
      const t = ticks[slot];
      if (t === undefined || !t.initialized) continue;
      const { liquidityNet: net, liquidityGross: gross, limitOrderAmount: orders } = t;
      if (!fits(net, I128_MIN, I128_MAX) || !fits(gross, 0n, U128_MAX)) return undefined;
      if (orders !== undefined && !fits(orders, 0n, U64_MAX)) return undefined;
      wide ||= !fits(net, I64_MIN, I64_MAX) || gross > U64_MAX;
      withOrders ||= orders !== undefined && orders !== 0n;
      const nan = Number.isNaN(t.index);
      if (nanIndex !== undefined && nanIndex !== nan) return undefined;
      nanIndex = nan;
      if (!nan && slot > 0) step ??= (t.index - start) / slot;
      if (!nan && t.index !== start + slot * (step ?? 0)) return undefined;
      const w = (slot / MASK_BITS) | 0;
      masks[w] = masks[w]! | (1 << slot % MASK_BITS);
      k++;
    }
    const indexStep = nanIndex === true ? NaN : (step ?? 0);
    if (k === 0) return new PackedTickArray(array, masks, 0, indexStep, false, false, undefined);
    const ordersPlane = ordersPlaneOf(wide);
    // A BigUint64Array store keeps the low 64 bits (ToBigUint64): a net's two's complement, a
    // u128's low half; the planes start at zero, so only what is not zero is written.
    const words = new BigUint64Array((ordersPlane + (withOrders ? 1 : 0)) * k);
    let i = 0;
    for (let slot = 0; slot < ticks.length; slot++) {
      const t = ticks[slot];
      if (t === undefined || !t.initialized) continue;
      const { liquidityNet: net, liquidityGross: gross, limitOrderAmount: orders } = t;
      words[NET * k + i] = net;
      words[GROSS * k + i] = gross;
      if (wide) {
        words[NET_HI * k + i] = net >> 64n;
        words[GROSS_HI * k + i] = gross >> 64n;
      }
      if (withOrders && orders !== undefined) words[ordersPlane * k + i] = orders;
      i++;
    }
    return new PackedTickArray(array, masks, k, indexStep, wide, withOrders, words);
  }

  /** The highest initialized slot at or below `slot` (0 .. 89), or -1. */
  initializedAtOrBelow(slot: number): number {
    if (slot >= PACKED_TICK_SLOTS_MAX) slot = PACKED_TICK_SLOTS_MAX - 1;
    let w = (slot / MASK_BITS) | 0;
    let m = this.maskWord(w) & ((2 << (slot - w * MASK_BITS)) - 1);
    while (m === 0) {
      if (--w < 0) return -1;
      m = this.maskWord(w);
    }
    return w * MASK_BITS + 31 - Math.clz32(m);
  }

  /** The lowest initialized slot at or above `slot` (0 .. 89) and below `end`, or -1. */
  initializedAtOrAbove(slot: number, end: number): number {
    if (slot >= PACKED_TICK_SLOTS_MAX) return -1;
    let w = (slot / MASK_BITS) | 0;
    let m = this.maskWord(w) & ~((1 << (slot - w * MASK_BITS)) - 1);
    while (m === 0) {
      if (++w > 2) return -1;
      m = this.maskWord(w);
    }
    const found = w * MASK_BITS + 31 - Math.clz32(m & -m);
    return found < end ? found : -1;
  }

  isInitialized(slot: number): boolean {
    const w = (slot / MASK_BITS) | 0;
    return slot >= 0 && ((this.maskWord(w) >>> (slot - w * MASK_BITS)) & 1) === 1;
  }

  /** liquidityNet of an initialized slot (0n for any other). */
  liquidityNetAt(slot: number): bigint {
    const words = this.words;
    if (words === undefined || !this.isInitialized(slot)) return 0n;
    const k = this.initializedCount;
    const i = this.rank(slot);
    if (!this.wide) return BigInt.asIntN(64, words[NET * k + i]!);
    return BigInt.asIntN(128, (words[NET_HI * k + i]! << 64n) | words[NET * k + i]!);
  }

  /** liquidityGross of an initialized slot (0n for any other). */
  liquidityGrossAt(slot: number): bigint {
    const words = this.words;
    if (words === undefined || !this.isInitialized(slot)) return 0n;
    const k = this.initializedCount;
    const i = this.rank(slot);
    if (!this.wide) return words[GROSS * k + i]!;
    return (words[GROSS_HI * k + i]! << 64n) | words[GROSS * k + i]!;
  }

  /** Limit orders resting on an initialized slot (0n when none). */
  limitOrderAmountAt(slot: number): bigint {
    const words = this.words;
    if (words === undefined || !this.hasLimitOrders || !this.isInitialized(slot)) return 0n;
    return words[this.ordersPlane * this.initializedCount + this.rank(slot)]!;
  }

  /** Fresh Tick objects, initialized ones only, in their slots: the slow path, see above. */
  get ticks(): readonly Tick[] {
    const out = new Array<Tick>(this.slotCount);
    for (let slot = this.initializedAtOrAbove(0, this.slotCount); slot >= 0; slot = this.initializedAtOrAbove(slot + 1, this.slotCount)) {
      const tick: Tick = {
        index: this.startTickIndex + slot * this.indexStep,
        initialized: true,
        liquidityNet: this.liquidityNetAt(slot),
        liquidityGross: this.liquidityGrossAt(slot),
      };
      const orders = this.limitOrderAmountAt(slot);
      if (orders !== 0n) tick.limitOrderAmount = orders;
      out[slot] = tick;
    }
    return out;
  }

  /** Initialized slots below `slot`: the tick's place in the planes. */
  private rank(slot: number): number {
    const w = (slot / MASK_BITS) | 0;
    let r = popcount(this.maskWord(w) & ((1 << (slot - w * MASK_BITS)) - 1));
    if (w > 0) r += popcount(this.mask0);
    if (w > 1) r += popcount(this.mask1);
    return r;
  }

  /** Mask field `w` (0 past the three). */
  private maskWord(w: number): number {
    return w === 0 ? this.mask0 : w === 1 ? this.mask1 : w === 2 ? this.mask2 : 0;
  }
}
