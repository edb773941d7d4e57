/**
 * The compact form of a swap context, in which the pool cache and the RPC pool loader keep tick and
 * bin arrays: what the swap math reads, without what it never reads, so 1,000 pools stay small
 * (decoded tick and bin arrays were ~95% of the cache's heap).
 *
 * - Tick arrays become PackedTickArrays (concentrated/packed-tick-array.ts): their initialized
 *   ticks only (in the simulator's pools ~3% of ticks are), liquidity in typed-array planes, which
 *   slots are initialized in three small-integer masks; no object or BigInt per tick (the holey
 *   arrays of tick objects that came before were most of the cache's heap after the bins were
 *   packed). An array that cannot be packed exactly (values out of range, tick indexes off the
 *   slot grid) keeps its initialized tick objects and holes elsewhere, which the navigator reads
 *   as uninitialized ticks (`t !== undefined && t.initialized`).
 * - Bin arrays become PackedBinArrays (dlmm/packed-bin-array.ts): typed-array planes of the
 *   amounts, prices and liquidity supplies, limit orders only where some bin holds any; no object
 *   or BigInt per bin (bins were most of the cache's heap left after the tick compaction). An
 *   array that cannot be packed exactly (ids not consecutive, values out of range) keeps bin
 *   objects with the zero limit-order fields dropped (absent reads as 0n / false in the DLMM math,
 *   see dlmm/bin-swap.ts) and every zero the one shared `0n`.
 *
 * The result is a new context when there is anything to compact (any bin or tick array not packed
 * yet), else the same object; the caller's objects are never changed. Quotes on
 * the compact form are identical to the unit to quotes on the original (compact-context.test.ts).
 */
import { PackedTickArray } from './concentrated/packed-tick-array.js';
import { PackedBinArray } from './dlmm/packed-bin-array.js';
import type { Bin, BinArray, SwapContext, Tick, TickArray } from './types.js';

/** The one zero the compact bins share. */
const ZERO = 0n;

/** The limit-order fields of a DLMM bin (engine/dex DlmmBin), when the decoder supplied them. */
interface LimitOrderFields {
  openOrderAmount?: bigint;
  processedOrderRemainingAmount?: bigint;
  limitOrderAskSide?: boolean;
}

/**
 * The contexts this module returned: compacting one again returns it as it is (a state stored
 * again with the context the cache already holds costs no copy).
 */
const compacted = new WeakSet<SwapContext>();

/** `context` in the cache's compact form (the same object when it already is). */
export function compactSwapContext(context: SwapContext): SwapContext {
  if (compacted.has(context)) return context;
  const tickArrays = context.tickArrays === undefined ? undefined : compactTickArrays(context.tickArrays);
  const binArrays = context.binArrays === undefined ? undefined : compactBinArrays(context.binArrays);
  let out = context;
  if (tickArrays !== context.tickArrays || binArrays !== context.binArrays) {
    out = { ...context };
    if (tickArrays !== undefined) out.tickArrays = tickArrays;
    if (binArrays !== undefined) out.binArrays = binArrays;
  }
  compacted.add(out);
  return out;
}

function compactTickArrays(arrays: readonly TickArray[]): readonly TickArray[] {
  let out: TickArray[] | undefined;
  for (let i = 0; i < arrays.length; i++) {
    const a = arrays[i]!;
    const c = compactTickArray(a);
    if (c !== a && out === undefined) out = arrays.slice(0, i);
    if (out !== undefined) out.push(c);
  }
  return out ?? arrays;
}

/** `array` packed (the same object when it already is), else its initialized tick objects. */
export function compactTickArray(array: TickArray): TickArray {
  const packed = PackedTickArray.pack(array);
  if (packed !== undefined) return packed;
  const ticks = array.ticks;
  let dense = false;
  for (let i = 0; i < ticks.length; i++) {
    const t = ticks[i];
    if (t !== undefined && !t.initialized) {
      dense = true;
      break;
    }
  }
  if (!dense) return array;
  // A holey array of the same length: the slot arithmetic of the navigator is unchanged.
  const kept = new Array<Tick>(ticks.length);
  for (let i = 0; i < ticks.length; i++) {
    const t = ticks[i];
    if (t !== undefined && t.initialized) kept[i] = t;
  }
  return { ...array, ticks: kept };
}

function compactBinArrays(arrays: readonly BinArray[]): readonly BinArray[] {
  let out: BinArray[] | undefined;
  for (let i = 0; i < arrays.length; i++) {
    const a = arrays[i]!;
    const c = compactBinArray(a);
    if (c !== a && out === undefined) out = arrays.slice(0, i);
    if (out !== undefined) out.push(c);
  }
  return out ?? arrays;
}

/** `array` packed (the same object when it already is), else as bin objects with shared zeros. */
export function compactBinArray(array: BinArray): BinArray {
  const packed = PackedBinArray.pack(array);
  if (packed !== undefined) return packed;
  const bins = array.bins;
  if (bins.length === 0) return array;
  const kept = new Array<Bin>(bins.length);
  for (let i = 0; i < bins.length; i++) kept[i] = compactBin(bins[i]!);
  return { ...array, bins: kept };
}

/** A bin with shared zeros (BigInts compare by value, so a bin is always rebuilt). */
function compactBin(bin: Bin): Bin {
  const orders = bin as Bin & LimitOrderFields;
  const noOrders =
    (orders.openOrderAmount === undefined || orders.openOrderAmount === 0n) &&
    (orders.processedOrderRemainingAmount === undefined || orders.processedOrderRemainingAmount === 0n) &&
    orders.limitOrderAskSide !== true;
  if (noOrders) {
    return { id: bin.id, amountX: shared(bin.amountX), amountY: shared(bin.amountY), price: shared(bin.price), liquiditySupply: shared(bin.liquiditySupply) };
  }
  // Limit orders rest here: every field kept, zeros shared.
  const out: Bin & LimitOrderFields = {
    ...orders,
    amountX: shared(bin.amountX),
    amountY: shared(bin.amountY),
    price: shared(bin.price),
    liquiditySupply: shared(bin.liquiditySupply),
  };
  if (orders.openOrderAmount !== undefined) out.openOrderAmount = shared(orders.openOrderAmount);
  if (orders.processedOrderRemainingAmount !== undefined) out.processedOrderRemainingAmount = shared(orders.processedOrderRemainingAmount);
  return out;
}

function shared(value: bigint): bigint {
  return value === 0n ? ZERO : value;
}
