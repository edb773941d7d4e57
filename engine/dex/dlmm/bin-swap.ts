/**
 * One swap step inside one DLMM bin (constant sum at the bin's price), as the program and the
 * Meteora SDK compute it (`swap_exact_in_quote_at_bin`, `swap_exact_out_quote_at_bin`).
 *
 * A bin pays out in layers at the same price: the market makers' reserve first, then what remains
 * of partly filled limit orders, then open limit orders (pairs that support limit orders only).
 * Each layer's input is rounded up on its own. Outputs round down, inputs up.
 *
 * Fee modes (`collect_fee_mode`): fee on input (taken from the gross input before filling, then
 * recomputed on the net input actually used when the bin runs dry), or fee on output (cut from
 * the bin's gross output; collect_fee_mode 1 for X→Y).
 */
import type { Bin } from '../types.js';
import type { DlmmBin } from './bin-array.js';
import { SCALE_OFFSET, U64_MAX } from './constants.js';
import { feeFromGross, feeOnNet, protocolFeeOfSplit } from './fees.js';

/** A bin, with its limit-order amounts when the caller has them (see DlmmBin). */
export type SwapBin = Bin & Partial<Pick<DlmmBin, 'openOrderAmount' | 'processedOrderRemainingAmount' | 'limitOrderAskSide'>>;

/** What a bin step pays and takes. Reused across steps: the caller owns one per swap. */
export interface BinStep {
  /** Input taken, fee included when the fee is on the input. */
  amountIn: bigint;
  /** Output paid, fee excluded when the fee is on the output. */
  amountOut: bigint;
  /** The whole trading fee of the step (input token, or output token when the fee is on output). */
  tradingFee: bigint;
  /** The liquidity providers' part of the trading fee (market makers and limit-order placers). */
  lpFee: bigint;
  /**
   * The protocol's part, as the program books it: its share of the trading fee, plus, for exact
   * output, the bin's rounding surplus over the requested output when that exceeds 1 atom.
   */
  protocolFee: bigint;
}

/** Settings of one bin step that stay fixed while the swap crosses bins (fee rate excepted). */
export interface BinStepParams {
  swapForY: boolean;
  feeOnInput: boolean;
  supportLimitOrders: boolean;
  protocolShare: number;
  /** Total fee rate at this bin, 1e-9 units. */
  feeRate: bigint;
}

export function newBinStep(): BinStep {
  return { amountIn: 0n, amountOut: 0n, tradingFee: 0n, lpFee: 0n, protocolFee: 0n };
}

/** Input needed for `amountOut` at `price`, rounded up (`get_amount_in`, Rounding::Up). */
export function amountInForOut(amountOut: bigint, price: bigint, swapForY: boolean): bigint {
  if (swapForY) {
    const num = amountOut << SCALE_OFFSET;
    const q = num / price;
    return q * price === num ? q : q + 1n;
  }
  const num = amountOut * price;
  const q = num >> SCALE_OFFSET;
  return q << SCALE_OFFSET === num ? q : q + 1n;
}

/** Output for `amountIn` at `price`, rounded down (`get_amount_out`). */
export function amountOutForIn(amountIn: bigint, price: bigint, swapForY: boolean): bigint {
  return swapForY ? (amountIn * price) >> SCALE_OFFSET : (amountIn << SCALE_OFFSET) / price;
}

/** The bin's market-maker reserve on the output side. */
function mmAmountOut(bin: SwapBin, swapForY: boolean): bigint {
  return swapForY ? bin.amountY : bin.amountX;
}

/** Whether the bin's limit orders are on the side this direction fills (X→Y fills bids). */
function limitOrdersMatch(bin: SwapBin, swapForY: boolean): boolean {
  return bin.limitOrderAskSide === true ? !swapForY : swapForY;
}

/** Everything the bin can pay out in this direction (`get_bin_max_amount_out`). */
export function binMaxAmountOut(bin: SwapBin, swapForY: boolean, supportLimitOrders: boolean): bigint {
  const mm = mmAmountOut(bin, swapForY);
  if (!supportLimitOrders || !limitOrdersMatch(bin, swapForY)) return mm;
  return mm + (bin.openOrderAmount ?? 0n) + (bin.processedOrderRemainingAmount ?? 0n);
}

// Fill scratch (synchronous, not re-entrant): input used, output paid, market makers' input.
let fillIn = 0n;
let fillOut = 0n;
let fillMmIn = 0n;

/** Fills `amount` (net of fee) against the bin's layers; leaves the totals in the fill scratch. */
function fill(bin: SwapBin, price: bigint, amount: bigint, swapForY: boolean, supportLimitOrders: boolean): void {
  fillIn = 0n;
  fillOut = 0n;
  let left = fillLayer(price, amount, mmAmountOut(bin, swapForY), swapForY);
  fillMmIn = fillIn;
  if (!supportLimitOrders || left === 0n || !limitOrdersMatch(bin, swapForY)) return;
  left = fillLayer(price, left, bin.processedOrderRemainingAmount ?? 0n, swapForY);
  if (left === 0n) return;
  fillLayer(price, left, bin.openOrderAmount ?? 0n, swapForY);
}

/** One layer of `layerOut` at `price` (`calculate_exact_in_fill_amount`); returns the input left. */
function fillLayer(price: bigint, amount: bigint, layerOut: bigint, swapForY: boolean): bigint {
  if (layerOut === 0n) return amount;
  const maxIn = amountInForOut(layerOut, price, swapForY);
  if (amount >= maxIn) {
    fillIn += maxIn;
    fillOut += layerOut;
    return amount - maxIn;
  }
  fillIn += amount;
  fillOut += amountOutForIn(amount, price, swapForY);
  return 0n;
}

/**
 * Swaps up to `amountIn` (fee included when on input) into the bin at `price`. When the bin runs
 * dry, `out.amountIn` is less than `amountIn`: the input it could use plus its fee.
 */
export function swapExactInAtBin(bin: SwapBin, price: bigint, amountIn: bigint, p: BinStepParams, out: BinStep): BinStep {
  let tradingFee = 0n;
  let net = amountIn;
  if (p.feeOnInput) {
    tradingFee = feeFromGross(amountIn, p.feeRate);
    net = amountIn - tradingFee;
  }
  fill(bin, price, net, p.swapForY, p.supportLimitOrders);
  let usedIn = amountIn;
  const left = net - fillIn;
  if (left !== 0n) {
    net -= left;
    if (p.feeOnInput) {
      tradingFee = feeOnNet(net, p.feeRate);
      usedIn = net + tradingFee;
    } else {
      usedIn = net;
    }
  }
  let paid = fillOut;
  if (!p.feeOnInput) {
    tradingFee = feeFromGross(paid, p.feeRate);
    paid -= tradingFee;
  }
  out.amountIn = usedIn;
  out.amountOut = paid;
  out.tradingFee = tradingFee;
  out.protocolFee = protocolFeeOfSplit(tradingFee, p.protocolShare, fillMmIn, fillIn);
  // When the fee ate the whole input, nothing was filled and the SDK splits no fee at all.
  out.lpFee = fillIn === 0n ? 0n : tradingFee - out.protocolFee;
  return out;
}

/**
 * Swaps for up to `amountOut` (fee excluded when on output) from the bin at `price`. When the bin
 * cannot pay it all, it is drained and `out.amountOut` says what it paid.
 */
export function swapExactOutAtBin(bin: SwapBin, price: bigint, amountOut: bigint, p: BinStepParams, out: BinStep): BinStep {
  const grossOut = p.feeOnInput ? amountOut : amountOut + feeOnNet(amountOut, p.feeRate);
  if (grossOut >= binMaxAmountOut(bin, p.swapForY, p.supportLimitOrders)) {
    return swapExactInAtBin(bin, price, U64_MAX, p, out);
  }
  const netIn = netInForOut(bin, price, grossOut, p.swapForY);
  const grossIn = p.feeOnInput ? netIn + feeOnNet(netIn, p.feeRate) : netIn;
  swapExactInAtBin(bin, price, grossIn, p, out);
  // Rounding up the input can pay slightly more than asked; the program books a surplus above
  // one atom to the protocol and pays exactly the requested amount.
  const surplus = out.amountOut - amountOut;
  if (surplus > 1n) out.protocolFee += surplus;
  out.amountOut = amountOut;
  return out;
}

/** Input (net of fee) that buys `grossOut` from the bin's layers (`get_excluded_fee_amount_in`). */
function netInForOut(bin: SwapBin, price: bigint, grossOut: bigint, swapForY: boolean): bigint {
  const mm = mmAmountOut(bin, swapForY);
  let take = grossOut < mm ? grossOut : mm;
  let amountIn = amountInForOut(take, price, swapForY);
  let left = grossOut - take;
  if (left === 0n) return amountIn;
  // The SDK counts limit-order layers here whatever the pair supports; this path is reached only
  // when the bin can pay `grossOut`, which without limit-order support means from `mm` alone.
  const matches = limitOrdersMatch(bin, swapForY);
  const processed = matches ? (bin.processedOrderRemainingAmount ?? 0n) : 0n;
  take = left < processed ? left : processed;
  amountIn += amountInForOut(take, price, swapForY);
  left -= take;
  if (left === 0n) return amountIn;
  const open = matches ? (bin.openOrderAmount ?? 0n) : 0n;
  take = left < open ? left : open;
  return amountIn + amountInForOut(take, price, swapForY);
}
