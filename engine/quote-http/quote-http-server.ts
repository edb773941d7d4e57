/**
 * GET /quote, /health, /metrics and /debug/pprof/heap over uWebSockets.js: a transport adapter over
 * the quote engine (quote-engine.ts), which makes every quoting decision. What is this file's own:
 * the query's validation, the per-client rate limit, and writing answers and failures as HTTP.
 *
 * A cache answer is written from the handler itself (uWS has corked the response), from the memo's
 * pre-serialized body. Only when the engine falls back to RPC does the request turn asynchronous.
 *
 * uWS rules followed here: the request object (query, headers, remote address) is read only
 * synchronously in the handler, before anything else; every response written after the handler
 * returns is guarded by `onAborted` and written inside `res.cork`.
 */
import uws from '@trufflesuite/uws-js-unofficial';

import type { JwtVerifier } from '../auth/index.js';
import type { PoolCache } from '../cache/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { acquireHeapSampling, releaseHeapSampling, type Logger, type QuoteMetrics } from '../obs/index.js';
import { quoteOfAnswer, type QuoteAnswer, QuoteBodyWriter, type QuoteEngine, type QuoteResult, isQuoteFailure, ClientAddressKeys, RateLimiter, ValidatedPubkeys, quoteToJson } from '../quote/index.js';
import { STATUS, errorBody, httpError, httpErrorOfFailure, statusLine, type HttpError } from './http-errors.js';
import { checkBearer, verifiedSubjectOf } from './http-bearer-auth.js';
import { mountQuoteApiRoutes } from './quote-api-routes.js';
import type { SwapTransactions } from './swap-api-routes.js';
import { oversizedRequest, repeatedParameter } from './http-request-limits.js';
import { heapProfileResponse, metricsResponse, opsFailure, type OpsResponse, HealthStatus } from '../common/index.js';


import { parseQuoteQuery, type QuoteQueryParams } from './quote-query.js';
import { APPLICATION_JSON, CONTENT_TYPE, STATUS_200, uwsString } from './uws-strings.js';



export interface QuoteHttpServerOptions {
  /** The quote engine every /quote goes through (shared with the gRPC quote stream). */
  engine: QuoteEngine;
  /** Per-client limiter; `false` disables rate limiting. Default: RATE_LIMIT_RPS 20. */
  rateLimiter?: RateLimiter | false;
  /** Bind address; default 127.0.0.1. */
  host?: string;
  /** Serve HTTPS with this certificate and key (files, PEM); undefined: plain HTTP. */
  tls?: { certFile: string; keyFile: string } | undefined;
  /** Keep the sampling heap profiler on while started, for /debug/pprof/heap. Default false. */
  heapProfile?: boolean;
  logger?: Logger;
  /** JWT bearer auth of the quote paths (engine/auth `createGrpcAuth`); undefined: off. */
  auth?: JwtVerifier | undefined;
  /** The pool cache GET /v1/pools lists (the engine's). */
  cache?: PoolCache | undefined;
  /** Why the service is not ready, for GET /ready (undefined: ready). Default: always ready. */
  notReady?: () => string | undefined;
  /** Builds the swaps of POST /swap/v1/swap and /swap-instructions (engine/swap-builder); none: 503. */
  swaps?: SwapTransactions | undefined;
}

export { HealthStatus };

/**
 * `HttpRequest.getQuery` as the native method is: it takes any RecognizedString as the key, and
 * answers undefined for an absent parameter (the typings say `string` for both).
 */
interface QueryReader {
  getQuery(key: uws.RecognizedString): string | undefined;
}
const Q_INPUT = uwsString('input');
const Q_OUTPUT = uwsString('output');
const Q_AMOUNT = uwsString('amount');
const Q_MAX_STATE_AGE = uwsString('maxStateAgeMs');
const Q_SWAP_MODE = uwsString('swapMode');
const Q_SLIPPAGE_BPS = uwsString('slippageBps');
const Q_DEXES = uwsString('dexes');
const Q_EXCLUDE_DEXES = uwsString('excludeDexes');
const Q_ONLY_DIRECT = uwsString('onlyDirectRoutes');

export class QuoteHttpServer {
  readonly engine: QuoteEngine;
  private readonly pubkeys = new ValidatedPubkeys();
  private readonly bodies = new QuoteBodyWriter();
  /** The query of the request being handled, read into one reused object (validation is synchronous). */
  private readonly params: QuoteQueryParams = {
    input: undefined,
    output: undefined,
    amount: undefined,
    maxStateAgeMs: undefined,
    swapMode: undefined,
    slippageBps: undefined,
    dexes: undefined,
    excludeDexes: undefined,
    onlyDirectRoutes: undefined,
  };
  /** The rate-limit keys of clients known by their address. */
  private readonly addressKeys = new ClientAddressKeys();
  private readonly limiter: RateLimiter | undefined;
  private readonly host: string;
  private readonly heapProfile: boolean;
  private readonly auth: JwtVerifier | undefined;
  private readonly app: uws.TemplatedApp;
  private listenSocket: uws.us_listen_socket | undefined;
  private boundPort = 0;
  private draining = false;
  private sampling = false;
  private closed: Promise<void> | undefined;

  constructor(options: QuoteHttpServerOptions) {
    this.engine = options.engine;
    this.limiter = options.rateLimiter === false ? undefined : (options.rateLimiter ?? new RateLimiter());
    this.host = options.host ?? '127.0.0.1';
    this.heapProfile = options.heapProfile ?? false;
    this.auth = options.auth;
    const notReady = options.notReady ?? (() => undefined);
    this.app = (options.tls === undefined ? uws.App() : uws.SSLApp({ cert_file_name: options.tls.certFile, key_file_name: options.tls.keyFile }))
      .get('/quote', (res, req) => this.handleQuote(res, req))
      .get('/health', (res, req) => {
        if (this.guarded(res, req)) this.handleHealth(res);
      })
      .get('/metrics', (res, req) => {
        if (this.guarded(res, req)) this.handleOps(res, this.metricsAnswer());
      })
      .get('/debug/pprof/heap', (res, req) => {
        if (this.guarded(res, req)) this.handleOps(res, heapProfileResponse(req.getQuery('format') ?? ''));
      });
    // The /v1 REST paths, the swap API (/swap/v1/...) and GET /ready: adapters of their own (quote-api-routes.ts).
    mountQuoteApiRoutes(this.app, {
      engine: this.engine,
      pubkeys: this.pubkeys,
      cache: options.cache,
      auth: this.auth,
      isDraining: () => this.draining,
      rateLimit: (res, authorization) => this.rateLimit(res, authorization),
      health: (res) => this.handleHealth(res),
      metrics: (res) => this.handleOps(res, this.metricsAnswer()),
      notReady: () => (this.draining ? 'shutting down' : notReady()),
      swaps: options.swaps,
    });
    this.app
      // Every path of this port is GET only: another method on a known path is 405 with Allow.
      .any('/quote', (res, req) => this.methodNotAllowed(res, req))
      .any('/health', (res, req) => this.methodNotAllowed(res, req))
      .any('/metrics', (res, req) => this.methodNotAllowed(res, req))
      .any('/debug/pprof/heap', (res, req) => this.methodNotAllowed(res, req))
      .any('/*', (res, req) => {
        if (this.guarded(res, req)) this.sendError(res, httpError(ErrorCode.NotFound, 'not found'));
      });
  }

  /** The engine's metrics registry (GET /metrics). */
  get metrics(): QuoteMetrics {
    return this.engine.metrics;
  }

  /** The bound port (after start). */
  get port(): number {
    return this.boundPort;
  }

  /** Binds `port` (0: any free port). Resolves with the bound port. */
  async start(port = 8080): Promise<number> {
    if (this.heapProfile && !this.sampling) {
      this.sampling = true;
      await acquireHeapSampling();
    }
    return new Promise((resolve, reject) => {
      this.app.listen(this.host, port, (socket) => {
        if (socket === false) {
          reject(new TpError(ErrorCode.Io, `quote service cannot listen on ${this.host}:${port}`, { context: { host: this.host, port } }));
          return;
        }
        this.listenSocket = socket;
        // Idle clients' buckets are dropped, so the limiter shrinks when traffic stops.
        this.limiter?.startSweeping();
        this.boundPort = uws.us_socket_local_port(socket as unknown as uws.us_socket);
        resolve(this.boundPort);
      });
    });
  }

  /**
   * Graceful close: stops listening, lets the engine's RPC fallbacks in flight answer (each is
   * bounded by its deadline), then closes every connection. New quotes on open connections
   * meanwhile get 503 TP_ERR_UNAVAILABLE. The engine itself stays open (its owner closes it).
   * Idempotent.
   */
  close(): Promise<void> {
    this.closed ??= (async () => {
      this.draining = true;
      this.limiter?.stopSweeping();
      if (this.listenSocket !== undefined) {
        uws.us_listen_socket_close(this.listenSocket);
        this.listenSocket = undefined;
      }
      await this.engine.drain();
      (this.app as unknown as { close?: () => void }).close?.();
      if (this.sampling) {
        this.sampling = false;
        await releaseHeapSampling();
      }
    })();
    return this.closed;
  }

  /** The /metrics answer (also served on the metrics port). */
  metricsAnswer(): Promise<OpsResponse> {
    return metricsResponse(this.engine.metrics.registry, () => this.engine.refreshGauges());
  }

  /** False (and answered 414 / 431) when the request is too large to be read. */
  private guarded(res: uws.HttpResponse, req: uws.HttpRequest): boolean {
    const refused = oversizedRequest(req, req.getQuery());
    if (refused === undefined) return true;
    this.sendError(res, refused);
    return false;
  }

  /** 405 TP_ERR_METHOD_NOT_ALLOWED with `Allow: GET` (after the size checks). */
  private methodNotAllowed(res: uws.HttpResponse, req: uws.HttpRequest): void {
    if (!this.guarded(res, req)) return;
    const method = req.getMethod().toUpperCase();
    this.sendError(res, httpError(ErrorCode.MethodNotAllowed, `method ${method} not allowed on ${req.getUrl()}: use GET`, [['Allow', 'GET']]));
  }

  /** One quote: rate limit, validation, the engine, the answer or failure as HTTP. */
  private handleQuote(res: uws.HttpResponse, req: uws.HttpRequest): void {
    // Read everything from `req` now: it is invalid once this function returns.
    const rawQuery = req.getQuery();
    const oversized = oversizedRequest(req, rawQuery);
    if (oversized !== undefined) {
      this.sendError(res, oversized);
      return;
    }
    const query = req as unknown as QueryReader;
    const params = this.params;
    params.input = query.getQuery(Q_INPUT);
    params.output = query.getQuery(Q_OUTPUT);
    params.amount = query.getQuery(Q_AMOUNT);
    params.maxStateAgeMs = query.getQuery(Q_MAX_STATE_AGE);
    params.swapMode = query.getQuery(Q_SWAP_MODE);
    params.slippageBps = query.getQuery(Q_SLIPPAGE_BPS);
    params.dexes = query.getQuery(Q_DEXES);
    params.excludeDexes = query.getQuery(Q_EXCLUDE_DEXES);
    params.onlyDirectRoutes = query.getQuery(Q_ONLY_DIRECT);
    const authorization = this.auth === undefined ? '' : req.getHeader('authorization');

    const limited = this.rateLimit(res, authorization);
    if (limited !== undefined) {
      this.sendError(res, limited);
      return;
    }
    if (this.auth !== undefined && !this.admitBearer(res, this.auth, authorization)) return;

    const repeated = repeatedParameter(rawQuery);
    if (repeated !== undefined) {
      this.sendError(res, httpError(ErrorCode.BadParameter, `parameter ${repeated} is given more than once`));
      return;
    }
    const request = parseQuoteQuery(params, this.engine.defaultSlippageBps, this.pubkeys);
    if (isQuoteFailure(request)) {
      this.sendError(res, httpErrorOfFailure(request));
      return;
    }
    if (this.draining) {
      this.sendError(res, httpError(ErrorCode.Unavailable, 'the quote service is shutting down'));
      return;
    }
    const result = this.engine.quote(request);
    if (result instanceof Promise) {
      this.answerLater(res, result);
      return;
    }
    if (!result.ok) {
      this.sendError(res, httpErrorOfFailure(result));
      return;
    }
    // Synchronous, in the handler: uWS has corked the response already.
    res.writeStatus(STATUS_200).writeHeader(CONTENT_TYPE, APPLICATION_JSON).end(this.bodyOf(result));
  }

  /**
   * The bearer check of a GET /quote (auth on), from the handler: true when the token is admitted at
   * once (a token the verifier has seen). Otherwise this method answers: the 401 now, or, for a token
   * not seen yet, the quote once its signature is checked (the query copied: `params` is reused).
   */
  private admitBearer(res: uws.HttpResponse, auth: JwtVerifier, authorization: string): boolean {
    const refusal = checkBearer(auth, authorization);
    if (refusal === undefined) return true;
    if (!(refusal instanceof Promise)) {
      this.sendError(res, refusal);
      return false;
    }
    const copy = { ...this.params };
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    void refusal.then((r) => {
      if (aborted) return;
      if (r !== undefined) return res.cork(() => this.sendError(res, r));
      const request = parseQuoteQuery(copy, this.engine.defaultSlippageBps, this.pubkeys);
      if (isQuoteFailure(request)) return res.cork(() => this.sendError(res, httpErrorOfFailure(request)));
      if (this.draining) return res.cork(() => this.sendError(res, httpError(ErrorCode.Unavailable, 'the quote service is shutting down')));
      const result = this.engine.quote(request);
      void (result instanceof Promise ? result : Promise.resolve(result)).then((answer) => {
        if (aborted) return;
        const body = answer.ok ? this.bodyOf(answer) : undefined;
        res.cork(() => {
          if (body !== undefined) res.writeStatus(STATUS[200]).writeHeader('Content-Type', 'application/json').end(body);
          else if (!answer.ok) this.sendError(res, httpErrorOfFailure(answer));
        });
      });
    });
    return false;
  }

  /**
   * The per-client rate limit of a quote request (from the handler): the 429 to answer, or
   * undefined. The key is the API key when given, else the remote address.
   */
  /**
   * The rate limit of a request: keyed by the verified JWT subject when auth is on and the bearer
   * token has verified, else by the remote address. Never by anything the client picks freely (an
   * `x-api-key` rotated per request got every request through; an unverified token's claims are
   * the client's words).
   */
  private rateLimit(res: uws.HttpResponse, authorization: string): HttpError | undefined {
    if (this.limiter === undefined) return undefined;
    const subject = this.auth === undefined ? undefined : verifiedSubjectOf(this.auth, authorization);
    const retryAfter = this.limiter.take(subject !== undefined && subject !== '' ? `sub:${subject}` : this.addressKeys.of(res));
    if (retryAfter <= 0) return undefined;
    const message = `rate limit of ${this.limiter.rps} requests per second exceeded`;
    return httpError(ErrorCode.RateLimited, message, [['Retry-After', String(retryAfter)]]);
  }

  /** The /quote body of an answer: the memo's bytes with this answer's fields, or JSON built now. */
  private bodyOf(answer: QuoteAnswer): uws.RecognizedString {
    if (answer.body === undefined) return JSON.stringify(quoteToJson(quoteOfAnswer(answer)));
    return this.bodies.write(answer.body, answer.stateAgeMs, this.engine.contextSlotText(), answer.slippage);
  }

  /** An answer that comes later (the RPC fallback): written guarded by onAborted, inside cork. */
  private answerLater(res: uws.HttpResponse, pending: Promise<QuoteResult>): void {
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    void pending.then((result) => {
      if (aborted) return;
      if (result.ok) {
        const body = this.bodyOf(result);
        res.cork(() => {
          res.writeStatus(STATUS[200]).writeHeader('Content-Type', 'application/json').end(body);
        });
        return;
      }
      const e = httpErrorOfFailure(result);
      res.cork(() => {
        res.writeStatus(e.status).writeHeader('Content-Type', 'application/json').end(errorBody(e.code, e.message));
      });
    });
  }

  /** /health: 200 while the cache or the RPC fallback can answer, 503 otherwise or while draining. */
  private handleHealth(res: uws.HttpResponse): void {
    const body = this.engine.health(this.draining);
    const ok = body.status === HealthStatus.Ok || body.status === HealthStatus.Degraded;
    this.send(res, ok ? STATUS[200] : STATUS[503], JSON.stringify(body));
  }

  /** An asynchronous ops answer (metrics, heap profile): onAborted, then cork. */
  private handleOps(res: uws.HttpResponse, answer: Promise<OpsResponse>): void {
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    answer.catch(() => opsFailure()).then((r) => {
      if (aborted) return;
      res.cork(() => {
        res.writeStatus(statusLine(r.status));
        for (const [k, v] of r.headers) res.writeHeader(k, v);
        res.end(r.body);
      });
    }, () => undefined);
  }

  /** Sends synchronously, from the handler's top (already corked; cork again is harmless). */
  private send(res: uws.HttpResponse, status: string, body: string, headers?: [string, string][]): void {
    res.cork(() => {
      res.writeStatus(status).writeHeader('Content-Type', 'application/json');
      if (headers !== undefined) for (const [k, v] of headers) res.writeHeader(k, v);
      res.end(body);
    });
  }

  private sendError(res: uws.HttpResponse, e: HttpError): void {
    this.send(res, e.status, errorBody(e.code, e.message), e.headers);
  }
}
