/**
 * Best-route search over the simulator's pools: direct routes and 2- and 3-hop routes through the
 * allowed intermediate mints, every hop quoted with the engine's exact math (`quoteSwap`) on the
 * pool's current state and swap context, and with the transfer fees of its Token-2022 mints: a
 * hop's amounts are what the trader sends and receives, so the output of one hop (after its
 * transfer fee) is the next hop's input (which pays its own). Whole amounts only: no split routes.
 *
 * Why hop-by-hop choice is exact: a pool's output never decreases when its input grows (and the
 * input it needs never decreases when the wanted output grows), and the hops of one mint path use
 * different pools. So for ExactIn the best route along a mint path takes the best pool at each hop
 * in turn, and for ExactOut the cheapest pool at each hop from the last one back. The search then
 * compares mint paths: direct first, then 2 hops, then 3; a longer route must be strictly better.
 *
 * A refusal (insufficient liquidity, missing tick arrays, a disabled pool, zero output) or a
 * throwing quote only removes that pool from that hop.
 */
import type { Logger } from '../../obs/index.js';
import { quoteSwap } from '../../dex/index.js';
import { SwapMode, type SwapQuote } from '../../dex/index.js';
import type { SimPoolView } from '../market-view.js';
import { RESTRICTED_INTERMEDIATES, U64_MAX } from '../../swap-api/index.js';
import { HOP_ACCOUNTS, ROUTE_BASE_ACCOUNTS } from './constants.js';
import type { GraphPool, PoolGraph } from './pool-graph.js';
import type { QuoteParams } from '../../swap-api/index.js';

export interface RouteHop {
  view: SimPoolView;
  inputMint: string;
  outputMint: string;
  quote: SwapQuote;
}

/** A chain of hops: each hop's output is exactly the next hop's input. */
export interface Route {
  hops: RouteHop[];
  /** Into the first hop. */
  inAmount: bigint;
  /** Out of the last hop. */
  outAmount: bigint;
}

/** What the search reads from the request (QuoteParams has all of it). */
export type RouteRequest = Pick<
  QuoteParams,
  | 'inputMint'
  | 'outputMint'
  | 'amount'
  | 'swapMode'
  | 'dexes'
  | 'excludeDexes'
  | 'onlyDirectRoutes'
  | 'restrictIntermediateTokens'
  | 'maxAccounts'
>;

export class RouteSearch {
  constructor(
    private readonly graph: PoolGraph,
    private readonly log: Logger,
  ) {}

  /** The best route for the request, or undefined when there is none. The graph must be synced. */
  best(req: RouteRequest): Route | undefined {
    return req.swapMode === SwapMode.ExactIn ? this.bestExactIn(req) : this.bestExactOut(req);
  }

  private bestExactIn(req: RouteRequest): Route | undefined {
    const { inputMint: input, outputMint: output, amount } = req;
    let best: Route | undefined;
    const consider = (hops: RouteHop[]): void => {
      const out = hops[hops.length - 1]!.quote.amountOut;
      if ((best === undefined || out > best.outAmount) && fitsAccounts(hops, req.maxAccounts)) {
        best = { hops, inAmount: amount, outAmount: out };
      }
    };

    const direct = this.hopIn(input, output, amount, req);
    if (direct !== undefined) consider([direct]);
    if (req.onlyDirectRoutes) return best;

    const intoOutput = this.graph.neighboursOf(output);
    for (const first of this.intermediatesFrom(input, req)) {
      if (first === output) continue;
      const h1 = this.hopIn(input, first, amount, req);
      if (h1 === undefined) continue;
      if (intoOutput.has(first)) {
        const h2 = this.hopIn(first, output, h1.quote.amountOut, req);
        if (h2 !== undefined) consider([h1, h2]);
      }
      for (const second of this.intermediatesFrom(first, req)) {
        if (second === input || second === output || !intoOutput.has(second)) continue;
        const h2 = this.hopIn(first, second, h1.quote.amountOut, req);
        if (h2 === undefined) continue;
        const h3 = this.hopIn(second, output, h2.quote.amountOut, req);
        if (h3 !== undefined) consider([h1, h2, h3]);
      }
    }
    return best;
  }

  private bestExactOut(req: RouteRequest): Route | undefined {
    const { inputMint: input, outputMint: output, amount } = req;
    let best: Route | undefined;
    const consider = (hops: RouteHop[]): void => {
      const inAmount = hops[0]!.quote.amountIn;
      if ((best === undefined || inAmount < best.inAmount) && fitsAccounts(hops, req.maxAccounts)) {
        best = { hops, inAmount, outAmount: amount };
      }
    };

    const direct = this.hopOut(input, output, amount, req);
    if (direct !== undefined) consider([direct]);
    if (req.onlyDirectRoutes) return best;

    const fromInput = this.graph.neighboursOf(input);
    for (const last of this.intermediatesFrom(output, req)) {
      if (last === input) continue;
      const h3 = this.hopOut(last, output, amount, req);
      if (h3 === undefined) continue;
      if (fromInput.has(last)) {
        const h1 = this.hopOut(input, last, h3.quote.amountIn, req);
        if (h1 !== undefined) consider([h1, h3]);
      }
      for (const middle of this.intermediatesFrom(last, req)) {
        if (middle === input || middle === output || !fromInput.has(middle)) continue;
        const h2 = this.hopOut(middle, last, h3.quote.amountIn, req);
        if (h2 === undefined) continue;
        const h1 = this.hopOut(input, middle, h2.quote.amountIn, req);
        if (h1 !== undefined) consider([h1, h2, h3]);
      }
    }
    return best;
  }

  /** Mints that may sit in the middle of a route and trade with `mint`. */
  private intermediatesFrom(mint: string, req: RouteRequest): Iterable<string> {
    const neighbours = this.graph.neighboursOf(mint);
    if (!req.restrictIntermediateTokens) return neighbours;
    return RESTRICTED_INTERMEDIATES.filter((m) => neighbours.has(m));
  }

  /** The pool giving the most `to` for exactly `amountIn` of `from`. */
  private hopIn(from: string, to: string, amountIn: bigint, req: RouteRequest): RouteHop | undefined {
    let best: RouteHop | undefined;
    for (const gp of this.graph.poolsFor(from, to)) {
      if (!allowed(gp, req)) continue;
      const view = this.graph.views[gp.index]!;
      const quote = this.quote(view, from === view.pool.tokenA, SwapMode.ExactIn, amountIn);
      // A route must consume the whole amount and deliver something.
      if (quote === undefined || quote.amountIn !== amountIn || quote.amountOut === 0n) continue;
      if (best === undefined || quote.amountOut > best.quote.amountOut) {
        best = { view, inputMint: from, outputMint: to, quote };
      }
    }
    return best;
  }

  /** The pool needing the least `from` to deliver exactly `amountOut` of `to`. */
  private hopOut(from: string, to: string, amountOut: bigint, req: RouteRequest): RouteHop | undefined {
    let best: RouteHop | undefined;
    for (const gp of this.graph.poolsFor(from, to)) {
      if (!allowed(gp, req)) continue;
      const view = this.graph.views[gp.index]!;
      const quote = this.quote(view, from === view.pool.tokenA, SwapMode.ExactOut, amountOut);
      if (quote === undefined || quote.amountOut !== amountOut || quote.amountIn === 0n || quote.amountIn > U64_MAX) continue;
      if (best === undefined || quote.amountIn < best.quote.amountIn) {
        best = { view, inputMint: from, outputMint: to, quote };
      }
    }
    return best;
  }

  private quote(view: SimPoolView, aToB: boolean, mode: SwapMode, amount: bigint): SwapQuote | undefined {
    try {
      const result = quoteSwap(view.pool, { aToB, mode, amount }, view.ctx, view.transferFees);
      return result.ok ? result : undefined;
    } catch (err) {
      // Malformed amounts (an ExactOut input beyond u64 fed to the previous hop) and unknown
      // DEX kinds throw; either way this pool is not part of a route.
      this.log.debug({ err, pool: view.address, mode, amount: amount.toString() }, 'quote API: hop quote failed');
      return undefined;
    }
  }
}

function allowed(gp: GraphPool, req: RouteRequest): boolean {
  if (req.dexes !== undefined && !req.dexes.has(gp.labelKey)) return false;
  return req.excludeDexes === undefined || !req.excludeDexes.has(gp.labelKey);
}

/** The rough `maxAccounts` bound (constants.ts). */
function fitsAccounts(hops: readonly RouteHop[], maxAccounts: number): boolean {
  let accounts = ROUTE_BASE_ACCOUNTS;
  for (const hop of hops) accounts += HOP_ACCOUNTS[hop.view.dex];
  return accounts <= maxAccounts;
}
