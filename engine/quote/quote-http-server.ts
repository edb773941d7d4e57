/**
 * The quote service over uWebSockets.js: `GET /quote`, `GET /health`, `GET /metrics`.
 *
 * uWS rules followed here: the request object (query, headers, remote address) is read only
 * synchronously in the handler, before anything else; every response that may be written after the
 * handler returns is guarded by `onAborted` and written inside `res.cork`.
 */
import uws from '@trufflesuite/uws-js-unofficial';

import type { PoolCache } from '../cache/index.js';
import { NO_ID, U64_MAX } from '../cache/index.js';
import { isPubkey } from '../chain/base58.js';
import { ErrorCode, TpError } from '../errors.js';
import { createQuoteMetrics, type QuoteMetrics } from '../obs/quote-metrics.js';
import { quoteFromCache, type Quote } from './cache-quoter.js';
import { CircuitBreaker } from './circuit-breaker.js';
import { QuoteErrorCode, quoteError } from './errors.js';
import { RateLimiter } from './rate-limiter.js';

export interface QuoteHttpServerOptions {
  cache: PoolCache;
  /** The quote registry; a fresh one by default. */
  metrics?: QuoteMetrics;
  /** Per-client limiter; `false` disables rate limiting. Default: RATE_LIMIT_RPS 20. */
  rateLimiter?: RateLimiter | false;
  /** Guards the cache path; default thresholds of ARCHITECTURE.md §3. */
  breaker?: CircuitBreaker;
  /** Bind address; default 127.0.0.1. */
  host?: string;
  /** The bus connection status reported by /health; default 'disabled' (no bus yet). */
  busStatus?: () => string;
  /** Header carrying the client's API key (the rate-limit key when present); default x-api-key. */
  apiKeyHeader?: string;
}

interface HttpError {
  status: string;
  code: string;
  message: string;
  headers?: [string, string][];
}

const STATUS = {
  200: '200 OK',
  400: '400 Bad Request',
  404: '404 Not Found',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
} as const;

/** Quote JSON: camelCase, u64 amounts and slots as decimal strings. */
export function quoteToJson(q: Quote): Record<string, unknown> {
  return {
    inputMint: q.inputMint,
    outputMint: q.outputMint,
    inputAmount: q.inputAmount.toString(),
    outputAmount: q.outputAmount.toString(),
    pool: q.pool,
    dex: q.dex,
    priceImpact: q.priceImpact,
    fee: q.fee.toString(),
    slot: q.slot.toString(),
    stateAgeMs: q.stateAgeMs,
    contextSlot: q.contextSlot.toString(),
    source: q.source,
    route: q.route.map((h) => ({
      pool: h.pool,
      dex: h.dex,
      inputMint: h.inputMint,
      outputMint: h.outputMint,
      inAmount: h.inAmount.toString(),
      outAmount: h.outAmount.toString(),
      fee: h.fee.toString(),
    })),
  };
}

function badParameter(parameter: string, message: string): TpError {
  return quoteError(QuoteErrorCode.BadParameter, message, { context: { parameter } });
}

/** Validates the /quote query. Throws TpError(BadParameter) naming the parameter. */
export function parseQuoteQuery(
  input: string | undefined,
  output: string | undefined,
  amount: string | undefined,
  maxStateAgeMs: string | undefined,
): { input: string; output: string; amount: bigint; maxStateAgeMs: number | undefined } {
  if (input === undefined || input === '') throw badParameter('input', 'missing parameter: input');
  if (!isPubkey(input)) throw badParameter('input', 'parameter input is not a base58 public key');
  if (output === undefined || output === '') throw badParameter('output', 'missing parameter: output');
  if (!isPubkey(output)) throw badParameter('output', 'parameter output is not a base58 public key');
  if (output === input) throw badParameter('output', 'parameter output must differ from input');
  if (amount === undefined || amount === '') throw badParameter('amount', 'missing parameter: amount');
  if (!/^[0-9]{1,20}$/.test(amount)) throw badParameter('amount', 'parameter amount is not an unsigned 64-bit integer');
  const value = BigInt(amount);
  if (value > U64_MAX) throw badParameter('amount', 'parameter amount is not an unsigned 64-bit integer');
  if (value === 0n) throw badParameter('amount', 'parameter amount must be greater than zero');
  let age: number | undefined;
  if (maxStateAgeMs !== undefined && maxStateAgeMs !== '') {
    if (!/^[0-9]{1,15}$/.test(maxStateAgeMs)) {
      throw badParameter('maxStateAgeMs', 'parameter maxStateAgeMs is not a non-negative integer of milliseconds');
    }
    age = Number(maxStateAgeMs);
  }
  return { input, output, amount: value, maxStateAgeMs: age };
}

export class QuoteHttpServer {
  readonly metrics: QuoteMetrics;
  readonly breaker: CircuitBreaker;
  private readonly cache: PoolCache;
  private readonly limiter: RateLimiter | undefined;
  private readonly host: string;
  private readonly busStatus: () => string;
  private readonly apiKeyHeader: string;
  private readonly app: uws.TemplatedApp;
  private listenSocket: uws.us_listen_socket | undefined;
  private boundPort = 0;

  constructor(options: QuoteHttpServerOptions) {
    this.cache = options.cache;
    this.metrics = options.metrics ?? createQuoteMetrics();
    this.limiter = options.rateLimiter === false ? undefined : (options.rateLimiter ?? new RateLimiter());
    this.host = options.host ?? '127.0.0.1';
    this.busStatus = options.busStatus ?? (() => 'disabled');
    this.apiKeyHeader = (options.apiKeyHeader ?? 'x-api-key').toLowerCase();
    this.breaker = options.breaker ?? new CircuitBreaker();
    // The gauge follows the breaker after every quote and every /health.
    this.metrics.circuitBreakerState.set(this.breaker.gaugeValue);
    this.app = uws.App()
      .get('/quote', (res, req) => this.handleQuote(res, req))
      .get('/health', (res) => this.handleHealth(res))
      .get('/metrics', (res) => this.handleMetrics(res))
      .any('/*', (res) => {
        this.sendError(res, { status: STATUS[404], code: QuoteErrorCode.NotFound, message: 'not found' });
      });
  }

  /** The bound port (after start). */
  get port(): number {
    return this.boundPort;
  }

  /** Binds `port` (0: any free port). Resolves with the bound port. */
  start(port = 8080): Promise<number> {
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

  /** Stops listening and closes open connections. Idempotent. */
  close(): Promise<void> {
    if (this.listenSocket !== undefined) {
      uws.us_listen_socket_close(this.listenSocket);
      this.listenSocket = undefined;
    }
    (this.app as unknown as { close?: () => void }).close?.();
    return Promise.resolve();
  }

  /** One quote: validation, cache path behind the breaker, error mapping. Synchronous. */
  private handleQuote(res: uws.HttpResponse, req: uws.HttpRequest): void {
    // Read everything from `req` now: it is invalid once this function returns.
    const input = req.getQuery('input');
    const output = req.getQuery('output');
    const amount = req.getQuery('amount');
    const maxAge = req.getQuery('maxStateAgeMs');
    const apiKey = req.getHeader(this.apiKeyHeader);
    const started = process.hrtime.bigint();

    if (this.limiter !== undefined) {
      const client = apiKey !== '' ? `key:${apiKey}` : `addr:${Buffer.from(res.getRemoteAddressAsText()).toString()}`;
      const retryAfter = this.limiter.take(client);
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

    let quote: Quote;
    try {
      const q = parseQuoteQuery(input, output, amount, maxAge);
      quote = this.quoteCache(q.input, q.output, q.amount, q.maxStateAgeMs);
    } catch (err) {
      this.sendError(res, this.httpErrorOf(err));
      return;
    }
    this.metrics.quotes.inc();
    this.metrics.quoteLatency.cache.observe(Number(process.hrtime.bigint() - started) / 1e9);
    this.send(res, STATUS[200], JSON.stringify(quoteToJson(quote)));
  }

  /** The cache path (spec 02 error table), behind the circuit breaker. */
  private quoteCache(input: string, output: string, amount: bigint, maxStateAgeMs: number | undefined): Quote {
    const cache = this.cache;
    if (!this.breaker.allow()) {
      this.syncBreakerGauge();
      cache.recordMiss();
      this.metrics.quoteCacheMisses.inc();
      throw quoteError(QuoteErrorCode.CircuitOpen, 'circuit breaker open: the cache path is unavailable');
    }
    for (const mint of [input, output]) {
      if (cache.mintIdOf(mint) === NO_ID) {
        cache.recordMiss();
        this.metrics.quoteCacheMisses.inc();
        throw new TpError(ErrorCode.UnknownMint, `unknown token ${mint}`, { context: { mint } });
      }
    }
    try {
      const quote = quoteFromCache(cache, input, output, amount, maxStateAgeMs ?? cache.stalenessThresholdMs);
      this.metrics.quoteCacheHits.inc();
      this.breaker.recordSuccess();
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

  private syncBreakerGauge(): void {
    this.metrics.circuitBreakerState.set(this.breaker.gaugeValue);
  }

  private httpErrorOf(err: unknown): HttpError {
    if (err instanceof TpError) {
      const code = err.code as string;
      switch (code) {
        case QuoteErrorCode.BadParameter:
          return { status: STATUS[400], code, message: err.message };
        case ErrorCode.UnknownMint:
        case QuoteErrorCode.NoPoolsInCache:
          return { status: STATUS[404], code, message: err.message };
        case QuoteErrorCode.NoValidQuotes:
        case QuoteErrorCode.CircuitOpen:
          // No RPC fallback configured yet: the cache could not answer.
          return { status: STATUS[503], code, message: err.message };
        default:
          break;
      }
    }
    return { status: STATUS[500], code: QuoteErrorCode.Internal, message: 'internal error' };
  }

  private handleHealth(res: uws.HttpResponse): void {
    const stats = this.cache.stats();
    this.metrics.poolCacheTotalPools.set(stats.totalPools);
    this.metrics.poolCacheFreshPools.set(stats.freshPools);
    this.metrics.poolCacheStalePools.set(stats.stalePools);
    this.syncBreakerGauge();
    const body = {
      status: 'ok',
      cache: {
        total_pools: stats.totalPools,
        fresh_pools: stats.freshPools,
        stale_pools: stats.stalePools,
        hit_rate: stats.hitRate,
        hits: stats.hits,
        misses: stats.misses,
        newest_slot: this.cache.newestSlot.toString(),
      },
      bus: { status: this.busStatus() },
      circuit_breaker: this.breaker.state,
    };
    this.send(res, STATUS[200], JSON.stringify(body));
  }

  /** Prometheus text of the quote registry: answered after an await, hence onAborted and cork. */
  private handleMetrics(res: uws.HttpResponse): void {
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    const registry = this.metrics.registry;
    registry.metrics().then(
      (text) => {
        if (aborted) return;
        res.cork(() => {
          res.writeStatus(STATUS[200]).writeHeader('Content-Type', registry.contentType).end(text);
        });
      },
      () => {
        if (aborted) return;
        res.cork(() => {
          res.writeStatus(STATUS[500]).end();
        });
      },
    );
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
    this.send(res, e.status, JSON.stringify({ error: { code: e.code, message: e.message } }), e.headers);
  }
}
