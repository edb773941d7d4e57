/**
 * engine/sim/quote-api: the simulator's external-aggregator quote API (`GET /quote` in the public
 * swap API's shape), routed over the simulator's pools. What the rest of the engine may use.
 */
export { QuoteApi, mountQuoteApi, type QuoteApiOptions } from './quote-api.js';
export {
  InstructionVersion,
  type QuoteApiError,
  QuoteErrorCode,
  parseQuoteParams,
  type QuoteErrorBody,
  type QuoteParams,
} from '../../swap-api/index.js';
export {
  buildQuoteResponse,
  formatFraction,
  type PlatformFee,
  type QuoteResponse,
  type RoutePlanStep,
  type SwapInfo,
} from './quote-response.js';
export { PoolGraph } from './pool-graph.js';
export { RouteSearch, type Route, type RouteHop, type RouteRequest } from './route-search.js';
export { QUOTE_API_PATHS } from './constants.js';
export { DEFAULT_MAX_ACCOUNTS, DEFAULT_SLIPPAGE_BPS, RESTRICTED_INTERMEDIATES, USDC_MINT, WSOL_MINT } from '../../swap-api/index.js';
