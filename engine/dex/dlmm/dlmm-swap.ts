/**
 * `quoteDlmm`: an exact integer DLMM swap across bins, as the program runs it and the Meteora SDK
 * quotes it (`swapQuote`, `swapQuoteExactOut`; dlmm-sdk commons `quote_exact_in/out`).
 *
 * Walk: start at the active bin; X→Y (`swap_for_y`, aToB) moves down, Y→X up. On entering a bin
 * array, the LbPair bitmap says whether it has liquidity; empty arrays are skipped to the edge of
 * the next array with liquidity (`shift_active_bin_if_empty_gap`). Bins that cannot pay in this
 * direction are stepped over. The swap stops in the bin where the amount runs out: a bin emptied
 * exactly leaves the active id on it.
 *
 * Fees: the volatility references move once per swap (`update_references` at `ctx.nowSeconds`),
 * then the accumulator, and with it the fee rate, is set again before each bin that trades.
 *
 * Refusals, never a guess: a bin array the walk needs but was not supplied →
 * InsufficientLiquidityData; no array with liquidity left in the bitmap, or past the program's
 * bin id bounds → InsufficientLiquidity.
 *
 * `quoteDlmmWithBins` runs the same walk and also returns the state the swap leaves, as the
 * program writes it (`Bin::swap`, `update_references`, `update_volatility_accumulator`): the new
 * amounts of every bin it traded in and the pair's variable parameters.
 */
import { priceImpact } from '../price-impact.js';
import { checkAmount, refuse } from '../swap-result.js';
import {
  SwapFailure,
  SwapMode,
  type BinArray,
  type DlmmPool,
  type DlmmVariableParameters,
  type SwapContext,
  type SwapQuote,
  type SwapRefusal,
  type SwapRequest,
  type SwapResult,
} from '../types.js';
import { binArrayIndexOf, binArrayLowerBinId, binArrayUpperBinId } from './bin-array.js';
import { isInBitmapRange, MAX_BITMAP_ARRAY_INDEX, MIN_BITMAP_ARRAY_INDEX, nextBinArrayWithLiquidity } from './bin-array-bitmap.js';
import { binPrice } from './bin-price.js';
import { binMaxAmountOut, newBinStep, swapExactInAtBin, swapExactOutAtBin, type BinStepParams, type SwapBin } from './bin-swap.js';
import { ActivationType, BINS_PER_ARRAY, CollectFeeMode, MAX_BIN_ID, MIN_BIN_ID, ONE_Q64, PairStatus, PairType, U64_MAX } from './constants.js';
import { totalFeeRate, updateReferences, volatilityAccumulatorAt, type VolatilityState } from './fees.js';
import { supportsLimitOrders, type DlmmLbPair } from './lb-pair.js';
import { PackedBinArray, PackedBinView } from './packed-bin-array.js';

/** A DLMM quote: the shared SwapQuote plus how the trading fee is split. */
export interface DlmmSwapQuote extends SwapQuote {
  /** `fee` is the whole trading fee; this is the part the liquidity providers keep (the SDK's `fee`). */
  lpFee: bigint;
  /** The protocol's part as the program books it (the SDK's `protocolFee`). */
  protocolFee: bigint;
  activeIdAfter: number;
}

/** A bin a swap traded in, with its reserves after the swap. */
export interface DlmmBinUpdate {
  id: number;
  amountX: bigint;
  amountY: bigint;
}

/** A DLMM quote with the state the swap leaves in the pair and its bins. */
export interface DlmmSwapWithBins extends DlmmSwapQuote {
  /** Every bin the swap traded in, in walk order, with its amounts after the swap. */
  bins: DlmmBinUpdate[];
  /** The pair's `v_parameters` after the swap (last update at `ctx.nowSeconds`). */
  vParametersAfter: DlmmVariableParameters;
}

/**
 * Quotes a swap on a DLMM pool. `ctx.binArrays` must hold every bin array the swap walks through
 * (arrays of other pools are ignored when `pool.address` is set); `ctx.nowSeconds` defaults to
 * the pool's last volatility update. Throws TpError(InvalidAmount) for an amount outside u64.
 */
export function quoteDlmm(pool: DlmmPool, req: SwapRequest, ctx: SwapContext = {}): SwapResult {
  return walkDlmm(pool, req, ctx, null);
}

/**
 * `quoteDlmm` plus the state the swap leaves: each traded bin's new amounts (the input net of the
 * trading fee goes into the bin, the output leaves it; with the fee on the output, the gross
 * output leaves it) and the pair's variable parameters. Limit orders resting in a traded bin are
 * not modelled: such a swap is refused (InsufficientLiquidityData).
 */
export function quoteDlmmWithBins(pool: DlmmPool, req: SwapRequest, ctx: SwapContext = {}): DlmmSwapWithBins | SwapRefusal {
  return walkDlmm(pool, req, ctx, []) as DlmmSwapWithBins | SwapRefusal;
}

function walkDlmm(pool: DlmmPool, req: SwapRequest, ctx: SwapContext, touched: DlmmBinUpdate[] | null): SwapResult {
  const zero = checkAmount(req);
  if (zero !== undefined) return zero;
  if (pool.status !== PairStatus.Enabled) return refuse(SwapFailure.PoolDisabled, `pool status is ${pool.status}, not enabled`);
  const nowSeconds = ctx.nowSeconds ?? pool.vParameters.lastUpdateTimestamp;
  if (!isActivated(pool, nowSeconds)) return refuse(SwapFailure.PoolDisabled, 'pool is not activated yet');

  const swapForY = req.aToB;
  const exactIn = req.mode === SwapMode.ExactIn;
  const params = pool.parameters;
  const feeOnInput = params.collectFeeMode === CollectFeeMode.InputOnly || !swapForY;
  const step: BinStepParams = {
    swapForY,
    feeOnInput,
    supportLimitOrders: supportsLimitOrders(pool),
    protocolShare: params.protocolShare,
    feeRate: 0n,
  };
  const volatility: VolatilityState = {
    volatilityAccumulator: pool.vParameters.volatilityAccumulator,
    volatilityReference: pool.vParameters.volatilityReference,
    indexReference: pool.vParameters.indexReference,
  };
  updateReferences(volatility, params, pool.activeId, pool.vParameters.lastUpdateTimestamp, nowSeconds);

  const binArrays = ctx.binArrays ?? [];
  const result = newBinStep();
  let remaining = req.amount;
  let totalIn = 0n;
  let totalOut = 0n;
  let tradingFee = 0n;
  let lpFee = 0n;
  let protocolFee = 0n;
  let feeRateAccumulator = -1;

  // Spot price: the active bin's stored price when its array was supplied, else computed.
  let spotPrice = 0n;
  let id = pool.activeId;
  let array: BinArray | undefined;
  let arrayIndex = 0;
  let lowerBinId = 0;
  // A packed array's bins are read through this one view, used only until the walk moves on.
  let view: PackedBinView | undefined;
  for (;;) {
    if (array === undefined || id < lowerBinId || id >= lowerBinId + BINS_PER_ARRAY) {
      let index = binArrayIndexOf(id);
      if (isInBitmapRange(index)) {
        const next = nextBinArrayWithLiquidity(pool.binArrayBitmap, swapForY, index) ?? beyondBitmap(binArrays, pool, swapForY);
        if (next === undefined) {
          return refuse(
            SwapFailure.InsufficientLiquidity,
            `no bin array with liquidity ${swapForY ? 'below' : 'above'} bin ${id} (bitmap extension not consulted)`,
          );
        }
        if (next !== index) {
          id = swapForY ? binArrayUpperBinId(next) : binArrayLowerBinId(next);
          index = next;
        }
      }
      if (id < MIN_BIN_ID || id > MAX_BIN_ID) {
        return refuse(SwapFailure.InsufficientLiquidity, `swap would move past bin ${swapForY ? MIN_BIN_ID : MAX_BIN_ID}`);
      }
      array = findBinArray(binArrays, pool, index);
      if (array === undefined) {
        return refuse(SwapFailure.InsufficientLiquidityData, `bin array ${index} (bins ${binArrayLowerBinId(index)}..${binArrayUpperBinId(index)}) was not supplied`);
      }
      arrayIndex = index;
      lowerBinId = binArrayLowerBinId(index);
    }

    let bin: SwapBin | undefined;
    if (array instanceof PackedBinArray) {
      view ??= new PackedBinView();
      bin = view.moveTo(array, id - lowerBinId) ? view : undefined;
    } else {
      bin = array.bins[id - lowerBinId];
    }
    if (bin === undefined) {
      return refuse(SwapFailure.InsufficientLiquidityData, `bin array ${arrayIndex} has no bin ${id}`);
    }
    if (id === pool.activeId) spotPrice = bin.price;
    if (binMaxAmountOut(bin, swapForY, step.supportLimitOrders) !== 0n) {
      const accumulator = volatilityAccumulatorAt(
        volatility.volatilityReference,
        volatility.indexReference,
        id,
        params.maxVolatilityAccumulator,
      );
      if (accumulator !== feeRateAccumulator) {
        step.feeRate = totalFeeRate(pool.binStep, params, accumulator);
        feeRateAccumulator = accumulator;
      }
      const price = bin.price !== 0n ? bin.price : binPrice(id, pool.binStep);
      if (price === 0n) return refuse(SwapFailure.InsufficientLiquidity, `bin ${id} has no computable price`);
      // A step counts only if it moved the swapped side (the program's and the SDK's rule): an
      // exact-out step in a bin whose whole output goes to the fee is skipped.
      let counts: boolean;
      if (exactIn) {
        swapExactInAtBin(bin, price, remaining, step, result);
        counts = result.amountIn !== 0n;
        if (counts) remaining -= result.amountIn;
      } else {
        swapExactOutAtBin(bin, price, remaining, step, result);
        counts = result.amountOut !== 0n;
        if (counts) remaining -= result.amountOut;
      }
      if (counts && touched !== null) {
        if (step.supportLimitOrders && binMaxAmountOut(bin, swapForY, true) !== binMaxAmountOut(bin, swapForY, false)) {
          return refuse(SwapFailure.InsufficientLiquidityData, `bin ${id} holds limit orders, whose fills are not modelled`);
        }
        // Bin::swap: amount_into_bin = amount_in_with_fees - fee; a fee on the output leaves with it.
        const intoBin = feeOnInput ? result.amountIn - result.tradingFee : result.amountIn;
        const outOfBin = feeOnInput ? result.amountOut : result.amountOut + result.tradingFee;
        touched.push(
          swapForY
            ? { id, amountX: bin.amountX + intoBin, amountY: bin.amountY - outOfBin }
            : { id, amountX: bin.amountX - outOfBin, amountY: bin.amountY + intoBin },
        );
      }
      if (counts) {
        totalIn += result.amountIn;
        totalOut += result.amountOut;
        tradingFee += result.tradingFee;
        lpFee += result.lpFee;
        protocolFee += result.protocolFee;
      }
    }
    if (remaining === 0n) break;
    id = swapForY ? id - 1 : id + 1;
    if (id < MIN_BIN_ID || id > MAX_BIN_ID) {
      return refuse(SwapFailure.InsufficientLiquidity, `swap would move past bin ${swapForY ? MIN_BIN_ID : MAX_BIN_ID}`);
    }
  }

  if (totalIn > U64_MAX || totalOut > U64_MAX) {
    // The program's u64 token amounts overflow: the swap fails on chain whatever the liquidity.
    return refuse(SwapFailure.InsufficientLiquidity, `swap would move ${totalIn} in and ${totalOut} out, beyond u64`);
  }
  if (spotPrice === 0n) spotPrice = binPrice(pool.activeId, pool.binStep);
  const feeInOutput = !feeOnInput;
  const quote: DlmmSwapQuote = {
    ok: true,
    amountIn: totalIn,
    amountOut: totalOut,
    fee: tradingFee,
    lpFee,
    protocolFee,
    priceImpact: priceImpactOf(totalIn, totalOut, tradingFee, feeInOutput, spotPrice, swapForY),
    activeIdAfter: id,
  };
  if (feeInOutput) quote.feeInOutput = true;
  if (touched === null) return quote;
  const withBins: DlmmSwapWithBins = {
    ...quote,
    bins: touched,
    vParametersAfter: {
      volatilityAccumulator: volatilityAccumulatorAt(volatility.volatilityReference, volatility.indexReference, id, params.maxVolatilityAccumulator),
      volatilityReference: volatility.volatilityReference,
      indexReference: volatility.indexReference,
      lastUpdateTimestamp: nowSeconds,
    },
  };
  return withBins;
}

/**
 * Permissioned and customizable pairs refuse swaps before their activation point. Slot-based
 * activation cannot be checked without the current slot and is assumed reached.
 */
function isActivated(pool: DlmmPool, nowSeconds: bigint): boolean {
  const lb = pool as Partial<DlmmLbPair>;
  if (lb.pairType !== PairType.Permissioned && lb.pairType !== PairType.CustomizablePermissionless) return true;
  if (lb.activationType !== ActivationType.Timestamp || lb.activationPoint === undefined) return true;
  return nowSeconds >= lb.activationPoint;
}

/** The supplied array of this pool with this index. */
function findBinArray(binArrays: readonly BinArray[], pool: DlmmPool, index: number): BinArray | undefined {
  const wanted = BigInt(index);
  for (let i = 0; i < binArrays.length; i++) {
    const array = binArrays[i]!;
    if (array.index === wanted && (pool.address === undefined || array.pool === pool.address)) return array;
  }
  return undefined;
}

/**
 * Past the LbPair bitmap only the extension bitmap knows which arrays hold liquidity: without it,
 * the nearest supplied array beyond the bitmap in the swap direction is taken as the next one.
 */
function beyondBitmap(binArrays: readonly BinArray[], pool: DlmmPool, swapForY: boolean): number | undefined {
  let best: number | undefined;
  for (let i = 0; i < binArrays.length; i++) {
    const array = binArrays[i]!;
    if (pool.address !== undefined && array.pool !== pool.address) continue;
    const index = Number(array.index);
    if (swapForY ? index < MIN_BITMAP_ARRAY_INDEX && (best === undefined || index > best) : index > MAX_BITMAP_ARRAY_INDEX && (best === undefined || index < best)) {
      best = index;
    }
  }
  return best;
}

/**
 * SwapQuote.priceImpact against the active bin's price before the swap (Y per X, Q64.64): the fee
 * on the input is taken out of the input, a fee on the output added back to the output.
 */
function priceImpactOf(amountIn: bigint, amountOut: bigint, fee: bigint, feeInOutput: boolean, spotPrice: bigint, swapForY: boolean): number {
  const netIn = feeInOutput ? amountIn : amountIn - fee;
  const grossOut = feeInOutput ? amountOut + fee : amountOut;
  return swapForY ? priceImpact(grossOut, netIn, spotPrice, ONE_Q64) : priceImpact(grossOut, netIn, ONE_Q64, spotPrice);
}
