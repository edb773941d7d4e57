/**
 * The backtest's fill: the paper executor's (`paperFill`, engine/executor/paper-fill.ts)
 * on the replay's pools at the moment of the event, with the executor's path selection, tip and
 * transaction fees. Not a second fill: this only reads its answer into the report's terms.
 */
import { paperFill, type RealPathCosts, plannerPoolsSource } from '../executor/index.js';

import type { PlannerPools } from '../trading/index.js';
import type { TradeOpportunity } from '../messages/index.js';
import type { BacktestFill, FillOutcome } from './backtest-runner.js';

export function paperBacktestFill(costs: RealPathCosts = {}): BacktestFill {
  return (op: TradeOpportunity, pools: PlannerPools): FillOutcome => {
    const fill = paperFill(op, plannerPoolsSource(pools), costs);
    if (!fill.ok) return { ok: false, reason: fill.reason };
    return { ok: true, path: fill.path, input: fill.input, output: fill.output, fees: fill.fees, tip: fill.tip, net: fill.actualProfit, meetsMinimum: fill.meetsMinimum, hops: fill.hops };
  };
}
