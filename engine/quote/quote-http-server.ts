/**
 * The quote service over uWebSockets.js: `GET /quote`, `GET /health`, `GET /metrics`,
 * `GET /debug/pprof/heap`.
 *
 * /quote is cache-first (spec 02): the cache path runs synchronously behind the circuit breaker and
 * answers from the handler itself. Only when it fails (no pools in cache, no valid quotes, breaker
 * open, unknown token) and the RPC fallback is available (hybrid mode with a pool loader, or the
 * cache disabled) does the request turn asynchronous.
 *
 * uWS rules followed here: the request object (query, headers, remote address) is read only
 * synchronously in the handler, before anything else; every response written after the handler
 * returns is guarded by `onAborted` and written inside `res.cork`.
 */
import { performance } from 'node:perf_hooks';

import uws from '@trufflesuite/uws-js-unofficial';

import type { PoolCache } from '../cache/index.js';
import { NO_ID } from '../cache/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { acquireHeapSampling, releaseHeapSampling } from '../obs/index.js';
import type { Logger } from '../obs/index.js';
import { createQuoteMetrics, type QuoteMetrics } from '../obs/index.js';
import type { PoolLoader } from '../pools/index.js';
import type { Quote } from './cache-quoter.js';
import { CircuitBreaker, CircuitState } from './circuit-breaker.js';
import { QuoteErrorCode, quoteError } from './errors.js';
import { STATUS, cachePathMayFallBack, errorBody, httpErrorOf, isNotFoundError, type HttpError, type StatusLine } from './http-errors.js';
import { heapProfileResponse, metricsResponse, opsFailure, type OpsResponse } from './ops-endpoints.js';
import { PoolDirectory } from './pool-directory.js';
import { DEFAULT_CACHE_FIRST_TIMEOUT_MS, DEFAULT_FALLBACK_DEADLINE_MS } from './quote-config.js';
import { QuoteBodyWriter } from './quote-body.js';
import { ValidatedPubkeys, parseQuoteQuery, quoteToJson, type QuoteQuery } from './quote-json.js';
import { DEFAULT_QUOTE_MEMO_ENTRIES, QuoteMemo, type MemoizedQuote } from './quote-memo.js';
import { RateLimiter } from './rate-limiter.js';
import { RpcQuoter } from './rpc-quoter.js';


export interface QuoteHttpServerOptions {
  cache: PoolCache;
  /** Spec 02 `Cache.Enabled`; false: every quote comes from RPC. Default true. */
  cacheEnabled?: boolean;
  /** Spec 02 `HybridMode.Enabled`: RPC fallback when the cache path fails. Default true. */
  hybridMode?: boolean;
  /** Reads pool state from RPC for the fallback; without it there is no fallback. */
  loader?: PoolLoader;
  /** Candidate pools of the fallback; a fresh directory by default (fed from the cache). */
  directory?: PoolDirectory;
  /** Deadline of one RPC fallback in ms (504 past it). Default 2000. */
  fallbackDeadlineMs?: number;
  /**
   * Spec 02 `HybridMode.CacheFirstTimeout` in ms: a cache attempt that takes longer still answers,
   * but counts as a circuit breaker failure. Default 10.
   */
  cacheFirstTimeoutMs?: number;
  /** Monotonic ms clock timing the cache attempt (tests inject one); default performance.now. */
  clock?: () => number;
  /** The quote registry; a fresh one by default. */
  metrics?: QuoteMetrics;
  /** Per-client limiter; `false` disables rate limiting. Default: RATE_LIMIT_RPS 20. */
  rateLimiter?: RateLimiter | false;
  /** Guards the cache path; default thresholds of ARCHITECTURE.md §3. */
  breaker?: CircuitBreaker;
  /** Bind address; default 127.0.0.1. */
  host?: string;
  /** The bus connection status reported by /health; default 'disabled'. */
  busStatus?: () => string;
  /** Header carrying the client's API key (the rate-limit key when present); default x-api-key. */
  apiKeyHeader?: string;
  /** Keep the sampling heap profiler on while started, for /debug/pprof/heap. Default false. */
  heapProfile?: boolean;
  /** Cache quotes memoized at most (quote-memo.ts); 0 turns the memo off. Default 4096. */
  quoteMemoEntries?: number;
  logger?: Logger;
}

/** /health `status`: ok (cache serves), degraded (only RPC serves), unavailable (neither; HTTP 503), draining. */
export const HealthStatus = { Ok: 'ok', Degraded: 'degraded', Unavailable: 'unavailable', Draining: 'draining' } as const;
export type HealthStatus = (typeof HealthStatus)[keyof typeof HealthStatus];

const OPS_STATUS: Record<OpsResponse['status'], StatusLine> = { 200: STATUS[200], 400: STATUS[400], 404: STATUS[404], 500: STATUS[500] };
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
const STATUS_200 = uwsString(STATUS[200]);
const CONTENT_TYPE = uwsString('Content-Type');
const APPLICATION_JSON = uwsString('application/json');

/** Distinct IPv4 rate-limit keys kept for reuse (all forgotten when full). */
const MAX_ADDRESS_KEYS = 4096;

export class QuoteHttpServer {
  readonly metrics: QuoteMetrics;
  readonly breaker: CircuitBreaker;
  readonly directory: PoolDirectory;
  readonly cacheEnabled: boolean;
  readonly hybridMode: boolean;
  readonly cacheFirstTimeoutMs: number;
  /** Memoized cache quotes (every cache answer goes through it). */
  readonly memo: QuoteMemo;
  private readonly cache: PoolCache;
  private readonly pubkeys = new ValidatedPubkeys();
  private readonly bodies = new QuoteBodyWriter();
  /** IPv4 address (as an int32) → its rate-limit key, so a request builds no key string. */
  private readonly addressKeys = new Map<number, string>();
  /** performance.now is the breaker clock too: one reading ends both the attempt and the latency. */
  private readonly clockIsPerformanceNow: boolean;
  private readonly rpc: RpcQuoter | undefined;
  private readonly limiter: RateLimiter | undefined;
  private readonly host: string;
  private readonly busStatus: () => string;
  private readonly apiKeyHeader: string;
  private readonly apiKeyHeaderKey: uws.RecognizedString;
  private readonly clock: () => number;
  private readonly heapProfile: boolean;
  private readonly log: Logger | undefined;
  private readonly app: uws.TemplatedApp;
  private readonly inflight = new Set<Promise<void>>();
  private listenSocket: uws.us_listen_socket | undefined;
  private boundPort = 0;
  private draining = false;
  private sampling = false;
  private closed: Promise<void> | undefined;
  private fallbacks = 0;
  private slowCacheAttempts = 0;
  /** The value last written to the breaker gauge. */
  private breakerGauge = -1;
  /** The breaker clock's reading at the end of the last successful cache attempt. */
  private attemptEnded = 0;

  constructor(options: QuoteHttpServerOptions) {
    this.cache = options.cache;
    this.metrics = options.metrics ?? createQuoteMetrics();
    this.limiter = options.rateLimiter === false ? undefined : (options.rateLimiter ?? new RateLimiter());
    this.host = options.host ?? '127.0.0.1';
    this.busStatus = options.busStatus ?? (() => 'disabled');
    this.apiKeyHeader = (options.apiKeyHeader ?? 'x-api-key').toLowerCase();
    this.apiKeyHeaderKey = uwsString(this.apiKeyHeader);
    this.breaker = options.breaker ?? new CircuitBreaker();
    this.cacheEnabled = options.cacheEnabled ?? true;
    this.hybridMode = options.hybridMode ?? true;
    this.cacheFirstTimeoutMs = options.cacheFirstTimeoutMs ?? DEFAULT_CACHE_FIRST_TIMEOUT_MS;
    this.clock = options.clock ?? performance.now.bind(performance);
    this.clockIsPerformanceNow = options.clock === undefined;
    this.memo = new QuoteMemo(this.cache, { maxEntries: options.quoteMemoEntries ?? DEFAULT_QUOTE_MEMO_ENTRIES });
    this.heapProfile = options.heapProfile ?? false;
    this.log = options.logger;
    this.directory = options.directory ?? new PoolDirectory();
    // The fallback exists with a loader, in hybrid mode or when the cache is off (RPC only).
    if (options.loader !== undefined && (this.hybridMode || !this.cacheEnabled)) {
      const rpcOptions = {
        loader: options.loader,
        directory: this.directory,
        cache: this.cacheEnabled ? this.cache : undefined,
        deadlineMs: options.fallbackDeadlineMs ?? DEFAULT_FALLBACK_DEADLINE_MS,
      };
      this.rpc = new RpcQuoter(options.logger === undefined ? rpcOptions : { ...rpcOptions, logger: options.logger });
    }
    // The gauge follows the breaker after every quote and every /health or scrape.
    this.breakerGauge = this.breaker.gaugeValue;
    this.metrics.circuitBreakerState.set(this.breakerGauge);
    this.app = uws.App()
      .get('/quote', (res, req) => this.handleQuote(res, req))
      .get('/health', (res) => this.handleHealth(res))
      .get('/metrics', (res) => this.handleOps(res, this.metricsAnswer()))
      .get('/debug/pprof/heap', (res, req) => this.handleOps(res, heapProfileResponse(req.getQuery('format') ?? '')))
      .any('/*', (res) => {
        this.sendError(res, { status: STATUS[404], code: QuoteErrorCode.NotFound, message: 'not found' });
      });
  }

  /** The bound port (after start). */
  get port(): number {
    return this.boundPort;
  }

  /** True when a quote the cache cannot answer goes to RPC. */
  get fallbackAvailable(): boolean {
    return this.rpc !== undefined;
  }

  /** RPC fallbacks running now. */
  get inflightFallbacks(): number {
    return this.inflight.size;
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
   * Graceful close: stops listening, lets the RPC fallbacks in flight answer (each is bounded by
   * its deadline), then closes every connection. New quotes on open connections meanwhile get 503
   * TP_ERR_UNAVAILABLE. Idempotent.
   */
  close(): Promise<void> {
    this.closed ??= (async () => {
      this.draining = true;
      if (this.listenSocket !== undefined) {
        uws.us_listen_socket_close(this.listenSocket);
        this.listenSocket = undefined;
      }
      await this.drain();
      (this.app as unknown as { close?: () => void }).close?.();
      if (this.sampling) {
        this.sampling = false;
        await releaseHeapSampling();
      }
    })();
    return this.closed;
  }

  /** Resolves when no RPC fallback is in flight. */
  async drain(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  /** Sets the gauges read on scrape: pool cache counts and the breaker state. */
  refreshGauges(): void {
    const stats = this.cache.stats();
    this.metrics.poolCacheTotalPools.set(stats.totalPools);
    this.metrics.poolCacheFreshPools.set(stats.freshPools);
    this.metrics.poolCacheStalePools.set(stats.stalePools);
    this.breakerGauge = this.breaker.gaugeValue;
    this.metrics.circuitBreakerState.set(this.breakerGauge);
  }

  /** The /metrics answer (also served on the metrics port). */
  metricsAnswer(): Promise<OpsResponse> {
    return metricsResponse(this.metrics.registry, () => this.refreshGauges());
  }

  /** One quote: validation, cache path behind the breaker, RPC fallback, error mapping. */
  private handleQuote(res: uws.HttpResponse, req: uws.HttpRequest): void {
    // Read everything from `req` now: it is invalid once this function returns.
    const query = req as unknown as QueryReader;
    const input = query.getQuery(Q_INPUT);
    const output = query.getQuery(Q_OUTPUT);
    const amount = query.getQuery(Q_AMOUNT);
    const maxAge = query.getQuery(Q_MAX_STATE_AGE);
    const apiKey = req.getHeader(this.apiKeyHeaderKey);
    const started = performance.now();

    if (this.limiter !== undefined) {
      const retryAfter = this.limiter.take(apiKey !== '' ? `key:${apiKey}` : this.addressKey(res));
      if (retryAfter > 0) {
        this.sendError(res, {
          status: STATUS[429],
          code: QuoteErrorCode.RateLimited,
          message: `rate limit of ${this.limiter.rps} requests per second exceeded`,
          headers: [['Retry-After', String(retryAfter)]],
        });
        return;
      }
    }

    let q: QuoteQuery;
    try {
      q = parseQuoteQuery(input, output, amount, maxAge, this.pubkeys);
    } catch (err) {
      this.sendError(res, httpErrorOf(err));
      return;
    }
    if (this.draining) {
      this.sendError(res, { status: STATUS[503], code: QuoteErrorCode.Unavailable, message: 'the quote service is shutting down' });
      return;
    }

    if (this.cacheEnabled) {
      let quote: MemoizedQuote;
      let ended: number;
      try {
        quote = this.quoteCache(q);
        ended = this.attemptEnded;
      } catch (err) {
        if (this.rpc === undefined || !cachePathMayFallBack(err)) {
          this.sendError(res, httpErrorOf(err));
          return;
        }
        this.fallback(res, this.rpc, q.input, q.output, q.amount, started);
        return;
      }
      this.metrics.quotes.inc();
      this.metrics.quoteLatency.cache.observe(((this.clockIsPerformanceNow ? ended : performance.now()) - started) / 1000);
      // Synchronous, in the handler: uWS has corked the response already.
      res
        .writeStatus(STATUS_200)
        .writeHeader(CONTENT_TYPE, APPLICATION_JSON)
        .end(this.bodies.write(quote.body, this.memo.stateAgeMs, this.memo.contextSlotText()));
      return;
    }
    if (this.rpc === undefined) {
      this.sendError(res, { status: STATUS[503], code: QuoteErrorCode.Unavailable, message: 'the cache is disabled and no RPC fallback is configured' });
      return;
    }
    this.fallback(res, this.rpc, q.input, q.output, q.amount, started);
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

  /**
   * The cache path (spec 02 error table), behind the circuit breaker. Synchronous, so
   * CACHE_FIRST_TIMEOUT cannot cut it short: an attempt slower than the timeout still answers but
   * records a breaker failure, so a cache that keeps being slow opens the breaker and RPC serves.
   */
  private quoteCache(q: QuoteQuery): MemoizedQuote {
    const cache = this.cache;
    if (!this.breaker.allow()) {
      this.syncBreakerGauge();
      cache.recordMiss();
      this.metrics.quoteCacheMisses.inc();
      throw quoteError(QuoteErrorCode.CircuitOpen, 'circuit breaker open: the cache path is unavailable');
    }
    const x = cache.mintIdOf(q.input);
    if (x === NO_ID) throw this.unknownMint(q.input);
    const y = cache.mintIdOf(q.output);
    if (y === NO_ID) throw this.unknownMint(q.output);
    const t0 = this.clock();
    try {
      const quote = this.memo.quoteByIds(x, y, q.input, q.output, q.amount, q.maxStateAgeMs ?? cache.stalenessThresholdMs, q.amountText);
      this.metrics.quoteCacheHits.inc();
      const t1 = this.clock();
      this.attemptEnded = t1;
      if (t1 - t0 > this.cacheFirstTimeoutMs) {
        this.slowCacheAttempts++;
        this.breaker.recordFailure();
      } else {
        this.breaker.recordSuccess();
      }
      this.syncBreakerGauge();
      return quote;
    } catch (err) {
      this.metrics.quoteCacheMisses.inc();
      // A pair nobody trades is the caller's problem, not a failing cache: only the other
      // failures (no valid quote, unexpected errors) count against the breaker.
      if (!(err instanceof TpError && (err.code as string) === QuoteErrorCode.NoPoolsInCache)) {
        this.breaker.recordFailure();
        this.syncBreakerGauge();
      }
      throw err;
    }
  }

  private unknownMint(mint: string): TpError {
    this.cache.recordMiss();
    this.metrics.quoteCacheMisses.inc();
    return quoteError(QuoteErrorCode.UnknownMint, `unknown token ${mint}`, { context: { mint } });
  }

  /**
   * The cache path of GET /quote for another front end (the gRPC quote stream): the same circuit
   * breaker, memo, hit / miss accounting and errors, and the quote counted and timed as /quote
   * counts it. Synchronous. Throws the TpError /quote would answer with (UnknownMint,
   * NoPoolsInCache, NoValidQuotes, CircuitOpen; `cachePathMayFallBack` tells which the RPC fallback
   * may take over). The entry is the memo's, shared: read it, never change it.
   */
  quoteCached(input: string, output: string, amount: bigint, amountText?: string): { entry: MemoizedQuote; stateAgeMs: number } {
    const started = performance.now();
    const entry = this.quoteCache({ input, output, amount, amountText: amountText ?? amount.toString(), maxStateAgeMs: undefined });
    this.metrics.quotes.inc();
    this.metrics.quoteLatency.cache.observe(((this.clockIsPerformanceNow ? this.attemptEnded : performance.now()) - started) / 1000);
    return { entry, stateAgeMs: this.memo.stateAgeMs };
  }

  /**
   * The RPC fallback of GET /quote for another front end: undefined when there is no fallback
   * (no loader, or neither hybrid mode nor cache disabled). Counted, timed and tracked as /quote's
   * (close() waits for it); rejects with the TpError /quote would answer with.
   */
  quoteRpc(input: string, output: string, amount: bigint): Promise<Quote> | undefined {
    if (this.rpc === undefined) return undefined;
    return this.trackedFallback(this.rpc, input, output, amount, performance.now());
  }

  /** The RPC fallback, counted and tracked in `inflight` until it settles. */
  private trackedFallback(rpc: RpcQuoter, input: string, output: string, amount: bigint, started: number): Promise<Quote> {
    this.fallbacks++;
    const done = rpc.quote(input, output, amount).then(
      (quote) => {
        this.metrics.quotes.inc();
        this.metrics.quoteLatency.rpc.observe((performance.now() - started) / 1000);
        return quote;
      },
      (err: unknown) => {
        if (!isNotFoundError(err)) {
          this.metrics.rpcFallbackErrors.inc();
          this.log?.debug({ err, input, output }, 'RPC fallback failed');
        }
        throw err;
      },
    );
    const tracked: Promise<void> = done.then(
      () => undefined,
      () => undefined,
    ).finally(() => {
      this.inflight.delete(tracked);
    });
    this.inflight.add(tracked);
    return done;
  }

  /** The RPC fallback: the response is written later, guarded by onAborted, inside cork. */
  private fallback(res: uws.HttpResponse, rpc: RpcQuoter, input: string, output: string, amount: bigint, started: number): void {
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    this.trackedFallback(rpc, input, output, amount, started).then(
      (quote) => {
        if (aborted) return;
        const body = JSON.stringify(quoteToJson(quote));
        res.cork(() => {
          res.writeStatus(STATUS[200]).writeHeader('Content-Type', 'application/json').end(body);
        });
      },
      (err: unknown) => {
        if (aborted) return;
        const e = httpErrorOf(err);
        res.cork(() => {
          res.writeStatus(e.status).writeHeader('Content-Type', 'application/json').end(errorBody(e.code, e.message));
        });
      },
    );
  }

  /** Sets the breaker gauge when its value changed (a scrape refreshes it too). */
  private syncBreakerGauge(): void {
    const value = this.breaker.gaugeValue;
    if (value !== this.breakerGauge) {
      this.breakerGauge = value;
      this.metrics.circuitBreakerState.set(value);
    }
  }

  /**
   * /health: 200 while the cache or the RPC fallback can answer, 503 when neither can (cache off or
   * without a fresh pool or behind an open breaker, and no fallback or no pool known to it) or
   * while draining.
   */
  private handleHealth(res: uws.HttpResponse): void {
    this.refreshGauges();
    const stats = this.cache.stats();
    if (this.cacheEnabled) this.directory.syncFrom(this.cache);
    const breakerState = this.breaker.state;
    const cacheServes = this.cacheEnabled && stats.freshPools > 0 && breakerState !== CircuitState.Open;
    const rpcServes = this.rpc !== undefined && this.directory.size > 0;
    const status: HealthStatus = this.draining
      ? HealthStatus.Draining
      : cacheServes
        ? HealthStatus.Ok
        : rpcServes
          ? HealthStatus.Degraded
          : HealthStatus.Unavailable;
    const body = {
      status,
      cache: {
        enabled: this.cacheEnabled,
        total_pools: stats.totalPools,
        fresh_pools: stats.freshPools,
        stale_pools: stats.stalePools,
        hit_rate: stats.hitRate,
        hits: stats.hits,
        misses: stats.misses,
        newest_slot: this.cache.newestSlot.toString(),
        slow_attempts: this.slowCacheAttempts,
      },
      bus: { status: this.busStatus() },
      rpc: {
        hybrid_mode: this.hybridMode,
        fallback: this.rpc !== undefined ? 'available' : 'unavailable',
        known_pools: this.directory.size,
        fallbacks: this.fallbacks,
        inflight: this.inflight.size,
      },
      circuit_breaker: breakerState,
    };
    const ok = status === HealthStatus.Ok || status === HealthStatus.Degraded;
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
        res.writeStatus(OPS_STATUS[r.status]);
        for (const [k, v] of r.headers) res.writeHeader(k, v);
        res.end(r.body);
      });
    }, () => undefined);
  }

  /** Sends synchronously, from the handler's top (already corked; cork again is harmless). */
  private send(res: uws.HttpResponse, status: StatusLine, body: string, headers?: [string, string][]): void {
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
