/**
 * The unary calls of `tidepool.v1.QuoteService` on the local quote service: `GetQuote` (one quote)
 * and `GetQuotes` (1 to MAX_BATCH_QUOTES), adapters over the quote engine beside StreamBatchQuotes
 * (quote_service.proto documents every field).
 *
 * - A request is validated into the engine's `QuoteRequest` (INVALID_ARGUMENT naming the field:
 *   `amount: ...`, `requests[3].dexes: ...`), with the same route filter parsing as the REST paths.
 * - GetQuote: the answer as a `Quote` (answer-message.ts), or the failure's status from the code table
 *   (engine/error-status.ts) with `<code>: <message>` as details.
 * - GetQuotes: one `Quote` per request, in order; a request that fails (malformed or unquotable)
 *   is a Quote with `error` set, as on the stream; only a call without requests or with more
 *   than MAX_BATCH_QUOTES fails as a whole.
 * - The guards (JWT bearer) are StreamCalls' (stream-calls.ts), shared with the stream.
 */
import type * as grpc from '@grpc/grpc-js';

import { clientErrorOf, grpcStatusOf } from '../error-status.js';
import { ErrorCode } from '../errors.js';
import { U64_MAX } from '../cache/index.js';
import { isPubkey } from '../chain/index.js';
import { SwapMode } from '../dex/index.js';
import { type QuoteEngine, type QuoteResult, type QuoteRequest, badParameter, isQuoteFailure, type QuoteFailure, WireSwapMode, pairId, type UpstreamQuote, MAX_SLIPPAGE_BPS, MAX_BATCH_QUOTES, parseDexList, routeFilterOf } from '../quote/index.js';

import { errorQuoteMessage, quoteErrorOf } from './quote-stream-request.js';



import { answerQuoteMessage } from './answer-message.js';

/** GetQuoteRequest as the loader hands it (camelCase; u64 as a decimal string; optional fields may be absent). */
export interface GetQuoteRequestMessage {
  inputMint?: string;
  outputMint?: string;
  amount?: string | number;
  swapMode?: string | number;
  slippageBps?: number | null;
  dexes?: string[];
  excludeDexes?: string[];
  onlyDirectRoutes?: boolean;
  maxStateAgeMs?: number | null;
}

export interface GetQuotesRequestMessage {
  requests?: GetQuoteRequestMessage[];
}

/** The message of one request, validated; `field` prefixes the names in errors (`requests[2].`). */
export function parseGetQuoteRequest(m: GetQuoteRequestMessage, defaultSlippageBps: number, field = ''): QuoteRequest | QuoteFailure {
  const input = m.inputMint ?? '';
  if (input === '' || !isPubkey(input)) return badParameter(`${field}input_mint`, `${field}input_mint: not a base58 32-byte public key`);
  const output = m.outputMint ?? '';
  if (output === '' || !isPubkey(output)) return badParameter(`${field}output_mint`, `${field}output_mint: not a base58 32-byte public key`);
  if (output === input) return badParameter(`${field}output_mint`, `${field}output_mint: must differ from input_mint`);
  const text = typeof m.amount === 'number' ? String(m.amount) : (m.amount ?? '');
  if (!/^[0-9]{1,20}$/.test(text) || BigInt(text) > U64_MAX) return badParameter(`${field}amount`, `${field}amount: not a u64 decimal amount`);
  const amount = BigInt(text);
  if (amount === 0n) return badParameter(`${field}amount`, `${field}amount: must be greater than 0`);
  let mode: SwapMode;
  const rawMode = m.swapMode;
  if (rawMode === undefined || rawMode === WireSwapMode.Unspecified || rawMode === WireSwapMode.ExactIn || rawMode === 0 || rawMode === 1) mode = SwapMode.ExactIn;
  else if (rawMode === WireSwapMode.ExactOut || rawMode === 2) mode = SwapMode.ExactOut;
  else return badParameter(`${field}swap_mode`, `${field}swap_mode: unknown swap mode ${String(rawMode)}`);
  let slippageBps = defaultSlippageBps;
  if (m.slippageBps !== undefined && m.slippageBps !== null) {
    if (!Number.isInteger(m.slippageBps) || m.slippageBps < 0 || m.slippageBps > MAX_SLIPPAGE_BPS) {
      return badParameter(`${field}slippage_bps`, `${field}slippage_bps: ${m.slippageBps} is outside 0..${MAX_SLIPPAGE_BPS}`);
    }
    slippageBps = m.slippageBps;
  }
  const dexes = parseDexList(m.dexes ?? [], `${field}dexes`, true);
  if (isQuoteFailure(dexes)) return dexes;
  const excludeDexes = parseDexList(m.excludeDexes ?? [], `${field}exclude_dexes`, true);
  if (isQuoteFailure(excludeDexes)) return excludeDexes;
  const routeFilter = routeFilterOf(dexes as ReadonlySet<string> | undefined, excludeDexes as ReadonlySet<string> | undefined, m.onlyDirectRoutes === true);
  const maxStateAgeMs = m.maxStateAgeMs === undefined || m.maxStateAgeMs === null ? undefined : m.maxStateAgeMs;
  return {
    inputMint: input,
    outputMint: output,
    mode,
    amount,
    amountText: text,
    maxStateAgeMs,
    slippageBps,
    ...(routeFilter === undefined ? {} : { routeFilter }),
  };
}

function statusOf(failure: QuoteFailure): Partial<grpc.StatusObject> {
  const e = clientErrorOf(failure.code, failure.message);
  return { code: e.grpc, details: `${e.code}: ${e.message}` };
}

/** The Quote of a request's result. */
function messageOf(request: QuoteRequest, result: QuoteResult, nowMs: number, engine: QuoteEngine): UpstreamQuote {
  const exactOut = request.mode === SwapMode.ExactOut;
  const id = pairId(request.inputMint, request.outputMint, request.amount, exactOut);
  if (result.ok) return answerQuoteMessage(id, result, engine, nowMs);
  const pair = { pairId: id, inputMint: request.inputMint, outputMint: request.outputMint, mode: request.mode, amount: request.amount, amountText: request.amount.toString() };
  return errorQuoteMessage(pair, request.slippageBps, quoteErrorOf(result), nowMs);
}

/** The error Quote of a malformed item of GetQuotes (its pair as given, amounts zero). */
function malformedMessage(m: GetQuoteRequestMessage, failure: QuoteFailure, defaultSlippageBps: number, nowMs: number): UpstreamQuote {
  const pair = { pairId: '', inputMint: m.inputMint ?? '', outputMint: m.outputMint ?? '', mode: SwapMode.ExactIn, amount: 0n, amountText: '0' };
  return errorQuoteMessage(pair, typeof m.slippageBps === 'number' ? m.slippageBps : defaultSlippageBps, quoteErrorOf(failure), nowMs);
}

/** The GetQuote and GetQuotes handlers over `engine` (unguarded: StreamCalls guards them). */
export function quoteUnaryHandlers(engine: QuoteEngine, wallClock: () => number = Date.now): {
  GetQuote: grpc.handleUnaryCall<GetQuoteRequestMessage, UpstreamQuote>;
  GetQuotes: grpc.handleUnaryCall<GetQuotesRequestMessage, { quotes: UpstreamQuote[] }>;
} {
  return {
    GetQuote(call, callback) {
      const request = parseGetQuoteRequest(call.request, engine.defaultSlippageBps);
      if (isQuoteFailure(request)) return callback(statusOf(request));
      const answer = (r: QuoteResult): void => {
        if (r.ok) callback(null, answerQuoteMessage(pairId(request.inputMint, request.outputMint, request.amount, request.mode === SwapMode.ExactOut), r, engine, wallClock()));
        else callback(statusOf(r));
      };
      const result = engine.quote(request);
      if (result instanceof Promise) void result.then(answer);
      else answer(result);
    },
    GetQuotes(call, callback) {
      const items = call.request.requests ?? [];
      if (items.length === 0) return callback({ code: grpcStatusOf(ErrorCode.BadParameter), details: 'requests: at least one request is required' });
      if (items.length > MAX_BATCH_QUOTES) {
        return callback({ code: grpcStatusOf(ErrorCode.BadParameter), details: `requests: ${items.length} requests; the limit is ${MAX_BATCH_QUOTES}` });
      }
      const now = wallClock();
      const quotes: UpstreamQuote[] = new Array(items.length);
      let pending: Promise<void>[] | undefined;
      for (let i = 0; i < items.length; i++) {
        const item = items[i]!;
        const request = parseGetQuoteRequest(item, engine.defaultSlippageBps, `requests[${i}].`);
        if (isQuoteFailure(request)) {
          quotes[i] = malformedMessage(item, request, engine.defaultSlippageBps, now);
          continue;
        }
        // A cache answer is the engine's reused object: written out before the next quote.
        const result = engine.quote(request);
        if (result instanceof Promise) (pending ??= []).push(result.then((r) => void (quotes[i] = messageOf(request, r, wallClock(), engine))));
        else quotes[i] = messageOf(request, result, now, engine);
      }
      if (pending === undefined) callback(null, { quotes });
      else void Promise.all(pending).then(() => callback(null, { quotes }));
    },
  };
}
