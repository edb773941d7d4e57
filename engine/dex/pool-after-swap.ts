/**
 * The state a pool is left in by one exact-in swap, by the pool program's own math (the quoters of
 * this folder), as the simulator's swap program writes it (engine/sim/swap-program.ts):
 *
 * - dexa_amm: the reserves take the pool's whole input (its fee stays in the pool) and pay its
 *   output (`withAmmReserves`: AmmInfo's vault amounts follow);
 * - dexa_clmm, dexc_whirlpool: sqrt price, current tick and active liquidity after every tick the
 *   swap crossed (the quote's `sqrtPriceAfter`, `tickAfter`, `liquidityAfter`); tick arrays keep
 *   their liquidity (a swap only moves fee growth, which no quote reads);
 * - dexb_dlmm: active bin, variable parameters and protocol fees of the pair, and the amounts of
 *   every bin traded in its bin arrays (`quoteDlmmWithBins`).
 *
 * Token-2022 transfer fees: the pool's own amounts (`transferFees.poolAmountIn/Out`) move it.
 * Used by backtests, whose paper fills move the pools they traded.
 */
import { withAmmReserves } from './amm/amm-info.js';
import { binArrayIndexOf, type DlmmBinArray } from './dlmm/bin-array.js';
import { BINS_PER_ARRAY } from './dlmm/constants.js';
import { quoteDlmmWithBins } from './dlmm/dlmm-swap.js';
import { PackedBinArray } from './dlmm/packed-bin-array.js';
import type { DlmmLbPair } from './dlmm/lb-pair.js';
import type { PoolTransferFees } from './token-2022/index.js';
import { quoteSwap } from './quote.js';
import { Dex, SwapMode, type DecodedPool, type SwapContext, type SwapQuote, type SwapRefusal } from './types.js';

export interface PoolAfterSwap {
  ok: true;
  pool: DecodedPool;
  context: SwapContext | undefined;
  quote: SwapQuote;
  /** What the pool itself received and paid (after transfer fees). */
  poolAmountIn: bigint;
  poolAmountOut: bigint;
}

/** The pool and its context after swapping `amountIn` (exact in, `aToB`), or the math's refusal. */
export function poolAfterSwap(pool: DecodedPool, context: SwapContext | undefined, aToB: boolean, amountIn: bigint, transferFees?: PoolTransferFees): PoolAfterSwap | SwapRefusal {
  const req = { aToB, mode: SwapMode.ExactIn, amount: amountIn };
  const quote = quoteSwap(pool, req, context, transferFees);
  if (!quote.ok) return quote;
  const poolAmountIn = quote.transferFees?.poolAmountIn ?? quote.amountIn;
  const poolAmountOut = quote.transferFees?.poolAmountOut ?? quote.amountOut;
  const done = (after: DecodedPool, ctx: SwapContext | undefined): PoolAfterSwap => ({ ok: true, pool: after, context: ctx, quote, poolAmountIn, poolAmountOut });
  switch (pool.dex) {
    case Dex.Amm:
      return done(aToB ? withAmmReserves(pool, pool.reserveA + poolAmountIn, pool.reserveB - poolAmountOut) : withAmmReserves(pool, pool.reserveA - poolAmountOut, pool.reserveB + poolAmountIn), context);
    case Dex.Clmm:
    case Dex.Whirlpool:
      return done({ ...pool, sqrtPrice: quote.sqrtPriceAfter ?? pool.sqrtPrice, tick: quote.tickAfter ?? pool.tick, liquidity: quote.liquidityAfter ?? pool.liquidity }, context);
    case Dex.Dlmm: {
      const walk = quoteDlmmWithBins(pool, { ...req, amount: poolAmountIn }, context);
      if (!walk.ok) return walk;
      const lb = pool;
      const after: DecodedPool = { ...lb, activeId: walk.activeIdAfter ?? lb.activeId, vParameters: walk.vParametersAfter };
      // The protocol's share of the fee, booked in the token it was taken in (an LbPair's fields).
      if ('protocolFeeX' in lb) {
        const pair = lb as DlmmLbPair;
        const onX = aToB && quote.feeInOutput !== true;
        Object.assign(after, { protocolFeeX: onX ? pair.protocolFeeX + walk.protocolFee : pair.protocolFeeX, protocolFeeY: onX ? pair.protocolFeeY : pair.protocolFeeY + walk.protocolFee });
      }
      const binArrays = (context?.binArrays ?? []).map((array) => {
        const index = Number(array.index);
        const touched = walk.bins.filter((b) => binArrayIndexOf(b.id) === index && (lb.address === undefined || array.pool === lb.address));
        if (touched.length === 0) return array;
        if (array instanceof PackedBinArray) {
          return array.withAmounts(touched.map((b) => ({ offset: b.id - index * BINS_PER_ARRAY, amountX: b.amountX, amountY: b.amountY })));
        }
        const bins = [...(array as DlmmBinArray).bins];
        for (const b of touched) {
          const at = b.id - index * BINS_PER_ARRAY;
          bins[at] = { ...bins[at]!, amountX: b.amountX, amountY: b.amountY };
        }
        return { ...(array as DlmmBinArray), bins };
      });
      return done(after, { ...context, binArrays });
    }
  }
}
