/**
 * The public swap API's paths on the uWS quote port (Jupiter Swap API v1), so a client written for
 * it works against tidepool by changing its base URL to `http://host:port/swap/v1`:
 *
 * | path | what |
 * |---|---|
 * | `GET /swap/v1/quote` | a quote of the engine in the API's shape (swap-api-quote.ts) |
 * | `POST /swap/v1/swap` | the quote's swap as an unsigned base64 transaction (engine/swap-builder) |
 * | `POST /swap/v1/swap-instructions` | the same swap as instructions |
 *
 * Every path passes the rate limiter and the bearer check (route-gate.ts), and answers errors in
 * the API's shape `{"error", "errorCode"}`. The swap paths need a swap builder (RPC endpoints);
 * without one they answer 503.
 */
import { performance } from 'node:perf_hooks';

import type uws from '@trufflesuite/uws-js-unofficial';

import { ErrorCode, isTpError } from '../errors.js';
import type { PubkeyCheck, QuoteEngine, QuoteResult } from '../quote/index.js';
import { isQuoteApiError, quoteErrorBody, QuoteErrorCode, parseSwapRequest, type SwapInstructionsResponse, type SwapRequest, type SwapResponse } from '../swap-api/index.js';
import { readBody } from './http-body.js';
import { STATUS, statusLine, type HttpError } from './http-errors.js';
import type { RouteGate } from './route-gate.js';
import { SwapApiBodyWriter } from './swap-api-body.js';
import { isSwapApiError, parseSwapApiQuery, swapApiErrorOf, swapApiErrorOfCode, type SwapApiError } from './swap-api-quote.js';
import { APPLICATION_JSON, CONTENT_TYPE, STATUS_200 } from './uws-strings.js';

/** Largest swap request body: a quote response of a few hops and the options. */
export const MAX_SWAP_BODY_BYTES = 64 * 1024;

/** What builds the swaps (engine/swap-builder `SwapBuilder`). */
export interface SwapTransactions {
  transaction(req: SwapRequest): Promise<SwapResponse>;
  instructions(req: SwapRequest): Promise<SwapInstructionsResponse>;
}

export interface SwapApiHost {
  readonly engine: QuoteEngine;
  readonly pubkeys: PubkeyCheck;
  readonly swaps: SwapTransactions | undefined;
  isDraining(): boolean;
  rateLimit(res: uws.HttpResponse, authorization: string): HttpError | undefined;
}

function send(res: uws.HttpResponse, status: string, body: string, headers?: readonly [string, string][]): void {
  res.cork(() => {
    res.writeStatus(status).writeHeader('Content-Type', 'application/json');
    if (headers !== undefined) for (const [k, v] of headers) res.writeHeader(k, v);
    res.end(body);
  });
}

function sendSwapApiError(res: uws.HttpResponse, e: SwapApiError, headers?: readonly [string, string][]): void {
  send(res, statusLine(e.status), e.body, headers);
}

/** The API error of what a swap build threw: its own refusals as they are, a dead RPC 503, anything else 500. */
function swapErrorOf(err: unknown): SwapApiError {
  if (isQuoteApiError(err)) return { status: err.context.status, body: JSON.stringify(quoteErrorBody(err)) };
  if (isTpError(err, ErrorCode.Unavailable)) return swapApiErrorOfCode(ErrorCode.Unavailable, err.message);
  if (isTpError(err, ErrorCode.RpcFailed)) return swapApiErrorOfCode(ErrorCode.Unavailable, `the RPC endpoint failed: ${err.message}`);
  return swapApiErrorOfCode(ErrorCode.Internal, err instanceof Error ? err.message : String(err));
}

const NEVER_ABORTED = (): boolean => false;

export function mountSwapApiRoutes(app: uws.TemplatedApp, host: SwapApiHost, { gate, afterGate, watch }: RouteGate): void {
  const engine = host.engine;
  /** A gate refusal (rate limit, bearer) in the API's error shape. */
  const refuse = (res: uws.HttpResponse) => (e: HttpError) => sendSwapApiError(res, swapApiErrorOfCode(e.code, e.message), e.headers);

  const bodies = new SwapApiBodyWriter();

  /**
   * Answers a quote query once the gate has admitted it: from the handler (`aborted` undefined, uWS
   * has corked the response) or later (`aborted`, the gate's watch, guards; every write is corked).
   */
  const answerQuote = (res: uws.HttpResponse, rawQuery: string, aborted: (() => boolean) | undefined): void => {
    const request = parseSwapApiQuery(rawQuery, engine.defaultSlippageBps, host.pubkeys);
    if (isSwapApiError(request)) return sendSwapApiError(res, request);
    if (host.isDraining()) return sendSwapApiError(res, swapApiErrorOfCode(ErrorCode.Unavailable, 'the quote service is shutting down'));
    const started = performance.now();
    const result = engine.quote(request);
    if (!(result instanceof Promise)) return writeQuote(res, result, started, aborted === undefined);
    // The fallback answers later: watched here unless the gate's promise already did.
    const gone = aborted ?? watch(res);
    void result.then((r) => {
      if (!gone()) writeQuote(res, r, started, false);
    });
  };

  /** Writes a result: a cache answer from the handler as GET /quote does, bytes without cork. */
  const writeQuote = (res: uws.HttpResponse, r: QuoteResult, started: number, inHandler: boolean): void => {
    if (!r.ok) return sendSwapApiError(res, swapApiErrorOf(r));
    const body = bodies.write(r, (performance.now() - started) / 1000);
    if (inHandler) res.writeStatus(STATUS_200).writeHeader(CONTENT_TYPE, APPLICATION_JSON).end(body);
    else res.cork(() => res.writeStatus(STATUS_200).writeHeader(CONTENT_TYPE, APPLICATION_JSON).end(body));
  };

  app.get('/swap/v1/quote', (res, req) => {
    const rawQuery = req.getQuery() ?? '';
    const outcome = gate(res, req);
    // Admitted at once (no auth, or a token seen before): answered now, no closure made.
    if (outcome === undefined) return answerQuote(res, rawQuery, undefined);
    const aborted: () => boolean = outcome instanceof Promise ? watch(res) : NEVER_ABORTED;
    afterGate(res, outcome, aborted, () => answerQuote(res, rawQuery, aborted), refuse(res));
  });

  const swapPath = (path: string, build: (swaps: SwapTransactions, request: SwapRequest) => Promise<unknown>): void => {
    app.post(path, (res, req) => {
      const outcome = gate(res, req);
      readBody(res, req.getHeader('content-length'), MAX_SWAP_BODY_BYTES, (body, aborted) => {
        afterGate(
          res,
          outcome,
          aborted,
          () => {
            if (!Buffer.isBuffer(body)) return refuse(res)(body);
            let request: SwapRequest;
            try {
              request = parseSwapRequest(JSON.parse(body.toString('utf8')) as unknown);
            } catch (err) {
              if (err instanceof SyntaxError) return sendSwapApiError(res, { status: 400, body: JSON.stringify({ error: `the request body is not valid JSON: ${err.message}`, errorCode: QuoteErrorCode.InvalidRequest }) });
              return sendSwapApiError(res, swapErrorOf(err));
            }
            if (host.isDraining()) return sendSwapApiError(res, swapApiErrorOfCode(ErrorCode.Unavailable, 'the quote service is shutting down'));
            const swaps = host.swaps;
            if (swaps === undefined) return sendSwapApiError(res, swapApiErrorOfCode(ErrorCode.Unavailable, 'this quote service builds no swaps: it has no RPC endpoint (RPC_ENDPOINTS)'));
            void build(swaps, request).then(
              (answer) => {
                if (!aborted()) send(res, STATUS[200], JSON.stringify(answer));
              },
              (err: unknown) => {
                if (!aborted()) sendSwapApiError(res, swapErrorOf(err));
              },
            );
          },
          refuse(res),
        );
      });
    });
  };
  swapPath('/swap/v1/swap', (swaps, request) => swaps.transaction(request));
  swapPath('/swap/v1/swap-instructions', (swaps, request) => swaps.instructions(request));
}
