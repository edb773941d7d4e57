/**
 * Raydium CLMM swap quotes: the shared concentrated-liquidity loop with Raydium's tick math, its
 * price limits (MIN_SQRT_PRICE + 1, MAX_SQRT_PRICE - 1, as the SDK and program default them),
 * 60-tick arrays found through the pool's tick_array_bitmap, the fee side chosen by `fee_on`, and
 * the dynamic fee when the pool has one (dynamic-fee.ts; `ctx.nowSeconds` is the block time,
 * default the fee state's last update).
 *
 * Refused: pools with swaps disabled (status bit 4), pools without their AmmConfig fee
 * (`withAmmConfig`), and swaps that reach a tick with resting limit orders (not modelled).
 */
import { swapConcentrated, type ClProtocol } from '../concentrated/swap-loop.js';
import {
  MIN_SQRT_PRICE,
  RAYDIUM_MAX_SQRT_PRICE,
  raydiumTickAtSqrtPrice,
} from '../concentrated/tick-math.js';
import { raydiumTickPrice } from '../concentrated/tick-price-memo.js';
import { checkAmount, refuse } from '../swap-result.js';
import {
  Dex,
  SwapFailure,
  type ConcentratedPool,
  type SwapContext,
  type SwapRequest,
  type SwapResult,
} from '../types.js';
import { ClmmDynamicFeeState } from './dynamic-fee.js';
import { CLMM_TICK_ARRAY_SIZE } from './tick-array.js';

export const CLMM_PROTOCOL: ClProtocol = Object.freeze({
  dex: Dex.Clmm,
  name: 'Raydium CLMM',
  ticksPerArray: CLMM_TICK_ARRAY_SIZE,
  sqrtPriceLimitAToB: MIN_SQRT_PRICE + 1n,
  sqrtPriceLimitBToA: RAYDIUM_MAX_SQRT_PRICE - 1n,
  sqrtPriceAtTick: raydiumTickPrice,
  tickAtSqrtPrice: raydiumTickAtSqrtPrice,
  wide256: false,
});

/** `fee_on` values (PoolState +390). */
export const ClmmFeeOn = { FromInput: 0, TokenAOnly: 1, TokenBOnly: 2 } as const;

/** Whether the fee is taken from the input token for this direction (SDK PoolUtil.isFeeOnInput). */
export function clmmFeeOnInput(feeOn: number | undefined, aToB: boolean): boolean {
  if (feeOn === ClmmFeeOn.TokenAOnly) return aToB;
  if (feeOn === ClmmFeeOn.TokenBOnly) return !aToB;
  return true;
}

/** Quotes a swap on a Raydium CLMM pool (with its fee rate from `withAmmConfig`). */
export function quoteClmm(pool: ConcentratedPool, req: SwapRequest, ctx?: SwapContext): SwapResult {
  const zero = checkAmount(req);
  if (zero !== undefined) return zero;
  if (pool.swapDisabled === true) return refuse(SwapFailure.PoolDisabled, 'Raydium CLMM pool has swaps disabled');
  if (pool.feeRate === undefined) {
    return refuse(SwapFailure.MissingFeeRate, 'Raydium CLMM fee rate unknown: supply the pool\'s AmmConfig account');
  }
  const dynamicFee = pool.dynamicFee;
  return swapConcentrated(CLMM_PROTOCOL, pool, req, {
    feeRate: pool.feeRate,
    feeOnInput: clmmFeeOnInput(pool.feeOn, req.aToB),
    variableFee:
      dynamicFee === undefined
        ? undefined
        : new ClmmDynamicFeeState(dynamicFee, pool.tick, pool.tickSpacing, ctx?.nowSeconds ?? dynamicFee.lastUpdateTimestamp),
    tickArrays: ctx?.tickArrays,
    tickArrayBitmap: pool.tickArrayBitmap,
  });
}
