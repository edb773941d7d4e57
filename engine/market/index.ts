/** Market data (spec 03): the market scanner's parts (the MarketEvent and PriceUpdate messages are in engine/messages). */
export { MarketEventDeriver, DEFAULT_THRESHOLDS, type Derived, type DeriverThresholds } from './market-event-deriver.js';
export { MarketPublisher, type MarketPublisherOptions, type MarketPublisherStats } from './market-publisher.js';
export { MARKET_METRIC_NAMES, registerMarketMetrics } from './market-metrics.js';
export { MarketDataSink } from './market-data-sink.js';
export { observePool, rawSpotPrice, baseFeeFraction, type PoolObservation } from './pool-observation.js';
export { POOL_MINT_FIELDS, discoverPools, type DiscoveredPool, type DiscoverOptions } from './pool-discovery.js';
export { PubsubPoolSource, PushedAccountReader, accountOfNotification, type PubsubPoolSourceOptions, type PubsubPoolSourceStats } from './pubsub-pool-source.js';
export { DEFAULT_SNAPSHOT_INTERVAL_MS, EVENT_STATE_FORMAT, EventStateWriter, eventStateAccountOf, type EventState, type EventStateAccount, type EventStateWriterOptions } from './event-state.js';
export { EventStateReplay, StateAccountReader, eventStateOf, type EventStateOutcome } from './event-state-replay.js';
export { DEFAULT_DISCOVER_INTERVAL_MS, DEFAULT_MAX_MONITORED_POOLS, MonitoredPoolKeeper, type KeeperRun, type MonitoredPoolKeeperOptions } from './monitored-pool-keeper.js';
