/** What the rest of the engine may use of the quote aggregator (spec 01). */
export { createAggregator, AGGREGATOR_GRPC_PORT_SETTING, AGGREGATOR_HTTP_PORT_SETTING, AGGREGATOR_VERSION, type Aggregator, type AggregatorDeps, type AggregatorPorts, type AggregatorStatsSnapshot } from './aggregator.js';
export {
  aggregatorSchema,
  defaultAggregatorConfig,
  loadAggregatorConfig,
  GET_AGGREGATED_QUOTE_TIMEOUT_MS,
  type AggregatorConfig,
} from './aggregator-config.js';
export type { OraclePriceSource, PairOraclePrice, RoutePublisher, RoutePublisherStats } from './contracts.js';
export { disabledRoutePublisher } from './disabled-publisher.js';
export { CONFIDENCE_WEIGHTS, DECISION_THRESHOLDS, decisionFor, scoreQuote } from './confidence.js';
export { SWAP_ROUTE_SUBJECT, pairId, routeHash, encodeSwapRouteEvent, decodeSwapRouteEvent, type SwapRouteEventFields } from './swap-route-event.js';
export { OraclePrices } from './oracle-prices.js';
export { ROUTE_PUBLISHER_CONNECTION_NAME, SwapRoutePublisher } from './route-publisher.js';
