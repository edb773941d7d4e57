/**
 * Signal sources (issue 27 item 4): models that read market events and publish TradeSignals on
 * `signals.<source>` for the signal planner. The built-in model is `TrendModel`; a user's own is
 * any module `loadSignalModel` can load.
 */
export { OnlineLogistic, type OnlineLogisticOptions } from './online-logistic.js';
export { PriceHistory } from './price-history.js';
export { loadSignalModel, type SignalModel, type SignalModelFactory, type SignalModelOptions } from './signal-model.js';
export { SignalPublisher, type SignalSink } from './signal-publisher.js';
export { SIGNAL_SOURCE_METRIC_NAMES, SignalSourceMetrics } from './signal-source-metrics.js';
export { SignalSource, type SignalSourceOptions } from './signal-source.js';
export { TrendModel, type TrendModelOptions } from './trend-model.js';
