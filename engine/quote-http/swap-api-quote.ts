/**
 * `GET /swap/v1/quote`: the quote engine behind the public swap API's quote (Jupiter Swap API v1),
 * so a client written for it works against tidepool by changing its base URL. The query is parsed by
 * the same code as the simulator's quote API (engine/swap-api `parseQuoteParams`: the real API's
 * parameters, order and error wording; a plain query is read in place, engine/swap-api
 * query-values.ts); the response and error shapes are engine/swap-api's.
 *
 * Mapping:
 * - `dexes` / `excludeDexes`: labels (`Raydium`, `Raydium CLMM`, `Meteora DLMM`, `Whirlpool`, any
 *   case) or DEX kinds, comma-separated or repeated (`dexes=a&dexes=b`, as the official client
 *   sends arrays); an unknown label matches no pool, as the real API does. With
 *   `onlyDirectRoutes` they become the request's `RouteFilter`.
 * - `restrictIntermediateTokens`: parsed (true / false); the engine's intermediates are always its
 *   configured set (wSOL and USDC by default), which is what `true` asks for.
 * - `slippageBps`: default the service's SLIPPAGE_BPS. Others (`platformFeeBps`, `maxAccounts`,
 *   `asLegacyTransaction`, `instructionVersion`, ...) are accepted and ignored: `platformFee` is null.
 * - Response (swap-api-body.ts, written as bytes): `otherAmountThreshold` is the engine's minimum output (ExactIn) or maximum input
 *   (ExactOut, rounded up); `priceImpactPct` the route's impact as a decimal-string fraction; one
 *   route-plan step per hop (`percent` 100); `contextSlot` the newest slot the engine has seen;
 *   `timeTaken` seconds spent in the engine.
 * - Errors: `{"error": "<message>", "errorCode": "<CODE>"}`. A bad parameter is 400
 *   `INVALID_REQUEST` (the message names it); equal mints 400 `CIRCULAR_ARBITRAGE_IS_DISABLED`; no
 *   pool or no valid quote for the pair (or amount 0) 400 `COULD_NOT_FIND_ANY_ROUTE`, the code the
 *   official client's users test for; an unknown token 400 `TOKEN_NOT_TRADABLE`. Anything else
 *   (breaker open, shutting down, deadline, rate limit) keeps its status from the code table and its
 *   TP_ERR_* code as `errorCode`.
 */
import { clientErrorOf } from '../error-status.js';
import { ErrorCode } from '../errors.js';
import { isQuoteApiError, QueryReader, QuoteErrorCode, parseQuoteParams } from '../swap-api/index.js';
import { type QuoteFailure, type QuoteRequest, type PubkeyCheck, parseDexList, routeFilterOf } from '../quote/index.js';

/** A swap API error as an HTTP answer. */
export interface SwapApiError {
  readonly status: number;
  readonly body: string;
}

function errorOf(status: number, errorCode: string, message: string): SwapApiError {
  return { status, body: JSON.stringify({ error: message, errorCode }) };
}

const NO_ROUTE = errorOf(400, QuoteErrorCode.CouldNotFindAnyRoute, 'Could not find any route');

/** Parameters given more than once that the official client sends as repeated keys. */
const LIST_PARAMETERS = ['dexes', 'excludeDexes'] as const;

/** The query being parsed, read in place (parsing is synchronous). */
const reader = new QueryReader(LIST_PARAMETERS);

/**
 * The query (the raw text after `?`) into the engine's request, or the swap API error to answer.
 * `defaultSlippageBps` is the service's SLIPPAGE_BPS.
 */
export function parseSwapApiQuery(rawQuery: string, defaultSlippageBps: number, pubkeys: PubkeyCheck): QuoteRequest | SwapApiError {
  const query = reader.read(rawQuery);
  let params;
  try {
    params = parseQuoteParams(query, (mint) => pubkeys.isPubkey(mint));
  } catch (err) {
    if (isQuoteApiError(err)) return errorOf(err.context.status, err.context.errorCode, err.message);
    throw err;
  }
  if (params.amount === 0n) return NO_ROUTE;
  const slippageBps = query.get('slippageBps') === null ? defaultSlippageBps : params.slippageBps;
  const request: QuoteRequest = {
    inputMint: params.inputMint,
    outputMint: params.outputMint,
    mode: params.swapMode,
    amount: params.amount,
    amountText: params.amount.toString(),
    maxStateAgeMs: undefined,
    slippageBps,
  };
  const dexesText = query.get('dexes');
  const excludeDexesText = query.get('excludeDexes');
  const dexes = parseDexList(dexesText ?? undefined, 'dexes', false) as ReadonlySet<string> | undefined;
  const excludeDexes = parseDexList(excludeDexesText ?? undefined, 'excludeDexes', false) as ReadonlySet<string> | undefined;
  const routeFilter = routeFilterOf(dexes, excludeDexes, params.onlyDirectRoutes);
  return routeFilter === undefined ? request : { ...request, routeFilter };
}

/** True for the parse result that is an error to answer. */
export function isSwapApiError(value: QuoteRequest | SwapApiError): value is SwapApiError {
  return (value as SwapApiError).body !== undefined && (value as SwapApiError).status !== undefined;
}

/** The swap API error of an engine failure (see the file's comment for the mapping). */
export function swapApiErrorOf(failure: QuoteFailure): SwapApiError {
  switch (failure.code) {
    case ErrorCode.NoPoolForPair:
    case ErrorCode.NoPoolsInCache:
    case ErrorCode.NoValidQuotes:
      return NO_ROUTE;
    case ErrorCode.UnknownMint:
      return errorOf(400, QuoteErrorCode.TokenNotTradable, failure.message);
    case ErrorCode.BadParameter:
      return errorOf(400, QuoteErrorCode.InvalidRequest, failure.message);
    default: {
      const e = clientErrorOf(failure.code, failure.message);
      return errorOf(e.http, e.code, e.message);
    }
  }
}

/** The swap API error of any TP_ERR_* code (rate limit, auth, shutdown) with its table status. */
export function swapApiErrorOfCode(code: string, message: string): SwapApiError {
  const e = clientErrorOf(code, message);
  return errorOf(e.http, e.code, e.message);
}
