export { aggregatorEndpointLines, createAggregatorApp, type AggregatorApp } from './aggregator-app.js';
export { createEngine, type EngineEndpoints } from './engine-app.js';
export { engineSchema, loadEngineConfig } from './engine-config.js';
export { createQuoteApp } from './quote-app.js';
export { createScannerApp, scannerServiceSchema } from './scanner-app.js';
export { aggregatorConfigUnderSim, checkStartConfig, engineConfigUnderSim, externalConfigUnderSim, startSchema } from './start-config.js';
export { MarketScannerMode, checkMarketScannerConfig, createMarketScannerApp, marketScannerSchema, type MarketScannerApp, type MarketScannerConfig } from './market-scanner-app.js';
export { EXECUTOR_PORT, createExecutorApp, executorSchema, type ExecutorApp, type ExecutorConfig } from './executor-app.js';
export { createPlannerApp, plannerSchema, type PlannerApp, type PlannerConfig, type StrategyFactory } from './planner-app.js';
