/** Executors (spec 03): orchestration, the bundle and direct submission paths, paper fills, trade records. */
export * from './submission.js';
export { BlockEngineClient, bundleIdOf, type BlockEngineClientOptions } from './block-engine-client.js';
export { BundleSubmitter, type BundleSubmitterOptions } from './bundle-submitter.js';
export { DirectSubmitter, type DirectSubmitterOptions } from './direct-submitter.js';
export { fetchLanded, filledAmountsOf, sumBalanceChanges } from './landed-balance-changes.js';
export { EXECUTOR_METRIC_NAMES, ExecutorMetrics, SkipReason } from './executor-metrics.js';
export { FLASH_LOAN_COMPUTE_UNITS, FlashLoans, type FlashLoanWrap } from './flash-loans.js';
export { ExecutorService, type BalanceChangesReader, type ExecutorServiceOptions, type ExecutorSettings, type ExecutorStats, type HandleOutcome, type ResultPublisher } from './executor-service.js';
export { BUNDLE_SIGNATURES, paperFill, realPathFees, routeComputeUnits, type PaperFill, type RealPathCosts } from './paper-fill.js';
export { BUNDLE_PROFIT_THRESHOLD, selectExecutionPath, tipFor } from './path-selection.js';
export { RoutePools, type RoutePoolsOptions, type RoutePoolsStats } from './route-pools.js';
export { RouteTemplateResult } from './route-pools.js';
export {
  RequoteRefusal,
  plannerPoolsSource,
  poolCacheSource,
  loanFeeOf,
  profitOf,
  requoteRoute,
  type RequotePoolState,
  type RouteRequote,
  type RouteRequoteRefused,
  type RouteRequoted,
  type RouteStateSource,
} from './route-requote.js';
export { RecentBlockhash, type LatestBlockhash, type RecentBlockhashOptions } from './recent-blockhash.js';
export { Semaphore } from './semaphore.js';
export { TradeStage, type TradeStageObserver } from './trade-stages.js';
export { FINAL_TRADE_STATUSES, TradeStore, tradeIdOf, type NewTrade, type PaperTrade, type StoredTrade, type TradeOutcomeUpdate, type TradeStatus } from './trade-store.js';
export { actualProfitOf } from './trade-profit.js';
export { LAMPORT_RESERVE, WorkerWallets, type HeldWallet, type WalletChoice, type WalletNeed, type WorkerWalletsOptions } from './worker-wallets.js';
