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

import { ErrorCode, TpError } from '../errors.js';
import { acquireHeapSampling, releaseHeapSampling } from '../obs/index.js';
import type { Logger } from '../obs/index.js';
import type { QuoteMetrics } from '../obs/index.js';
import { quoteOfAnswer, type QuoteAnswer } from './quote-answer.js';
import { STATUS, errorBody, httpError, httpErrorOfFailure, statusLine, type HttpError } from './http-errors.js';
import { heapProfileResponse, metricsResponse, opsFailure, type OpsResponse } from '../common/index.js';
import { QuoteBodyWriter } from './quote-body.js';
import { HealthStatus, type QuoteEngine, type QuoteResult } from './quote-engine.js';
import { isQuoteFailure } from './quote-failure.js';
import { ValidatedPubkeys, parseQuoteQuery, quoteToJson, type QuoteQueryParams } from './quote-json.js';
import { RateLimiter } from './rate-limiter.js';

export interface QuoteHttpServerOptions {
  /** The quote engine every /quote goes through (shared with the gRPC quote stream). */
  engine: QuoteEngine;
  /** Per-client limiter; `false` disables rate limiting. Default: RATE_LIMIT_RPS 20. */
  rateLimiter?: RateLimiter | false;
  /** Bind address; default 127.0.0.1. */
  host?: string;
  /** Header carrying the client's API key (the rate-limit key when present); default x-api-key. */
  apiKeyHeader?: string;
  /** Keep the sampling heap profiler on while started, for /debug/pprof/heap. Default false. */
  heapProfile?: boolean;
  logger?: Logger;
}

export { HealthStatus };

/**
 * uWS.js copies every string argument into a malloc'd UTF-8 buffer (its NativeString) and takes a
 * typed array as it is, so the constant strings of the /quote path are given as bytes; except
 * under uWS.js's pure-JS fallback (its UWS_USE_FALLBACK switch), whose methods take strings only.
 */
const UWS_NATIVE = !['true', 'True', 'TRUE', '1'].includes(process.env.UWS_USE_FALLBACK ?? '');
function uwsString(text: string): uws.RecognizedString {
  return UWS_NATIVE ? new TextEncoder().encode(text) : text;
}

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
const STATUS_200 = uwsString(STATUS[200]);
const CONTENT_TYPE = uwsString('Content-Type');
const APPLICATION_JSON = uwsString('application/json');

/** Distinct IPv4 rate-limit keys kept for reuse (all forgotten when full). */
const MAX_ADDRESS_KEYS = 4096;

export class QuoteHttpServer {
  readonly engine: QuoteEngine;
  private readonly pubkeys = new ValidatedPubkeys();
  private readonly bodies = new QuoteBodyWriter();
  /** The query of the request being handled, read into one reused object (validation is synchronous). */
  private readonly params: QuoteQueryParams = { input: undefined, output: undefined, amount: undefined, maxStateAgeMs: undefined, swapMode: undefined, slippageBps: undefined };
  /** IPv4 address (as an int32) → its rate-limit key, so a request builds no key string. */
  private readonly addressKeys = new Map<number, string>();
  private readonly limiter: RateLimiter | undefined;
  private readonly host: string;
  private readonly apiKeyHeaderKey: uws.RecognizedString;
  private readonly heapProfile: boolean;
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
    this.apiKeyHeaderKey = uwsString((options.apiKeyHeader ?? 'x-api-key').toLowerCase());
    this.heapProfile = options.heapProfile ?? false;
    this.app = uws.App()
      .get('/quote', (res, req) => this.handleQuote(res, req))
      .get('/health', (res) => this.handleHealth(res))
      .get('/metrics', (res) => this.handleOps(res, this.metricsAnswer()))
      .get('/debug/pprof/heap', (res, req) => this.handleOps(res, heapProfileResponse(req.getQuery('format') ?? '')))
      .any('/*', (res) => {
        this.sendError(res, httpError(ErrorCode.NotFound, 'not found'));
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
          reject(new TpError(ErrorCode.Io, `quote service cannot listen on ${this.host}:${port}`));
          return;
        }
        this.listenSocket = socket;
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

  /** One quote: rate limit, validation, the engine, the answer or failure as HTTP. */
  private handleQuote(res: uws.HttpResponse, req: uws.HttpRequest): void {
    // Read everything from `req` now: it is invalid once this function returns.
    const query = req as unknown as QueryReader;
    const params = this.params;
    params.input = query.getQuery(Q_INPUT);
    params.output = query.getQuery(Q_OUTPUT);
    params.amount = query.getQuery(Q_AMOUNT);
    params.maxStateAgeMs = query.getQuery(Q_MAX_STATE_AGE);
    params.swapMode = query.getQuery(Q_SWAP_MODE);
    params.slippageBps = query.getQuery(Q_SLIPPAGE_BPS);
    const apiKey = req.getHeader(this.apiKeyHeaderKey);

    if (this.limiter !== undefined) {
      const retryAfter = this.limiter.take(apiKey !== '' ? `key:${apiKey}` : this.addressKey(res));
      if (retryAfter > 0) {
        const message = `rate limit of ${this.limiter.rps} requests per second exceeded`;
        this.sendError(res, httpError(ErrorCode.RateLimited, message, [['Retry-After', String(retryAfter)]]));
        return;
      }
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

  /** The /quote body of an answer: the memo's bytes with this answer's fields, or JSON built now. */
  private bodyOf(answer: QuoteAnswer): uws.RecognizedString {
    if (answer.body === undefined) return JSON.stringify(quoteToJson(quoteOfAnswer(answer)));
    return this.bodies.write(answer.body, answer.stateAgeMs, this.engine.contextSlotText(), answer.slippage);
  }

  /**
   * The rate-limit key of a client without an API key: `addr:` and its address as text. IPv4 keys
   * are kept per address (as an int32), so a known client costs no string building.
   */
  private addressKey(res: uws.HttpResponse): string {
    const raw = res.getRemoteAddress();
    if (raw.byteLength !== 4) return `addr:${Buffer.from(res.getRemoteAddressAsText()).toString()}`;
    const b = new Uint8Array(raw);
    const ip = (b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!;
    let key = this.addressKeys.get(ip);
    if (key === undefined) {
      key = `addr:${b[0]!}.${b[1]!}.${b[2]!}.${b[3]!}`;
      if (this.addressKeys.size >= MAX_ADDRESS_KEYS) this.addressKeys.clear();
      this.addressKeys.set(ip, key);
    }
    return key;
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
