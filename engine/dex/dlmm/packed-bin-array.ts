/**
 * A DLMM bin array in struct-of-arrays form, as the pool cache and the RPC pool loader keep it
 * (compact-context.ts): no object and no BigInt per bin, only one BigUint64Array of word planes
 *
 *   words: [ amountX × n | amountY × n | price lo × n | price hi × n | supply lo × n | supply hi × n ]
 *
 * (price and liquidity supply are u128: two u64 halves), plus limit-order planes only when some
 * bin holds orders. The swap math (dlmm-swap.ts) walks a packed array through one PackedBinView
 * moved from bin to bin, keeping nothing per bin; the BigInts a read allocates die young.
 *
 * Bin `i` has id `firstId + i`: only arrays whose bins have consecutive ids are packed
 * (`packBinArray`), which every decoded BinArray account has.
 *
 * `bins` materializes fresh Bin objects on each access: it keeps a packed array valid wherever a
 * BinArray is read outside the swap math (encoders, tests, the CLI), never on a hot path.
 */
import type { Bin, BinArray } from '../types.js';
import type { DlmmBin } from './bin-array.js';
import { U64_MAX } from './constants.js';

const U128_MAX = (1n << 128n) - 1n;

// Word planes of `words`, each `binCount` long.
const AMOUNT_X = 0;
const AMOUNT_Y = 1;
const PRICE_LO = 2;
const PRICE_HI = 3;
const SUPPLY_LO = 4;
const SUPPLY_HI = 5;
const PLANES = 6;
// Word planes of `orders`.
const OPEN_ORDER = 0;
const PROCESSED_ORDER = 1;
const ORDER_PLANES = 2;

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
  private readonly words: BigUint64Array;
  /** Limit orders ([open | processed remaining] planes and the ask sides), when any bin has some. */
  private readonly orders: BigUint64Array | undefined;
  private readonly askSides: Uint8Array | undefined;

  private constructor(
    from: BinArray,
    firstId: number,
    binCount: number,
    words: BigUint64Array,
    orders: BigUint64Array | undefined,
    askSides: Uint8Array | undefined,
  ) {
    const decoded = from as Partial<{ address: string; version: number }>;
    this.pool = from.pool;
    this.index = from.index;
    this.address = decoded.address;
    this.version = decoded.version;
    this.firstId = firstId;
    this.binCount = binCount;
    this.words = words;
    this.orders = orders;
    this.askSides = askSides;
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
    for (let i = 0; i < n; i++) {
      const b = bins[i]!;
      if (b.id !== firstId + i || !isU64(b.amountX) || !isU64(b.amountY) || !isU128(b.price) || !isU128(b.liquiditySupply)) return undefined;
      const open = b.openOrderAmount ?? 0n;
      const processed = b.processedOrderRemainingAmount ?? 0n;
      if (!isU64(open) || !isU64(processed)) return undefined;
      if (open !== 0n || processed !== 0n || b.limitOrderAskSide === true) withOrders = true;
    }
    const words = new BigUint64Array(PLANES * n);
    const orders = withOrders ? new BigUint64Array(ORDER_PLANES * n) : undefined;
    const askSides = withOrders ? new Uint8Array(n) : undefined;
    for (let i = 0; i < n; i++) {
      const b = bins[i]!;
      words[AMOUNT_X * n + i] = b.amountX;
      words[AMOUNT_Y * n + i] = b.amountY;
      words[PRICE_LO * n + i] = b.price & U64_MAX;
      words[PRICE_HI * n + i] = b.price >> 64n;
      words[SUPPLY_LO * n + i] = b.liquiditySupply & U64_MAX;
      words[SUPPLY_HI * n + i] = b.liquiditySupply >> 64n;
      if (orders !== undefined && askSides !== undefined) {
        orders[OPEN_ORDER * n + i] = b.openOrderAmount ?? 0n;
        orders[PROCESSED_ORDER * n + i] = b.processedOrderRemainingAmount ?? 0n;
        askSides[i] = b.limitOrderAskSide === true ? 1 : 0;
      }
    }
    return new PackedBinArray(array, firstId, n, words, orders, askSides);
  }

  /** Whether some bin holds limit orders (then materialized bins carry the limit-order fields). */
  get hasLimitOrders(): boolean {
    return this.orders !== undefined;
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
    return this.orders === undefined ? 0n : this.orders[OPEN_ORDER * this.binCount + offset]!;
  }

  processedOrderRemainingAmountAt(offset: number): bigint {
    return this.orders === undefined ? 0n : this.orders[PROCESSED_ORDER * this.binCount + offset]!;
  }

  limitOrderAskSideAt(offset: number): boolean {
    return this.askSides !== undefined && this.askSides[offset] === 1;
  }

  /**
   * Bin `offset` (0-based) written into `into`, which is returned; undefined past either end.
   * Every field is written (limit orders as zeros when none rest), so one object serves a walk.
   */
  readBin(offset: number, into: DlmmBin): DlmmBin | undefined {
    const n = this.binCount;
    if (!(offset >= 0 && offset < n)) return undefined;
    into.id = this.firstId + offset;
    into.amountX = this.words[AMOUNT_X * n + offset]!;
    into.amountY = this.words[AMOUNT_Y * n + offset]!;
    into.price = this.u128At(PRICE_LO, PRICE_HI, offset);
    into.liquiditySupply = this.u128At(SUPPLY_LO, SUPPLY_HI, offset);
    const orders = this.orders;
    if (orders === undefined) {
      into.openOrderAmount = 0n;
      into.processedOrderRemainingAmount = 0n;
      into.limitOrderAskSide = false;
    } else {
      into.openOrderAmount = orders[OPEN_ORDER * n + offset]!;
      into.processedOrderRemainingAmount = orders[PROCESSED_ORDER * n + offset]!;
      into.limitOrderAskSide = this.askSides![offset] === 1;
    }
    return into;
  }

  /** Fresh Bin objects (DlmmBins when some bin holds limit orders): the slow path, see above. */
  get bins(): readonly Bin[] {
    const out = new Array<Bin>(this.binCount);
    for (let i = 0; i < this.binCount; i++) {
      const bin = this.readBin(i, binScratch())!;
      if (this.orders === undefined) {
        out[i] = { id: bin.id, amountX: bin.amountX, amountY: bin.amountY, price: bin.price, liquiditySupply: bin.liquiditySupply };
      } else {
        out[i] = bin;
      }
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
    return new PackedBinArray(this, this.firstId, n, words, this.orders, this.askSides);
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

/** A bin object for `readBin` to fill (one per walk or per caller; every field present). */
export function binScratch(): DlmmBin {
  return { id: 0, amountX: 0n, amountY: 0n, price: 0n, liquiditySupply: 0n, openOrderAmount: 0n, processedOrderRemainingAmount: 0n, limitOrderAskSide: false };
}

function isU64(v: bigint): boolean {
  return v >= 0n && v <= U64_MAX;
}

function isU128(v: bigint): boolean {
  return v >= 0n && v <= U128_MAX;
}
