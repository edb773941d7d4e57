/**
 * The body of a successful `GET /quote`, in the real swap API's shape (docs/wire-formats.md §7; the types are
 * engine/swap-api's, shared with the quote service's `GET /swap/v1/quote`): u64 amounts
 * as decimal strings, `priceImpactPct` as a decimal-string fraction, one route-plan step per hop
 * (`percent: 100`, `bps: 10000`: no split routes), `contextSlot` and `timeTaken` (seconds) as
 * numbers.
 *
 * Amount rules:
 * - ExactIn: `inAmount` is the request's amount; the platform fee is cut from the route's output,
 *   floor(out * feeBps / 10000), and `outAmount` is what is left; `otherAmountThreshold` =
 *   floor(outAmount * (10000 - slippageBps) / 10000).
 * - ExactOut: `outAmount` is the request's amount; the platform fee is charged on the input (the
 *   real API takes ExactOut fees in the input mint), floor(in * feeBps / 10000) on top of what the
 *   route needs, and `inAmount` includes it; `otherAmountThreshold` =
 *   floor(inAmount * (10000 + slippageBps) / 10000).
 * - The route plan shows the hops' own amounts, which chain exactly (a hop's outAmount is the next
 *   hop's inAmount); platform fees are outside it.
 * - priceImpactPct: the route's price impact as a fraction (0.0012 = 0.12 %), 1 - prod(1 - hop
 *   impact), each hop's from the engine (execution vs spot price before the swap, after the fee).
 */
import { SwapMode } from '../../dex/index.js';
import { BPS_DENOMINATOR, U64_MAX } from '../../swap-api/index.js';
import {
  quoteApiError,
  QuoteErrorCode,
  formatFraction,
  type QuoteParams,
  type QuoteResponse,
  type RoutePlanStep,
} from '../../swap-api/index.js';
import type { Route } from './route-search.js';

const BPS = BigInt(BPS_DENOMINATOR);

/** The response for `route`. Throws QuoteApiError when an amount does not fit in a u64. */
export function buildQuoteResponse(params: QuoteParams, route: Route, contextSlot: bigint, timeTakenSeconds: number): QuoteResponse {
  const feeBps = params.platformFeeBps;
  const slippage = BigInt(params.slippageBps);
  let inAmount: bigint;
  let outAmount: bigint;
  let threshold: bigint;
  let fee = 0n;
  if (params.swapMode === SwapMode.ExactIn) {
    if (feeBps !== undefined) fee = (route.outAmount * BigInt(feeBps)) / BPS;
    inAmount = route.inAmount;
    outAmount = route.outAmount - fee;
    threshold = (outAmount * (BPS - slippage)) / BPS;
  } else {
    if (feeBps !== undefined) fee = (route.inAmount * BigInt(feeBps)) / BPS;
    inAmount = route.inAmount + fee;
    outAmount = route.outAmount;
    threshold = (inAmount * (BPS + slippage)) / BPS;
    if (inAmount > U64_MAX) {
      throw quoteApiError(QuoteErrorCode.CouldNotFindAnyRoute, 'Could not find any route');
    }
    if (threshold > U64_MAX) {
      throw quoteApiError(
        QuoteErrorCode.CannotComputeOtherAmountThreshold,
        `Cannot compute other amount threshold: ${inAmount} plus ${params.slippageBps} bps exceeds a u64`,
      );
    }
  }

  let unchanged = 1;
  const routePlan: RoutePlanStep[] = new Array(route.hops.length);
  for (let i = 0; i < route.hops.length; i++) {
    const hop = route.hops[i]!;
    const q = hop.quote;
    unchanged *= 1 - clampFraction(q.priceImpact);
    routePlan[i] = {
      swapInfo: {
        ammKey: hop.view.address,
        label: hop.view.label,
        inputMint: hop.inputMint,
        outputMint: hop.outputMint,
        inAmount: q.amountIn.toString(),
        outAmount: q.amountOut.toString(),
        feeAmount: q.fee.toString(),
        feeMint: q.feeInOutput === true ? hop.outputMint : hop.inputMint,
      },
      percent: 100,
      bps: BPS_DENOMINATOR,
    };
  }

  return {
    inputMint: params.inputMint,
    inAmount: inAmount.toString(),
    outputMint: params.outputMint,
    outAmount: outAmount.toString(),
    otherAmountThreshold: threshold.toString(),
    swapMode: params.swapMode,
    slippageBps: params.slippageBps,
    platformFee: feeBps === undefined ? null : { amount: fee.toString(), feeBps },
    priceImpactPct: formatFraction(1 - unchanged),
    routePlan,
    contextSlot: Number(contextSlot),
    timeTaken: timeTakenSeconds,
  };
}

function clampFraction(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}

export { formatFraction, type PlatformFee, type QuoteResponse, type RoutePlanStep, type SwapInfo } from '../../swap-api/index.js';
