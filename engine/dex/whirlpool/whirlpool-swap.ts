/**
 * Orca Whirlpool swap quotes: the shared concentrated-liquidity loop with Whirlpool's tick math,
 * price limits [MIN_SQRT_PRICE, 79226673515401279992447579055], 88-tick arrays, and the fee always
 * on the input (`fee_rate` in millionths).
 *
 * Pools created from an adaptive fee tier charge an extra volatility fee whose state lives in an
 * Oracle account that tidepool does not decode (docs/wire-formats.md §9): they are refused with
 * MissingFeeRate rather than quoted too cheaply.
 */
import { swapConcentrated, type ClProtocol } from '../concentrated/swap-loop.js';
import {
  MIN_SQRT_PRICE,
  WHIRLPOOL_MAX_SQRT_PRICE,
  whirlpoolTickAtSqrtPrice,
} from '../concentrated/tick-math.js';
import { whirlpoolTickPrice } from '../concentrated/tick-price-memo.js';
import { checkAmount, refuse } from '../swap-result.js';
import {
  Dex,
  SwapFailure,
  type ConcentratedPool,
  type SwapContext,
  type SwapRequest,
  type SwapResult,
} from '../types.js';
import { WHIRLPOOL_TICK_ARRAY_SIZE } from './tick-array.js';

export const WHIRLPOOL_PROTOCOL: ClProtocol = Object.freeze({
  dex: Dex.Whirlpool,
  name: 'Whirlpool',
  ticksPerArray: WHIRLPOOL_TICK_ARRAY_SIZE,
  sqrtPriceLimitAToB: MIN_SQRT_PRICE,
  sqrtPriceLimitBToA: WHIRLPOOL_MAX_SQRT_PRICE,
  sqrtPriceAtTick: whirlpoolTickPrice,
  tickAtSqrtPrice: whirlpoolTickAtSqrtPrice,
  wide256: true,
});

/** Quotes a swap on an Orca Whirlpool; `ctx.tickArrays` extend how far it may go (tick-navigator.ts). */
export function quoteWhirlpool(pool: ConcentratedPool, req: SwapRequest, ctx?: SwapContext): SwapResult {
  const zero = checkAmount(req);
  if (zero !== undefined) return zero;
  if (pool.adaptiveFee === true) {
    return refuse(SwapFailure.MissingFeeRate, 'Whirlpool uses an adaptive fee tier, whose Oracle account is not decoded');
  }
  if (pool.feeRate === undefined) return refuse(SwapFailure.MissingFeeRate, 'Whirlpool fee rate unknown');
  return swapConcentrated(WHIRLPOOL_PROTOCOL, pool, req, {
    feeRate: pool.feeRate,
    feeOnInput: true,
    tickArrays: ctx?.tickArrays,
  });
}
