/**
 * Spec 03's executor selection: an expected profit above 0.1 of the native unit (100,000,000
 * lamports) selects the bundle executor; strategy `arbitrage` selects the bundle executor;
 * otherwise the lower-cost direct executor.
 *
 * Decided where the spec is silent: the profit is compared with 0.1 SOL only when the opportunity's
 * profit mint is wrapped SOL (its atoms are lamports). A profit in another mint has no SOL value
 * without a price, which the executor does not guess, so it never selects the bundle by size (an
 * arbitrage still takes the bundle: the planner's cycles start and end at their base mint).
 *
 * The tip (bundle only): the opportunity's `costs.tip` when it carries one in 5,000..6,000 (every
 * arbitrage does), else the executor's configured tip (5,000 by default).
 */
import { WSOL_MINT } from '../chain/index.js';
import { MAX_TIP, MIN_TIP, Strategy, type TradeOpportunity, ExecutionPath } from '../messages/index.js';

/** 0.1 SOL in lamports. */
export const BUNDLE_PROFIT_THRESHOLD = 100_000_000n;

export function selectExecutionPath(op: TradeOpportunity): ExecutionPath {
  if (op.strategy === Strategy.Arbitrage) return ExecutionPath.Bundle;
  if (op.profitMint === WSOL_MINT && op.expectedProfit > BUNDLE_PROFIT_THRESHOLD) return ExecutionPath.Bundle;
  return ExecutionPath.Direct;
}

/** Lamports tipped on `path`: 0 for direct; the opportunity's tip or `defaultTip` for a bundle. */
export function tipFor(op: TradeOpportunity, path: ExecutionPath, defaultTip: bigint = MIN_TIP): bigint {
  if (path === ExecutionPath.Direct) return 0n;
  const own = op.costs.tip;
  return own >= MIN_TIP && own <= MAX_TIP ? own : defaultTip;
}
