/**
 * `GET /swap/v1/quote`: the quote engine behind the public swap API's quote (Jupiter Swap API v1),
 * so a client written for it works against tidepool by changing its base URL. The query is parsed by
 * the same code as the simulator's quote API (engine/swap-api `parseQuoteParams`: the real API's
 * parameters, order and error wording); the response and error shapes are engine/swap-api's.
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
 * - Response: `otherAmountThreshold` is the engine's minimum output (ExactIn) or maximum input
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
import {
  isQuoteApiError,
  QuoteErrorCode,
  formatFraction,
  labelOfDex,
  parseQuoteParams,
  type QuoteResponse,
  type RoutePlanStep,
} from '../swap-api/index.js';
import { type QuoteAnswer, type QuoteBodyParts, type RouteQuote, type QuoteFailure, type QuoteRequest, type PubkeyCheck, parseDexList, routeFilterOf } from '../quote/index.js';



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

/**
 * The query (the raw text after `?`) into the engine's request, or the swap API error to answer.
 * `defaultSlippageBps` is the service's SLIPPAGE_BPS.
 */
export function parseSwapApiQuery(rawQuery: string, defaultSlippageBps: number, pubkeys: PubkeyCheck): QuoteRequest | SwapApiError {
  const query = new URLSearchParams(rawQuery);
  for (const name of LIST_PARAMETERS) {
    const all = query.getAll(name);
    if (all.length > 1) query.set(name, all.join(','));
  }
  let params;
  try {
    params = parseQuoteParams(query, (mint) => pubkeys.isPubkey(mint));
  } catch (err) {
    if (isQuoteApiError(err)) return errorOf(err.context.status, err.context.errorCode, err.message);
    throw err;
  }
  if (params.amount === 0n) return NO_ROUTE;
  const dexes = parseDexList(query.get('dexes') ?? undefined, 'dexes', false) as ReadonlySet<string> | undefined;
  const excludeDexes = parseDexList(query.get('excludeDexes') ?? undefined, 'excludeDexes', false) as ReadonlySet<string> | undefined;
  const routeFilter = routeFilterOf(dexes, excludeDexes, params.onlyDirectRoutes);
  const amountText = params.amount.toString();
  return {
    inputMint: params.inputMint,
    outputMint: params.outputMint,
    mode: params.swapMode,
    amount: params.amount,
    amountText,
    maxStateAgeMs: undefined,
    slippageBps: query.has('slippageBps') ? params.slippageBps : defaultSlippageBps,
    ...(routeFilter === undefined ? {} : { routeFilter }),
  };
}

/** True for the parse result that is an error to answer. */
export function isSwapApiError(value: QuoteRequest | SwapApiError): value is SwapApiError {
  return (value as SwapApiError).body !== undefined && (value as SwapApiError).status !== undefined;
}

/** The swap API body of an answer; `timeTakenSeconds` is the engine's time. */
export function swapApiResponseOf(answer: QuoteAnswer, timeTakenSeconds: number, q: RouteQuote = answer.quote): QuoteResponse {
  const routePlan: RoutePlanStep[] = new Array(q.hops.length);
  for (let i = 0; i < q.hops.length; i++) {
    const h = q.hops[i]!;
    routePlan[i] = {
      swapInfo: {
        ammKey: h.pool,
        label: labelOfDex(h.dex),
        inputMint: h.inputMint,
        outputMint: h.outputMint,
        inAmount: h.inAmount.toString(),
        outAmount: h.outAmount.toString(),
        feeAmount: h.fee.toString(),
        feeMint: h.feeMint,
      },
      percent: 100,
      bps: 10_000,
    };
  }
  const exactIn = q.mode === 'ExactIn';
  return {
    inputMint: q.inputMint,
    inAmount: q.inputAmount.toString(),
    outputMint: q.outputMint,
    outAmount: q.outputAmount.toString(),
    otherAmountThreshold: exactIn ? answer.slippage.minOutputText : answer.slippage.maxInputText,
    swapMode: q.mode,
    slippageBps: answer.slippage.bps,
    platformFee: null,
    priceImpactPct: formatFraction(q.priceImpact),
    routePlan,
    contextSlot: Number(answer.contextSlot),
    timeTaken: timeTakenSeconds,
  };
}

/**
 * The parts of a route's body that only the route decides, serialized once per memoized route: a
 * repeated quote writes its body by concatenating these around its per-answer fields (threshold,
 * slippage, slots, time).
 */
interface SwapApiBodyParts {
  /** The memo body's revision they were made at (QuoteBodyParts.revision). */
  readonly revision: number;
  /** The route's mode is ExactIn (its threshold is the minimum output). */
  readonly exactIn: boolean;
  /** `{"inputMint":…,"inAmount":…,"outputMint":…,"outAmount":…,"otherAmountThreshold":"` */
  readonly head: string;
  /** `","swapMode":"ExactIn","slippageBps":` */
  readonly mode: string;
  /** `,"platformFee":null,"priceImpactPct":…,"routePlan":[…],"contextSlot":` */
  readonly tail: string;
}

/**
 * By the memo entry's body parts, which stay with their key while the entry is rewritten in place
 * (engine/quote/memo-entry.ts): the revision tells whether they still hold the route. Answers
 * without a body (RPC, external) are serialized whole.
 */
const bodyParts = new WeakMap<QuoteBodyParts, SwapApiBodyParts>();

/** The parts of `answer`'s route: kept ones when its memo body still holds that route, else serialized now. */
function partsOf(answer: QuoteAnswer): SwapApiBodyParts {
  const body = answer.body;
  const known = body === undefined ? undefined : bodyParts.get(body);
  if (known !== undefined && known.revision === body!.revision) return known;
  // Read once: a cache answer builds its route on every read.
  const q = answer.quote;
  const full = swapApiResponseOf(answer, 0, q);
  const j = JSON.stringify;
  const parts = {
    revision: body?.revision ?? -1,
    exactIn: q.mode === 'ExactIn',
    head: `{"inputMint":${j(full.inputMint)},"inAmount":${j(full.inAmount)},"outputMint":${j(full.outputMint)},"outAmount":${j(full.outAmount)},"otherAmountThreshold":"`,
    mode: `","swapMode":${j(full.swapMode)},"slippageBps":`,
    tail: `,"platformFee":null,"priceImpactPct":${j(full.priceImpactPct)},"routePlan":${j(full.routePlan)},"contextSlot":`,
  };
  if (body !== undefined) bodyParts.set(body, parts);
  return parts;
}

/**
 * The swap API body of an answer as JSON text: byte for byte `JSON.stringify(swapApiResponseOf(answer,
 * timeTakenSeconds))` (tested), from the route's parts serialized once.
 */
export function swapApiBodyOf(answer: QuoteAnswer, timeTakenSeconds: number): string {
  const p = partsOf(answer);
  const threshold = p.exactIn ? answer.slippage.minOutputText : answer.slippage.maxInputText;
  return `${p.head}${threshold}${p.mode}${answer.slippage.bps}${p.tail}${Number(answer.contextSlot)},"timeTaken":${JSON.stringify(timeTakenSeconds)}}`;
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
