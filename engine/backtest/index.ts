/** Backtests (issue 17): MARKET_EVENTS replayed through the planners and the paper executor's fill. */
export { Backtest, type BacktestFill, type BacktestOptions, type FillOutcome } from './backtest-runner.js';
export { BacktestReport, POSITION_STRATEGIES, positionJson, reportJson, reportTable, type BacktestRange, type BacktestTrade, type EventCounts } from './backtest-report.js';
export { paperBacktestFill } from './backtest-fill.js';
export { readMarketEventRange, type MarketEventRangeOptions, type RangeMessage } from './market-event-range.js';
export { parseTimeBound, parseTimeRange } from './time-bound.js';
export { BACKTEST_STRATEGIES, backtestStrategy, backtestStrategyType, type BacktestStrategy, type BacktestStrategyOptions } from './backtest-strategy.js';
export { FillImpact } from './fill-impact.js';
export { Position, PositionBook, type PositionFill, type PositionKey } from '../planner/index.js';
