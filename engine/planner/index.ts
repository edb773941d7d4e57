/** Planners (spec 03): arbitrage, grid, DCA and signal opportunities (the TradeOpportunity message is in engine/messages, the pool view in engine/trading). */
export {
  ArbitragePlanner,
  DEFAULT_ARBITRAGE_SETTINGS,
  FLASH_LOAN_COMPUTE_UNITS,
  checkArbitrageSettings,
  type ArbitrageSettings,
  type ArbitrageStats,
} from './arbitrage-planner.js';
export { ConfiguredFunding, FUNDING_REFRESH_MS, SPEC_FLASH_LOAN_FUNDING, refreshFundingEvery, type ArbitrageFunding, type Funding, type WalletCapitalOptions } from './arbitrage-funding.js';
export { OpportunityPublisher, type PublishedOpportunity } from './opportunity-publisher.js';
export { StrategyStore, type StrategyConfigRow } from './strategy-store.js';
export { StrategyAdmin, OPEN_ORDERS_SHOWN, PARAMETER_KINDS, parametersFromPairs, parseStrategyType, validateStrategyParameters, type GridOrderRow, type ParameterKind, type StrategyDetail, type StrategyAdminOptions, type StrategyPosition, type StrategySummary, type StrategyView } from './strategy-admin.js';
export { Position, PositionBook, type PositionFill, type PositionKey } from './position-book.js';
export { emptyPnl, pnlOfFills, readStrategyPnl, type StrategyFill, type StrategyPnl } from './strategy-pnl.js';
export { StrategyConfigWatcher, type StrategyConfigWatcherOptions } from './strategy-config-watcher.js';
export { PlannerMetrics, PLANNER_METRIC_NAMES } from './planner-metrics.js';
export { PlannerService, type OpportunitySink, type PlannerServiceOptions, type PlannerStrategy } from './planner-service.js';
export { ArbitrageStrategy, arbitrageSettingsOf, defaultArbitrageParameters } from './arbitrage-strategy.js';
export { GridStrategy, GridOrderStatus, gridLevels, gridParametersOf, type GridLevel, type GridParameters, type GridState } from './grid-strategy.js';
export { DcaStrategy, dcaConfigOf, type DcaAction, type DcaConfig, type DcaDecision, type DcaState } from './dca-strategy.js';
export { orderOpportunity, priceOf } from './order-opportunity.js';
export { RouteTemplateWriter, type RouteTemplateWrite, type RouteTemplateWriterOptions } from './route-template-writer.js';
export { SignalStrategy, signalConfigOf, type SignalDecision, type SignalSkipReason, type SignalState, type SignalStrategyConfig } from './signal-strategy.js';
export { MAX_CLOCK_SKEW_MS, MAX_EVENT_SLOT_LEAD, checkMarketEvent, marketEventViolations } from './market-event-checks.js';
