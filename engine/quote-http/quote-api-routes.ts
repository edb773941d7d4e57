/**
 * The quote API's REST paths on the uWS quote port, beside GET /quote (quote-http-server.ts): thin
 * adapters over the quote engine, each validating its wire format into a `QuoteRequest`, calling
 * `engine.quote`, and writing the answer or failure (statuses from the code table).
 *
 * | path | what |
 * |---|---|
 * | `POST /v1/quote` | one quote from a JSON body (quote-v1-request.ts); answers the GET /quote JSON |
 * | `POST /v1/quote/batch` | up to 100 quotes, each answered or given its own error |
 * | `GET /v1/pools`, `GET /v1/pools/{mint}` | the cached pools, paged (pool-listing.ts) |
 * | `GET /swap/v1/quote`, `POST /swap/v1/swap`, `POST /swap/v1/swap-instructions` | the public swap API (swap-api-routes.ts) |
 * | `GET /v1/health`, `GET /v1/metrics` | /health and /metrics under /v1 |
 * | `GET /ready` | readiness: 200 once the inputs are live, 503 with the reason otherwise |
 *
 * Quote paths (the first four rows) pass the rate limiter and, when auth is on, the JWT bearer check
 * (route-gate.ts); probes and metrics do neither.
 *
 * uWS rules: the request (headers, query, URL parameters) is read synchronously at the handler's
 * top; a body is read with `onData` registered in the handler; everything written after the
 * handler returns is guarded by `onAborted` and written in `cork`.
 */
import type uws from '@trufflesuite/uws-js-unofficial';

import type { JwtVerifier } from '../auth/index.js';
import type { PoolCache } from '../cache/index.js';
import { clientErrorOf } from '../error-status.js';
import { ErrorCode } from '../errors.js';
import { MAX_BATCH_BODY_BYTES, MAX_QUOTE_BODY_BYTES, readBody } from './http-body.js';
import { STATUS, errorBody, httpError, httpErrorOfFailure, type HttpError } from './http-errors.js';
import { quoteOfAnswer, badParameter, isQuoteFailure, type QuoteFailure, QuoteBodyWriter, type QuoteEngine, type QuoteResult, quoteToJson, type PubkeyCheck } from '../quote/index.js';
import { batchItemsOf, parseQuoteBody } from './quote-v1-request.js';
import { poolPage } from './pool-listing.js';
import { createRouteGate } from './route-gate.js';
import type { SwapTransactions } from './swap-api-routes.js';
import { mountSwapApiRoutes } from './swap-api-routes.js';

/** What the routes need from the server that mounts them. */
export interface QuoteApiHost {
  readonly engine: QuoteEngine;
  readonly pubkeys: PubkeyCheck;
  /** The pool cache /v1/pools lists; undefined: those paths answer 503. */
  readonly cache: PoolCache | undefined;
  /** JWT bearer auth of the quote paths; undefined: off. */
  readonly auth: JwtVerifier | undefined;
  /** True once close() began: quotes answer 503. */
  isDraining(): boolean;
  /**
   * The per-client rate limit (keyed by the verified JWT subject, else the address): the 429 to
   * answer, or undefined. Call from the handler with the Authorization header's value.
   */
  rateLimit(res: uws.HttpResponse, authorization: string): HttpError | undefined;
  /** Writes /health (from the handler). */
  health(res: uws.HttpResponse): void;
  /** Writes /metrics (from the handler). */
  metrics(res: uws.HttpResponse): void;
  /** Why the service is not ready (undefined: ready). */
  notReady(): string | undefined;
  /** Builds the swaps of POST /swap/v1/swap and /swap-instructions; undefined: those paths answer 503. */
  readonly swaps: SwapTransactions | undefined;
}

/** The answer of one batch item: its JSON bytes, `{"status":200,"quote":{...}}` or `{"status":4xx,"error":{...}}`. */
type BatchItem = Buffer;

const ITEM_OK_HEAD = Buffer.from('{"status":200,"quote":');
const ITEM_OK_TAIL = Buffer.from('}');
const RESULTS_HEAD = Buffer.from('{"results":[');
const RESULTS_TAIL = Buffer.from(']}');
const COMMA = Buffer.from(',');

/** The batch response body: `{"results":[item,...]}`. */
function batchBody(items: readonly BatchItem[]): Buffer {
  const parts: Buffer[] = [RESULTS_HEAD];
  for (let i = 0; i < items.length; i++) {
    if (i > 0) parts.push(COMMA);
    parts.push(items[i]!);
  }
  parts.push(RESULTS_TAIL);
  return Buffer.concat(parts);
}

const JSON_TYPE = 'application/json';

function send(res: uws.HttpResponse, status: string, body: string, headers?: readonly [string, string][]): void {
  res.cork(() => {
    res.writeStatus(status).writeHeader('Content-Type', JSON_TYPE);
    if (headers !== undefined) for (const [k, v] of headers) res.writeHeader(k, v);
    res.end(body);
  });
}

function sendBytes(res: uws.HttpResponse, body: Buffer): void {
  res.cork(() => {
    res.writeStatus(STATUS[200]).writeHeader('Content-Type', JSON_TYPE).end(body);
  });
}

function sendError(res: uws.HttpResponse, e: HttpError): void {
  send(res, e.status, errorBody(e.code, e.message), e.headers);
}

function itemOfFailure(failure: QuoteFailure): BatchItem {
  const e = clientErrorOf(failure.code, failure.message);
  return Buffer.from(JSON.stringify({ status: e.http, error: { code: e.code, message: e.message } }));
}

/** JSON.parse with the failure as a value naming the problem. */
function parseJson(body: Buffer): unknown {
  if (body.length === 0) return badParameter('body', 'the request body is empty (expected JSON)');
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch (err) {
    return badParameter('body', `the request body is not valid JSON: ${err instanceof Error ? err.message : 'parse error'}`);
  }
}

export function mountQuoteApiRoutes(app: uws.TemplatedApp, host: QuoteApiHost): void {
  const engine = host.engine;
  const bodies = new QuoteBodyWriter();

  /**
   * A batch item of a result, written at once (a cache answer is the engine's reused object): a
   * memoized answer's pre-serialized body (engine/quote answer-json.ts, byte for byte the /quote JSON) copied out
   * of the writer's reused buffer, anything else serialized.
   */
  const itemOf = (result: QuoteResult): BatchItem => {
    if (!result.ok) return itemOfFailure(result);
    const quote =
      result.body === undefined
        ? Buffer.from(JSON.stringify(quoteToJson(quoteOfAnswer(result))))
        : Buffer.from(bodies.write(result.body, result.stateAgeMs, engine.contextSlotText(), result.slippage));
    return Buffer.concat([ITEM_OK_HEAD, quote, ITEM_OK_TAIL]);
  };

  const { gate, afterGate, watch } = createRouteGate(host, (res, e) => sendError(res, e));

  /** Writes a single quote's result as the /quote JSON. */
  const answerQuote = (res: uws.HttpResponse, result: QuoteResult | Promise<QuoteResult>, aborted: () => boolean): void => {
    const write = (r: QuoteResult): void => {
      if (aborted()) return;
      if (!r.ok) return sendError(res, httpErrorOfFailure(r));
      // The memo's pre-serialized body when there is one (byte for byte the /quote JSON).
      if (r.body === undefined) send(res, STATUS[200], JSON.stringify(quoteToJson(quoteOfAnswer(r))));
      else sendBytes(res, Buffer.from(bodies.write(r.body, r.stateAgeMs, engine.contextSlotText(), r.slippage)));
    };
    if (result instanceof Promise) void result.then(write);
    else write(result);
  };

  const draining = (): HttpError | undefined => (host.isDraining() ? httpError(ErrorCode.Unavailable, 'the quote service is shutting down') : undefined);

  app.post('/v1/quote', (res, req) => {
    const outcome = gate(res, req);
    const contentLength = req.getHeader('content-length');
    readBody(res, contentLength, MAX_QUOTE_BODY_BYTES, (body, aborted) => {
      afterGate(res, outcome, aborted, () => {
        if (!Buffer.isBuffer(body)) return sendError(res, body as HttpError);
        const json = parseJson(body);
        if (isQuoteFailure(json)) return sendError(res, httpErrorOfFailure(json));
        const request = parseQuoteBody(json, engine.defaultSlippageBps, host.pubkeys);
        if (isQuoteFailure(request)) return sendError(res, httpErrorOfFailure(request));
        const closing = draining();
        if (closing !== undefined) return sendError(res, closing);
        answerQuote(res, engine.quote(request), aborted);
      });
    });
  });

  app.post('/v1/quote/batch', (res, req) => {
    const outcome = gate(res, req);
    const contentLength = req.getHeader('content-length');
    readBody(res, contentLength, MAX_BATCH_BODY_BYTES, (body, aborted) => {
      afterGate(res, outcome, aborted, () => {
        if (!Buffer.isBuffer(body)) return sendError(res, body as HttpError);
        const json = parseJson(body);
        if (isQuoteFailure(json)) return sendError(res, httpErrorOfFailure(json));
        const items = batchItemsOf(json);
        if (isQuoteFailure(items)) return sendError(res, httpErrorOfFailure(items));
        const closing = draining();
        if (closing !== undefined) return sendError(res, closing);
        const results: BatchItem[] = new Array(items.length);
        let pending: Promise<void>[] | undefined;
        for (let i = 0; i < items.length; i++) {
          const request = parseQuoteBody(items[i], engine.defaultSlippageBps, host.pubkeys);
          if (isQuoteFailure(request)) {
            results[i] = itemOfFailure(request);
            continue;
          }
          // A cache answer is the engine's reused object: turned into JSON before the next quote.
          const result = engine.quote(request);
          if (result instanceof Promise) {
            (pending ??= []).push(result.then((r) => void (results[i] = itemOf(r))));
          } else {
            results[i] = itemOf(result);
          }
        }
        const write = (): void => {
          if (!aborted()) sendBytes(res, batchBody(results));
        };
        if (pending === undefined) write();
        else void Promise.all(pending).then(write);
      });
    });
  });

  const pools = (res: uws.HttpResponse, req: uws.HttpRequest, mint: string | undefined): void => {
    const query = { limit: req.getQuery('limit'), cursor: req.getQuery('cursor'), offset: req.getQuery('offset') };
    const outcome = gate(res, req);
    const aborted = watch(res);
    afterGate(res, outcome, aborted, () => {
      const cache = host.cache;
      if (cache === undefined) return sendError(res, httpError(ErrorCode.Unavailable, 'this server has no pool cache to list'));
      const page = poolPage(cache, query, mint, host.pubkeys);
      if (isQuoteFailure(page)) return sendError(res, httpErrorOfFailure(page));
      send(res, STATUS[200], JSON.stringify(page));
    });
  };
  app.get('/v1/pools', (res, req) => pools(res, req, undefined));
  app.get('/v1/pools/:mint', (res, req) => {
    const raw = req.getParameter(0) ?? '';
    let mint: string;
    try {
      mint = decodeURIComponent(raw);
    } catch {
      mint = raw; // a malformed %-escape: left as it is, refused as no public key
    }
    pools(res, req, mint);
  });

  mountSwapApiRoutes(app, host, { gate, afterGate, watch });

  app.get('/v1/health', (res) => host.health(res));
  app.get('/v1/metrics', (res) => host.metrics(res));
  app.get('/ready', (res) => {
    const reason = host.notReady();
    if (reason === undefined) send(res, STATUS[200], JSON.stringify({ status: 'ready' }));
    else send(res, STATUS[503], JSON.stringify({ status: 'not_ready', reason }));
  });
}
