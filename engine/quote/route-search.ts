/**
 * The choice of a route, whatever the pools come from (the cache, or state read from RPC now): the
 * best direct pool of the pair against the best two-hop route through each intermediate token,
 * the better answer winning (exact in: the larger output; exact out: the smaller input).
 *
 * Two-hop routes are searched leg by leg, which is exact, not a heuristic: every pool's output
 * grows with its input (exact in) and its input grows with its output (exact out), so
 * - exact in: the best route through M sells into the first-leg pool giving the most M, then sells
 *   that M into the second-leg pool giving the most output;
 * - exact out (computed backwards): the second-leg pool asking the least M for the amount wanted,
 *   then the first-leg pool asking the least input for that M.
 * That is n1 + n2 swap quotes per intermediate rather than n1 × n2.
 *
 * Bounds (a finder may give them: `HopFinder.bound`): each leg's largest rate bound, what its best
 * pool pays per atom at most (engine/dex rate-bound.ts). Once a route is known, an intermediate
 * whose two bounds together cannot beat it is not quoted at all, nor its second leg when the first
 * leg's exact amount cannot; a route dropped that way is never strictly better than the one kept,
 * so the answer is the full search's, ties included.
 *
 * Ties: within a leg the lower pool address (`betterSwap` / `sameSwap` below), between
 * routes the direct one, then the intermediate listed first. A total order, so a subset of the
 * candidates that holds the winner's pools chooses the same route (the quote memo relies on it).
 *
 * Token-2022 transfer fees: a hop's amounts are the trader's (engine/dex quoteSwap with the pool's
 * `PoolTransferFees`), so the second hop starts from what the first one leaves in the wallet.
 */
import { boundedInput, boundedOutput, SwapMode, type SwapQuote } from '../dex/index.js';
import type { RouteHop, RouteQuote } from './quote-answer.js';

/** Wrapped SOL and USDC: the intermediate tokens of two-hop routes unless configured. */
export const DEFAULT_INTERMEDIATE_MINTS: readonly string[] = Object.freeze([
  'So11111111111111111111111111111111111111112',
  'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
]);

/** The pool chosen for one leg (`pool`: the finder's handle of it) and its exact swap. */
export interface HopChoice<P> {
  readonly pool: P;
  readonly swap: SwapQuote;
  /** The mint sold into this hop and the one bought from it. */
  readonly inputMint: string;
  readonly outputMint: string;
}

/** Finds the best pool of one leg among the pools the request may use. */
export interface HopFinder<P> {
  /**
   * The best pool selling `inputMint` for `outputMint` (`amount` sold, exact in; bought, exact out),
   * undefined when no usable pool can quote it.
   */
  best(inputMint: string, outputMint: string, amount: bigint, mode: SwapMode): HopChoice<P> | undefined;
  /**
   * At most what the leg pays per atom sold, over every pool `best` may choose (0: none; Infinity:
   * unknown). Optional: without it every intermediate is searched.
   */
  bound?(inputMint: string, outputMint: string): number;
}

/**
 * True when swap `a` is better than swap `b` for the request: exact in, more output; exact out,
 * less input. Equal swaps are not better: the caller breaks ties by pool address, the same way on
 * the cache and the RPC paths (one answer per state, whatever the source).
 */
export function betterSwap(a: SwapQuote, b: SwapQuote, mode: SwapMode): boolean {
  return mode === SwapMode.ExactIn ? a.amountOut > b.amountOut : a.amountIn < b.amountIn;
}

/** True when swaps `a` and `b` are as good as each other for the request. */
export function sameSwap(a: SwapQuote, b: SwapQuote, mode: SwapMode): boolean {
  return mode === SwapMode.ExactIn ? a.amountOut === b.amountOut : a.amountIn === b.amountIn;
}

/** True when route `a` (its hops) is strictly better than route `b` for the request. */
function betterRoute<P>(a: readonly HopChoice<P>[], b: readonly HopChoice<P>[], mode: SwapMode): boolean {
  return mode === SwapMode.ExactIn ? a[a.length - 1]!.swap.amountOut > b[b.length - 1]!.swap.amountOut : a[0]!.swap.amountIn < b[0]!.swap.amountIn;
}

/**
 * The best route (one or two hops, in order) selling `inputMint` for `outputMint`, or undefined.
 * `multiHop` false: the direct pools only. Intermediates equal to either mint are skipped.
 */
export function chooseRoute<P>(
  finder: HopFinder<P>,
  inputMint: string,
  outputMint: string,
  amount: bigint,
  mode: SwapMode,
  intermediates: readonly string[],
  multiHop: boolean,
): HopChoice<P>[] | undefined {
  const direct = finder.best(inputMint, outputMint, amount, mode);
  let best: HopChoice<P>[] | undefined = direct === undefined ? undefined : [direct];
  if (!multiHop) return best;
  const exactIn = mode === SwapMode.ExactIn;
  for (let i = 0; i < intermediates.length; i++) {
    const via = intermediates[i]!;
    if (via === inputMint || via === outputMint) continue;
    const bounded = best !== undefined && finder.bound !== undefined;
    const firstBound = bounded ? finder.bound!(inputMint, via) : Infinity;
    const secondBound = bounded ? finder.bound!(via, outputMint) : Infinity;
    if (bounded && cannotBeat(amount, firstBound * secondBound, best!, mode)) continue;
    let route: HopChoice<P>[];
    if (exactIn) {
      const first = finder.best(inputMint, via, amount, mode);
      if (first === undefined) continue;
      if (bounded && cannotBeat(first.swap.amountOut, secondBound, best!, mode)) continue;
      const second = finder.best(via, outputMint, first.swap.amountOut, mode);
      if (second === undefined) continue;
      route = [first, second];
    } else {
      const second = finder.best(via, outputMint, amount, mode);
      if (second === undefined) continue;
      if (bounded && cannotBeat(second.swap.amountIn, firstBound, best!, mode)) continue;
      const first = finder.best(inputMint, via, second.swap.amountIn, mode);
      if (first === undefined) continue;
      route = [first, second];
    }
    if (best === undefined || betterRoute(route, best, mode)) best = route;
  }
  return best;
}

/**
 * The measure routes are compared by: exact in, the route's output (more is better); exact out,
 * its input (less is better).
 */
export function routeValue<P>(route: readonly HopChoice<P>[], mode: SwapMode): bigint {
  return mode === SwapMode.ExactIn ? route[route.length - 1]!.swap.amountOut : route[0]!.swap.amountIn;
}

/**
 * True when a path at rate bound `bound` from `amount` (sold, exact in; bought, exact out) cannot
 * be strictly better than a route of value `value` (routeValue): exact in, it pays at most that
 * output; exact out, it asks at least that input. `strict`: nor as good (it would win a tie).
 */
export function boundCannotBeat(amount: bigint, bound: number, value: bigint, mode: SwapMode, strict = false): boolean {
  if (mode === SwapMode.ExactIn) {
    const most = boundedOutput(Number(amount), bound);
    return strict ? most < Number(value) : most <= Number(value);
  }
  const least = boundedInput(Number(amount), bound);
  return strict ? least > Number(value) : least >= Number(value);
}

function cannotBeat<P>(amount: bigint, bound: number, best: readonly HopChoice<P>[], mode: SwapMode): boolean {
  return boundCannotBeat(amount, bound, routeValue(best, mode), mode);
}

/** What a RouteHop needs of a chosen pool besides its swap. */
export interface PoolFacts {
  readonly address: string;
  readonly dex: string;
  /** Slot of the state the hop was computed from. */
  readonly slot: bigint;
}

/**
 * The RouteQuote of chosen hops: amounts of the route's ends, each hop with its pool, DEX, mints,
 * amounts, trade fee and fee mint, the route's price impact 1 − Π(1 − impactᵢ) (execution against
 * spot price compounds hop by hop) and the oldest slot.
 */
export function routeQuoteOf<P>(mode: SwapMode, chosen: readonly HopChoice<P>[], factsOf: (pool: P) => PoolFacts): RouteQuote {
  const hops: RouteHop[] = [];
  let kept = 1;
  let slot = -1n;
  for (let i = 0; i < chosen.length; i++) {
    const { pool, swap, inputMint, outputMint } = chosen[i]!;
    const facts = factsOf(pool);
    hops.push({
      pool: facts.address,
      dex: facts.dex,
      inputMint,
      outputMint,
      inAmount: swap.amountIn,
      outAmount: swap.amountOut,
      fee: swap.fee,
      feeMint: swap.feeInOutput === true ? outputMint : inputMint,
      slot: facts.slot,
    });
    kept *= 1 - swap.priceImpact;
    if (slot < 0n || facts.slot < slot) slot = facts.slot;
  }
  const impact = 1 - kept;
  const first = chosen[0]!;
  const last = chosen[chosen.length - 1]!;
  return {
    mode,
    inputMint: first.inputMint,
    outputMint: last.outputMint,
    inputAmount: first.swap.amountIn,
    outputAmount: last.swap.amountOut,
    priceImpact: impact > 0 ? impact : 0,
    hops,
    slot,
  };
}
