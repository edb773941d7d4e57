/**
 * engine/swap-api: the public swap API's wire format (Jupiter Swap API v1 `GET /quote`, `POST
 * /swap`, `POST /swap-instructions`): query and body parsing with the real API's error wording, the
 * response and error shapes, the DEX labels of tidepool's DEX kinds. Shared by the simulator's quote API (engine/sim/quote-api) and the quote
 * service's `GET /swap/v1/quote` (engine/quote), so the two never drift apart.
 */
export {
  BPS_DENOMINATOR,
  DEFAULT_MAX_ACCOUNTS,
  DEFAULT_SLIPPAGE_BPS,
  RESTRICTED_INTERMEDIATES,
  U16_MAX,
  U64_MAX,
  USDC_MINT,
  WSOL_MINT,
} from './constants.js';
export { DEX_LABELS, dexOfLabel, labelOfDex } from './dex-labels.js';
export { InstructionVersion, parseQuoteParams, type QuoteParams } from './quote-params.js';
export { QueryReader, type QueryValues } from './query-values.js';
export { quoteApiError, isQuoteApiError, quoteErrorBody, QuoteErrorCode, type QuoteApiError, injectedFailure, unparsable, type QuoteErrorBody } from './swap-api-errors.js';
export {
  formatFraction,
  type PlatformFee,
  type QuoteResponse,
  type RoutePlanStep,
  type SwapApiSwapMode,
  type SwapInfo,
} from './swap-api-response.js';
export { AUTO_PRIORITY_MAX_LAMPORTS, PriorityLevel, parseSwapRequest, type PrioritizationFee, type QuotedHop, type QuotedRoute, type SwapRequest } from './swap-request.js';
export { instructionToJson, type AccountMetaJson, type InstructionJson, type SwapInstructionsResponse, type SwapResponse } from './swap-response.js';
