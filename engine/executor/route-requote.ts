/**
 * The pre-trade re-quote: an opportunity's route quoted again, hop by hop, with the engine's exact
 * swap math (`quoteSwap`) on a given pool state source, the planner's `PlannerPools` or a bare
 * `PoolCache`. A pure function of the opportunity and the states it reads.
 *
 * - ExactIn along the route, as the planner quoted it: hop 0 sells `inputAmount`, each hop sells
 *   what the one before gave. Pools, directions and mints are the opportunity's own.
 * - Profit by the opportunity's own cost rules:
 *     arbitrage: spec 03's output − input − quotedFees − flashLoanFee − tip, with the opportunity's
 *                quoted fees and tip, and its flash-loan fee (the reserve's, as the planner
 *                charged it) only when it borrows its input (`flashLoan`); a wallet-funded trade
 *                pays no lender (the same formula the planner used, `arbitrageProfit`);
 *     grid, DCA: the order's expected profit moved by what the output gained or lost against the
 *                quote: expectedProfit + (output − expectedOutput) (their expectedProfit is 0 and
 *                their profit mint is the output mint).
 * - `meetsMinimum`: the new output is at least the opportunity's `minimumOutput`.
 *
 * A refusal is an answer, not an exception: the pool is not in the source, no longer trades the
 * hop's mints, its math refuses the amount (or fills it only partly), or a hop gives nothing.
 */
import { NO_ID, type PoolCache } from '../cache/index.js';
import { quoteSwap, type Dex, type PoolTransferFees } from '../dex/index.js';
import type { ArbPoolState, PlannerPools } from '../trading/index.js';

import { Strategy, arbitrageProfit, type OpportunityCosts, type RouteHop, type TradeOpportunity } from '../messages/index.js';

/** One pool's state as the re-quote reads it: the search's view plus the Token-2022 fees, if any. */
export interface RequotePoolState extends ArbPoolState {
  transferFees?: PoolTransferFees;
}

/** Where the re-quote reads pool states: undefined when the pool is unknown. */
export interface RouteStateSource {
  stateOf(address: string): RequotePoolState | undefined;
}

/** The planner's pools (the newest state read of each, with its transfer fees). */
export function plannerPoolsSource(pools: PlannerPools): RouteStateSource {
  return {
    stateOf(address) {
      const loaded = pools.loaded(address);
      if (loaded === undefined) return undefined;
      const state: RequotePoolState = { address, dex: loaded.dex, pool: loaded.pool, context: loaded.context, slot: loaded.slot };
      if (loaded.transferFees !== undefined) state.transferFees = loaded.transferFees;
      return state;
    },
  };
}

/** A pool cache (with the transfer fees it holds). */
export function poolCacheSource(cache: PoolCache): RouteStateSource {
  return {
    stateOf(address) {
      const id = cache.idOf(address);
      if (id === NO_ID) return undefined;
      const pool = cache.poolAt(id);
      const dex = cache.dexAt(id);
      if (pool === undefined || dex === undefined) return undefined;
      const state: RequotePoolState = { address, dex: dex as Dex, pool, context: cache.contextAt(id), slot: cache.slotAt(id) };
      const transferFees = cache.transferFeesAt(id);
      if (transferFees !== undefined) state.transferFees = transferFees;
      return state;
    },
  };
}

export const RequoteRefusal = {
  /** The source has no state of a route pool. */
  PoolUnknown: 'pool_unknown',
  /** The pool does not trade the hop's input and output mints. */
  MintMismatch: 'mint_mismatch',
  /** The swap math refuses the amount (liquidity, ranges). */
  QuoteRefused: 'quote_refused',
  /** The math fills only part of the amount: not this trade. */
  PartialFill: 'partial_fill',
  /** A hop gives nothing. */
  ZeroOutput: 'zero_output',
} as const;
export type RequoteRefusal = (typeof RequoteRefusal)[keyof typeof RequoteRefusal];

export interface RouteRequoted {
  ok: true;
  /** The route as quoted now: the opportunity's hops with the new amounts, fees, impacts and slots. */
  hops: RouteHop[];
  input: bigint;
  /** The last hop's output. */
  output: bigint;
  /** The opportunity's costs; the flash-loan fee only with a flash loan (unchanged: the input is the same). */
  costs: OpportunityCosts;
  /** Profit by the opportunity's cost rules (see the module comment), in `profitMint` atoms. */
  profit: bigint;
  /** output ≥ the opportunity's minimumOutput. */
  meetsMinimum: boolean;
  /** The oldest slot of the states used. */
  slot: bigint;
}

export interface RouteRequoteRefused {
  ok: false;
  reason: RequoteRefusal;
  message: string;
  /** The hop that refused. */
  step: number;
}

export type RouteRequote = RouteRequoted | RouteRequoteRefused;

function refused(reason: RequoteRefusal, step: number, message: string): RouteRequoteRefused {
  return { ok: false, reason, step, message };
}

/** The lender's fee the trade pays: the opportunity's, with a flash loan; nothing when the wallet funds it. */
export function loanFeeOf(op: Pick<TradeOpportunity, 'flashLoan' | 'costs'>): bigint {
  return op.flashLoan ? op.costs.flashLoanFee : 0n;
}

/** Profit of an opportunity whose route now gives `output` (see the module comment). */
export function profitOf(op: TradeOpportunity, output: bigint): bigint {
  if (op.strategy === Strategy.Arbitrage) return arbitrageProfit(op.inputAmount, output, { quotedFees: op.costs.quotedFees, flashLoanFee: loanFeeOf(op), tip: op.costs.tip });
  return op.expectedProfit + (output - op.expectedOutput);
}

/** Re-quotes `op`'s route on the states of `source`. */
export function requoteRoute(op: TradeOpportunity, source: RouteStateSource): RouteRequote {
  const hops: RouteHop[] = [];
  let amount = op.inputAmount;
  let slot: bigint | undefined;
  for (const hop of op.route) {
    const state = source.stateOf(hop.pool);
    if (state === undefined) return refused(RequoteRefusal.PoolUnknown, hop.step, `pool ${hop.pool} has no known state`);
    const { tokenA, tokenB } = state.pool;
    let aToB: boolean;
    if (hop.inputMint === tokenA && hop.outputMint === tokenB) aToB = true;
    else if (hop.inputMint === tokenB && hop.outputMint === tokenA) aToB = false;
    else return refused(RequoteRefusal.MintMismatch, hop.step, `pool ${hop.pool} does not trade ${hop.inputMint} for ${hop.outputMint}`);
    const q = quoteSwap(state.pool, { aToB, mode: 'ExactIn', amount }, state.context, state.transferFees);
    if (!q.ok) return refused(RequoteRefusal.QuoteRefused, hop.step, `hop ${hop.step} (${hop.pool}): ${q.reason}: ${q.message}`);
    if (q.amountIn !== amount) return refused(RequoteRefusal.PartialFill, hop.step, `hop ${hop.step} (${hop.pool}) fills ${q.amountIn} of ${amount}`);
    if (q.amountOut === 0n) return refused(RequoteRefusal.ZeroOutput, hop.step, `hop ${hop.step} (${hop.pool}) gives nothing for ${amount}`);
    hops.push({
      step: hop.step,
      pool: hop.pool,
      dex: state.dex,
      inputMint: hop.inputMint,
      outputMint: hop.outputMint,
      inputAmount: q.amountIn,
      outputAmount: q.amountOut,
      fee: q.fee,
      feeMint: q.feeInOutput === true ? hop.outputMint : hop.inputMint,
      priceImpact: q.priceImpact,
      slot: state.slot,
    });
    if (slot === undefined || state.slot < slot) slot = state.slot;
    amount = q.amountOut;
  }
  const flashLoanFee = loanFeeOf(op);
  const costs: OpportunityCosts = {
    poolFees: hops.map((h) => h.fee),
    quotedFees: op.costs.quotedFees,
    flashLoanFee,
    tip: op.costs.tip,
    total: op.costs.quotedFees + flashLoanFee + op.costs.tip,
  };
  return { ok: true, hops, input: op.inputAmount, output: amount, costs, profit: profitOf(op, amount), meetsMinimum: amount >= op.minimumOutput, slot: slot ?? op.slot };
}
