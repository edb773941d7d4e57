/**
 * A DLMM bin array in struct-of-arrays form, as the pool cache and the RPC pool loader keep it
 * (compact-context.ts): no object and no BigInt per bin, only one BigUint64Array of word planes
 *
 *   words: [ amountX × n | amountY × n | price lo × n | price hi × n | supply lo × n | supply hi × n ]
 *          + [ open orders × n | processed orders remaining × n | ask side (0 / 1) × n ]
 *
 * (price and liquidity supply are u128: two u64 halves); the three limit-order planes are there
 * only when some bin holds orders. One buffer per array: creating an off-heap buffer is most of
 * what packing costs. The swap math (dlmm-swap.ts) walks a packed array through one PackedBinView
 * moved from bin to bin, keeping nothing per bin; the BigInts a read allocates die young.
 *
 * Bin `i` has id `firstId + i`: only arrays whose bins have consecutive ids are packed
 * (`PackedBinArray.pack`), which every decoded BinArray account has.
 *
 * `bins` materializes fresh Bin objects on each access: it keeps a packed array valid wherever a
 * BinArray is read outside the swap math (encoders, tests, the CLI), never on a hot path.
 */
import type { Bin, BinArray } from '../types.js';
import type { DlmmBin } from './bin-array.js';
import { U128_MAX, U64_MAX } from './constants.js';

// Word planes of `words`, each `binCount` long.
const AMOUNT_X = 0;
const AMOUNT_Y = 1;
const PRICE_LO = 2;
const PRICE_HI = 3;
const SUPPLY_LO = 4;
const SUPPLY_HI = 5;
const PLANES = 6;
// The limit-order planes, after those.
const OPEN_ORDER = 6;
const PROCESSED_ORDER = 7;
const ASK_SIDE = 8;
const PLANES_WITH_ORDERS = 9;

/** A bin's new reserves, at its offset in the array (bin id minus the array's first id). */
export interface PackedBinAmounts {
  offset: number;
  amountX: bigint;
  amountY: bigint;
}

export class PackedBinArray implements BinArray {
  readonly pool: string;
  readonly index: bigint;
  /** The decoder's fields of a DlmmBinArray, when the packed array had them. */
  readonly address: string | undefined;
  readonly version: number | undefined;
  /** The id of the first bin; bin `i` has id `firstId + i`. */
  readonly firstId: number;
  readonly binCount: number;
  /** Whether some bin holds limit orders (then `words` has the limit-order planes too). */
  readonly hasLimitOrders: boolean;
  private readonly words: BigUint64Array;

  private constructor(
    from: BinArray,
    firstId: number,
    binCount: number,
    words: BigUint64Array,
  ) {
    const decoded = from as Partial<{ address: string; version: number }>;
    this.pool = from.pool;
    this.index = from.index;
    this.address = decoded.address;
    this.version = decoded.version;
    this.firstId = firstId;
    this.binCount = binCount;
    this.words = words;
    this.hasLimitOrders = words.length === PLANES_WITH_ORDERS * binCount;
  }

  /**
   * `array` packed, or undefined when it cannot be without loss: no bins, ids not consecutive, or
   * an amount outside u64 (a price or supply outside u128).
   */
  static pack(array: BinArray): PackedBinArray | undefined {
    if (array instanceof PackedBinArray) return array;
    const bins = array.bins as readonly (Bin & Partial<DlmmBin>)[];
    const n = bins.length;
    if (n === 0) return undefined;
    const firstId = bins[0]!.id;
    let withOrders = false;
    for (let i = 0; i < n && !withOrders; i++) {
      const b = bins[i]!;
      withOrders = (b.openOrderAmount !== undefined && b.openOrderAmount !== 0n) || (b.processedOrderRemainingAmount !== undefined && b.processedOrderRemainingAmount !== 0n) || b.limitOrderAskSide === true;
    }
    // Stores checked before they are made: a BigUint64Array store keeps the low 64 bits
    // (ToBigUint64), which is the low half of a u128; the planes start at zero, so only a non-zero
    // high half or limit order is written.
    const words = new BigUint64Array((withOrders ? PLANES_WITH_ORDERS : PLANES) * n);
    for (let i = 0; i < n; i++) {
      const b = bins[i]!;
      const { amountX, amountY, price, liquiditySupply } = b;
      if (b.id !== firstId + i || !isU64(amountX) || !isU64(amountY) || !isU128(price) || !isU128(liquiditySupply)) return undefined;
      words[AMOUNT_X * n + i] = amountX;
      words[AMOUNT_Y * n + i] = amountY;
      words[PRICE_LO * n + i] = price;
      if (price > U64_MAX) words[PRICE_HI * n + i] = price >> 64n;
      words[SUPPLY_LO * n + i] = liquiditySupply;
      if (liquiditySupply > U64_MAX) words[SUPPLY_HI * n + i] = liquiditySupply >> 64n;
      if (!withOrders) continue;
      const open = b.openOrderAmount ?? 0n;
      const processed = b.processedOrderRemainingAmount ?? 0n;
      if (!isU64(open) || !isU64(processed)) return undefined;
      words[OPEN_ORDER * n + i] = open;
      words[PROCESSED_ORDER * n + i] = processed;
      if (b.limitOrderAskSide === true) words[ASK_SIDE * n + i] = 1n;
    }
    return new PackedBinArray(array, firstId, n, words);
  }

  amountXAt(offset: number): bigint {
    return this.words[AMOUNT_X * this.binCount + offset]!;
  }

  amountYAt(offset: number): bigint {
    return this.words[AMOUNT_Y * this.binCount + offset]!;
  }

  priceAt(offset: number): bigint {
    return this.u128At(PRICE_LO, PRICE_HI, offset);
  }

  liquiditySupplyAt(offset: number): bigint {
    return this.u128At(SUPPLY_LO, SUPPLY_HI, offset);
  }

  openOrderAmountAt(offset: number): bigint {
    return this.hasLimitOrders ? this.words[OPEN_ORDER * this.binCount + offset]! : 0n;
  }

  processedOrderRemainingAmountAt(offset: number): bigint {
    return this.hasLimitOrders ? this.words[PROCESSED_ORDER * this.binCount + offset]! : 0n;
  }

  limitOrderAskSideAt(offset: number): boolean {
    return this.hasLimitOrders && this.words[ASK_SIDE * this.binCount + offset] === 1n;
  }

  /** Fresh Bin objects (DlmmBins when some bin holds limit orders): the slow path, see above. */
  get bins(): readonly Bin[] {
    const out = new Array<Bin>(this.binCount);
    for (let i = 0; i < this.binCount; i++) {
      const bin: Bin = { id: this.firstId + i, amountX: this.amountXAt(i), amountY: this.amountYAt(i), price: this.priceAt(i), liquiditySupply: this.liquiditySupplyAt(i) };
      if (!this.hasLimitOrders) {
        out[i] = bin;
        continue;
      }
      const withOrders: DlmmBin = { ...bin, openOrderAmount: this.openOrderAmountAt(i), processedOrderRemainingAmount: this.processedOrderRemainingAmountAt(i), limitOrderAskSide: this.limitOrderAskSideAt(i) };
      out[i] = withOrders;
    }
    return out;
  }

  /**
   * A copy with new reserves in the given bins (offsets outside the array are ignored): packed, or
   * plain Bin objects when a new amount does not fit u64.
   */
  withAmounts(updates: readonly PackedBinAmounts[]): BinArray {
    const n = this.binCount;
    if (!updates.every((u) => isU64(u.amountX) && isU64(u.amountY))) {
      const bins = [...this.bins];
      for (const u of updates) if (u.offset >= 0 && u.offset < n) bins[u.offset] = { ...bins[u.offset]!, amountX: u.amountX, amountY: u.amountY };
      return { pool: this.pool, index: this.index, bins };
    }
    const words = this.words.slice();
    for (const u of updates) {
      if (!(u.offset >= 0 && u.offset < n)) continue;
      words[AMOUNT_X * n + u.offset] = u.amountX;
      words[AMOUNT_Y * n + u.offset] = u.amountY;
    }
    return new PackedBinArray(this, this.firstId, n, words);
  }

  private u128At(lo: number, hi: number, offset: number): bigint {
    const n = this.binCount;
    const high = this.words[hi * n + offset]!;
    const low = this.words[lo * n + offset]!;
    return high === 0n ? low : (high << 64n) | low;
  }
}

/**
 * A window on one bin of a PackedBinArray, moved from bin to bin by a walk (synchronous use only):
 * `moveTo` reads the amounts and limit orders, the u128 price is read on first use (a bin the
 * walk steps over never needs it) and the liquidity supply on each use (the swap math never
 * reads it).
 */
export class PackedBinView implements DlmmBin {
  id = 0;
  amountX = 0n;
  amountY = 0n;
  openOrderAmount = 0n;
  processedOrderRemainingAmount = 0n;
  limitOrderAskSide = false;
  private array: PackedBinArray | undefined;
  private offset = 0;
  private priceRead: bigint | undefined;

  /** Points the view at bin `offset` of `array`; false, and the view unchanged, past either end. */
  moveTo(array: PackedBinArray, offset: number): boolean {
    if (!(offset >= 0 && offset < array.binCount)) return false;
    this.array = array;
    this.offset = offset;
    this.priceRead = undefined;
    this.id = array.firstId + offset;
    this.amountX = array.amountXAt(offset);
    this.amountY = array.amountYAt(offset);
    this.openOrderAmount = array.openOrderAmountAt(offset);
    this.processedOrderRemainingAmount = array.processedOrderRemainingAmountAt(offset);
    this.limitOrderAskSide = array.limitOrderAskSideAt(offset);
    return true;
  }

  get price(): bigint {
    return (this.priceRead ??= this.array === undefined ? 0n : this.array.priceAt(this.offset));
  }

  get liquiditySupply(): bigint {
    return this.array === undefined ? 0n : this.array.liquiditySupplyAt(this.offset);
  }
}

function isU64(v: bigint): boolean {
  return v >= 0n && v <= U64_MAX;
}

function isU128(v: bigint): boolean {
  return v >= 0n && v <= U128_MAX;
}
