/**
 * The quote engine: every decision of a quote that does not depend on the transport. GET /quote
 * (quote-http-server.ts) and the gRPC quote stream (quote-subscription.ts) are adapters over it:
 * they validate their wire format into a QuoteRequest, call `quote`, and write the answer.
 *
 * It owns:
 * - reading the pool cache and choosing the route (cache-quoter.ts), through the memo (quote-memo.ts);
 * - the circuit breaker around the cache path and CACHE_FIRST_TIMEOUT;
 * - the RPC fallback (rpc-quoter.ts): when it runs, its deadline, tracking it for a graceful close;
 * - the quote metrics (counts, hit / miss, latency by source, breaker gauge, fallback errors);
 * - health: whether the cache or the fallback can answer.
 *
 * The cache path is synchronous and allocation-light: a memo answer is one small object. Only the
 * RPC fallback is asynchronous: `quote` then returns a promise. Failures are values (QuoteFailure),
 * never exceptions, whoever caused them.
 */
import { performance } from 'node:perf_hooks';

import { HealthStatus } from '../common/index.js';
import type { PoolCache } from '../cache/index.js';
import { NO_ID } from '../cache/index.js';
import type { HealthThresholdValues } from '../config/index.js';
import { ErrorCode } from '../errors.js';
import type { Logger, WindowedOutcomes } from '../obs/index.js';
import { createQuoteMetrics, type QuoteMetrics } from '../obs/index.js';
import type { PoolLoader } from '../pools/index.js';
import { BreakerPolicy } from './breaker-policy.js';
import { CacheAnswer } from './cache-answer.js';
import { CircuitBreaker, CircuitState } from '../common/index.js';
import { PoolDirectory } from './pool-directory.js';
import { QuoteSource, type QuoteAnswer } from './quote-answer.js';
import { INTERNAL_FAILURE, quoteFailure, withFallback, type QuoteFailure } from './quote-failure.js';
import { DEFAULT_QUOTE_MEMO_ENTRIES, QuoteMemo } from './quote-memo.js';
import { QuoteOutcomes } from './quote-outcomes.js';
import type { QuoteRequest } from './quote-request.js';
import { RpcQuoter } from './rpc-quoter.js';
import type { ExternalQuoter } from './external-quoter.js';
import { DEFAULT_INTERMEDIATE_MINTS } from './route-search.js';
import type { SharedQuoteCache } from './shared-quote-cache.js';
import { DEFAULT_SLIPPAGE_BPS, slippageOf } from './slippage.js';

/** Deadline of one RPC fallback (docs/architecture.md §3: 504 on deadline). */
export const DEFAULT_FALLBACK_DEADLINE_MS = 2000;
/** Spec 02 `HybridMode.CacheFirstTimeout`. */
export const DEFAULT_CACHE_FIRST_TIMEOUT_MS = 10;

export interface QuoteEngineOptions {
  cache: PoolCache;
  /** Spec 02 `Cache.Enabled`; false: every quote comes from RPC. Default true. */
  cacheEnabled?: boolean;
  /** Spec 02 `HybridMode.Enabled`: RPC fallback when the cache path fails. Default true. */
  hybridMode?: boolean;
  /** Reads pool state from RPC for the fallback; without it there is no RPC fallback. */
  loader?: PoolLoader;
  /**
   * The last fallback, after the cache and RPC (external-quoter.ts): an external aggregator's quote
   * API; its answers have `source` external. Closed by `close()`.
   */
  external?: ExternalQuoter;
  /** Candidate pools of the fallback; a fresh directory by default (fed from the cache). */
  directory?: PoolDirectory;
  /** Deadline of one RPC fallback in ms (TP_ERR_DEADLINE past it). Default 2000. */
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
  /** Guards the cache path; default thresholds of docs/architecture.md §3. */
  breaker?: CircuitBreaker;
  /** Cache quotes memoized at most (quote-memo.ts); 0 turns the memo off. Default 4096. */
  quoteMemoEntries?: number;
  /** Intermediate tokens of two-hop routes (route-search.ts); default wrapped SOL and USDC. */
  intermediateMints?: readonly string[];
  /** Spec 02 `SlippageBps`: the tolerance of a request that names none (adapters ask `defaultSlippageBps`). Default 50. */
  slippageBps?: number;
  /** The bus connection status that health reports; default 'disabled'. */
  busStatus?: () => string;
  /**
   * The quote cache shared between replicas (spec 03 `quote:` keys, shared-quote-cache.ts): offered
   * every answer, asked before the RPC fallback. None by default.
   */
  sharedCache?: SharedQuoteCache;
  /** The `health.*` thresholds of recent answers (quote-outcomes.ts); default DEFAULT_HEALTH_THRESHOLDS. */
  healthThresholds?: HealthThresholdValues;
  logger?: Logger;
}

/** What `quote` gives: an answer or a failure, at once or (RPC fallback) later. */
export type QuoteResult = QuoteAnswer | QuoteFailure;

/** Health `status` (engine/common): ok (cache serves), degraded (only RPC serves), unavailable (neither), draining. */
export { HealthStatus };

/** The GET /health body (its field names are the documented API). */
export interface QuoteHealth {
  status: HealthStatus;
  /** Why the status is what it is. */
  reason: string;
  /** Answers over the health window: ok, failed (5xx), error rate, age of the last ok answer. */
  recent: WindowedOutcomes;
  cache: {
    enabled: boolean;
    total_pools: number;
    fresh_pools: number;
    stale_pools: number;
    hit_rate: number;
    hits: number;
    misses: number;
    newest_slot: string;
    slow_attempts: number;
  };
  bus: { status: string };
  rpc: { hybrid_mode: boolean; fallback: 'available' | 'unavailable'; known_pools: number; fallbacks: number; inflight: number };
  circuit_breaker: CircuitState;
}

/** Cache-path failures the RPC fallback may take over (spec 02 error table). */
const FALLBACK_CODES: ReadonlySet<string> = new Set([ErrorCode.NoPoolsInCache, ErrorCode.NoValidQuotes, ErrorCode.CircuitOpen, ErrorCode.UnknownMint]);
/** Fallback failures that are the caller's (nothing to read for that pair), not an RPC failure. */
const NOT_FOUND_CODES: ReadonlySet<string> = new Set([ErrorCode.UnknownMint, ErrorCode.NoPoolForPair, ErrorCode.NoPoolsInCache, ErrorCode.NotFound]);

const SHUTTING_DOWN = Object.freeze(quoteFailure(ErrorCode.Unavailable, 'the quote service is shutting down'));
const NO_SOURCE = Object.freeze(quoteFailure(ErrorCode.Unavailable, 'the cache is disabled and no RPC fallback is configured'));
/**
 * Nothing loaded yet (the cache and the pool directory are empty: the bus or the RPC has not
 * delivered a pool): an unknown token cannot be told from a source that is down, so the answer is
 * 503, as /health says, never 404 unknown token.
 */
const NOTHING_LOADED = Object.freeze(quoteFailure(ErrorCode.Unavailable, 'no pool state loaded yet: the pool sources (bus, RPC) have delivered nothing'));
/** Cache off and the caller asked for no fallback now: the fallback is the only path. */
const CACHE_DISABLED = Object.freeze(withFallback(quoteFailure(ErrorCode.Unavailable, 'the cache is disabled')));

/**
 * A route whose output is 0 (an amount too small to buy one atom after fees and rounding) is not a
 * quote: TP_ERR_AMOUNT_TOO_SMALL (400), never 200 with outputAmount "0".
 */
function amountTooSmall(request: QuoteRequest): QuoteFailure {
  return quoteFailure(ErrorCode.AmountTooSmall, `amount ${request.amountText} is too small: the best route gives 0 of ${request.outputMint}`, {
    inputMint: request.inputMint,
    outputMint: request.outputMint,
  });
}

export class QuoteEngine {
  readonly metrics: QuoteMetrics;
  readonly breaker: CircuitBreaker;
  readonly directory: PoolDirectory;
  readonly cacheEnabled: boolean;
  readonly hybridMode: boolean;
  readonly cacheFirstTimeoutMs: number;
  /** Memoized cache quotes (every cache answer goes through it). */
  readonly memo: QuoteMemo;
  /** Recent answers, judged by health (and by /ready). */
  readonly outcomes: QuoteOutcomes;
  /** The tolerance of a request that names none (SLIPPAGE_BPS). */
  readonly defaultSlippageBps: number;
  /** Intermediate tokens of two-hop routes. */
  readonly intermediateMints: readonly string[];
  private readonly cache: PoolCache;
  private readonly rpc: RpcQuoter | undefined;
  private readonly external: ExternalQuoter | undefined;
  /** A fallback exists: RPC, or the external aggregator. */
  private readonly hasFallback: boolean;
  private readonly clock: () => number;
  /** performance.now is the breaker clock too: one reading ends both the attempt and the latency. */
  private readonly clockIsPerformanceNow: boolean;
  private readonly busStatus: () => string;
  private readonly shared: SharedQuoteCache | undefined;
  private readonly log: Logger | undefined;
  private readonly inflight = new Set<Promise<void>>();
  private readonly circuitOpen: QuoteFailure;
  /** Which cache-path failures are the cache's own (breaker-policy.ts). */
  private readonly breakerPolicy: BreakerPolicy;
  private closing = false;
  private closed: Promise<void> | undefined;
  private fallbacks = 0;
  private slowCacheAttempts = 0;
  /** The value last written to the breaker gauge. */
  private breakerGauge = -1;
  /** The breaker clock's reading at the end of the last successful cache attempt. */
  private attemptEnded = 0;
  /** The answer of every cache hit, rewritten by each (cache-answer.ts); see `quote` for what this means to a caller. */
  private readonly cacheAnswer = new CacheAnswer();

  constructor(options: QuoteEngineOptions) {
    this.cache = options.cache;
    this.metrics = options.metrics ?? createQuoteMetrics();
    this.breaker = options.breaker ?? new CircuitBreaker();
    this.cacheEnabled = options.cacheEnabled ?? true;
    this.hybridMode = options.hybridMode ?? true;
    this.cacheFirstTimeoutMs = options.cacheFirstTimeoutMs ?? DEFAULT_CACHE_FIRST_TIMEOUT_MS;
    this.clock = options.clock ?? performance.now.bind(performance);
    this.clockIsPerformanceNow = options.clock === undefined;
    this.breakerPolicy = new BreakerPolicy(this.cache);
    this.intermediateMints = options.intermediateMints ?? DEFAULT_INTERMEDIATE_MINTS;
    this.memo = new QuoteMemo(this.cache, { maxEntries: options.quoteMemoEntries ?? DEFAULT_QUOTE_MEMO_ENTRIES, intermediateMints: this.intermediateMints });
    this.defaultSlippageBps = options.slippageBps ?? DEFAULT_SLIPPAGE_BPS;
    this.busStatus = options.busStatus ?? (() => 'disabled');
    this.shared = options.sharedCache;
    this.log = options.logger;
    this.directory = options.directory ?? new PoolDirectory();
    this.outcomes = new QuoteOutcomes(options.healthThresholds);
    // The fallback exists with a loader, in hybrid mode or when the cache is off (RPC only).
    if (options.loader !== undefined && (this.hybridMode || !this.cacheEnabled)) {
      const rpcOptions = {
        loader: options.loader,
        directory: this.directory,
        cache: this.cacheEnabled ? this.cache : undefined,
        deadlineMs: options.fallbackDeadlineMs ?? DEFAULT_FALLBACK_DEADLINE_MS,
        intermediateMints: this.intermediateMints,
      };
      this.rpc = new RpcQuoter(options.logger === undefined ? rpcOptions : { ...rpcOptions, logger: options.logger });
    }
    this.external = options.external;
    this.hasFallback = this.rpc !== undefined || this.external !== undefined;
    const open = quoteFailure(ErrorCode.CircuitOpen, 'circuit breaker open: the cache path is unavailable', { circuit: 'cache' });
    this.circuitOpen = Object.freeze(this.hasFallback ? withFallback(open) : open);
    // The gauge follows the breaker after every quote and every health report or scrape.
    this.breakerGauge = this.breaker.gaugeValue;
    this.metrics.circuitBreakerState.set(this.breakerGauge);
  }

  /** True when a quote the cache cannot answer goes to RPC. */
  get fallbackAvailable(): boolean {
    return this.rpc !== undefined;
  }

  /** RPC fallbacks running now. */
  get inflightFallbacks(): number {
    return this.inflight.size;
  }

  /**
   * Quotes `request`: the cache path behind the circuit breaker (when the cache is enabled), then,
   * when it fails in a way the fallback may take over and a fallback exists, the RPC fallback.
   * Synchronous unless the fallback runs: then a promise that never rejects.
   *
   * `allowFallback` false (a caller that already waits on a fallback for the same request): no
   * fallback is started; a failure it would have taken over comes back with `fallback` set.
   *
   * Counted in the quote metrics whatever the path: `quotes` and the latency by source for each
   * answer, a cache hit or miss for each cache attempt, fallback errors.
   *
   * An answer given at once (from the cache) is the engine's own object, rewritten by the next
   * `quote` call: read it before quoting again, and copy it (`{ ...answer }`) to keep it. What it
   * refers to (the route, the body, the slippage bounds) is immutable and may be kept. An answer
   * that comes later (the promise) is the caller's.
   */
  quote(request: QuoteRequest, allowFallback = true): QuoteResult | Promise<QuoteResult> {
    const result = this.quoteUncounted(request, allowFallback);
    if (result instanceof Promise) return result.then(this.countOutcome);
    this.outcomes.count(result);
    return result;
  }

  private readonly countOutcome = (result: QuoteResult): QuoteResult => {
    this.outcomes.count(result);
    return result;
  };

  private quoteUncounted(request: QuoteRequest, allowFallback: boolean): QuoteResult | Promise<QuoteResult> {
    if (this.closing) return SHUTTING_DOWN;
    if (this.cache.size === 0 && this.directory.size === 0) return this.cacheEnabled || this.rpc !== undefined ? NOTHING_LOADED : NO_SOURCE;
    if (this.cacheEnabled) {
      const started = performance.now();
      const result = this.quoteCache(request);
      if (result.ok) {
        this.metrics.quotes.inc();
        this.metrics.quoteLatency.cache.observe(((this.clockIsPerformanceNow ? this.attemptEnded : performance.now()) - started) / 1000);
        this.shared?.record(request, result);
        return result;
      }
      if (!result.fallback || !allowFallback) return result;
      return this.fallback(request, started, result);
    }
    if (!this.hasFallback) return NO_SOURCE;
    if (!allowFallback) return CACHE_DISABLED;
    return this.fallback(request, performance.now(), NO_SOURCE);
  }

  /**
   * A number that changes whenever the pool states behind `request`'s answer may have changed
   * (not merely aged): equal numbers, same states, same route. The gRPC stream re-quotes a pair
   * only when it moves. It covers every pair a route of the request may use (QuoteMemo.routeVersion:
   * the direct pair, and unless `onlyDirectRoutes` both legs through every intermediate token);
   * negative while the cache knows no pool trading one of the mints.
   */
  stateVersion(request: QuoteRequest): number {
    const x = this.cache.mintIdOf(request.inputMint);
    if (x === NO_ID) return -1;
    const y = this.cache.mintIdOf(request.outputMint);
    if (y === NO_ID) return -2;
    return this.memo.routeVersion(x, y, request.routeFilter);
  }

  /**
   * Calls `listener` synchronously after every cache change that may change answers (see
   * PoolCache.onChange: it must only flag and defer). Returns the function that removes it.
   */
  onPoolChange(listener: () => void): () => void {
    return this.cache.onChange(listener);
  }

  /** The age past which the cache path refuses a pool's state (PoolCache.stalenessThresholdMs). */
  get stalenessThresholdMs(): number {
    return this.cache.stalenessThresholdMs;
  }

  /** The cache's clock (Unix ms): what a state's age (`stateAgeMs`) is measured against. */
  stateClockMs(): number {
    return this.cache.nowMs();
  }

  /** Whole seconds since the cache first stored `pool` (PoolCache.poolAgeSeconds); undefined when unknown. */
  poolAgeSeconds(pool: string): number | undefined {
    const id = this.cache.idOf(pool);
    return id === NO_ID ? undefined : this.cache.poolAgeSeconds(id);
  }

  /** The newest slot seen, in decimal (the `contextSlot` of an answer), converted once per new slot. */
  contextSlotText(): string {
    return this.memo.contextSlotText();
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

  /**
   * Whether the cache or the RPC fallback can answer: ok (the cache can: enabled, a fresh pool,
   * breaker not open), degraded (only the fallback can: it exists and knows a pool), unavailable
   * (neither), draining (closing, or `draining` says the caller's transport is). Refreshes the gauges.
   */
  health(draining = false): QuoteHealth {
    this.refreshGauges();
    const stats = this.cache.stats();
    if (this.cacheEnabled) this.directory.syncFrom(this.cache);
    const breakerState = this.breaker.state;
    const cacheServes = this.cacheEnabled && stats.freshPools > 0 && breakerState !== CircuitState.Open;
    const rpcServes = this.rpc !== undefined && this.directory.size > 0;
    const { recent, reason: failing } = this.outcomes.judge();
    let status: HealthStatus =
      draining || this.closing ? HealthStatus.Draining : cacheServes ? HealthStatus.Ok : rpcServes ? HealthStatus.Degraded : HealthStatus.Unavailable;
    let reason =
      status === HealthStatus.Draining
        ? 'shutting down'
        : status === HealthStatus.Ok
          ? 'the cache serves'
          : status === HealthStatus.Degraded
            ? 'only the RPC fallback serves (no fresh pool in the cache, or the circuit breaker is open)'
            : 'neither the cache nor the RPC fallback can answer';
    // Whatever the parts say, answers that keep failing are a failing service.
    if (failing !== undefined && (status === HealthStatus.Ok || status === HealthStatus.Degraded)) {
      status = HealthStatus.Unavailable;
      reason = failing;
    }
    return {
      status,
      reason,
      recent,
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
  }

  /** Resolves when no RPC fallback is in flight. */
  async drain(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  /**
   * Stops answering (TP_ERR_UNAVAILABLE 'shutting down' from now on) and lets the RPC fallbacks in
   * flight finish (each bounded by its deadline). Idempotent.
   */
  close(): Promise<void> {
    this.closing = true;
    this.closed ??= this.drain().then(() => this.external?.close());
    return this.closed;
  }

  /**
   * The cache path (spec 02 error table), behind the circuit breaker. Synchronous, so
   * CACHE_FIRST_TIMEOUT cannot cut it short: an attempt slower than the timeout still answers but
   * records a breaker failure, so a cache that keeps being slow opens the breaker and RPC serves.
   */
  private quoteCache(request: QuoteRequest): QuoteResult {
    const cache = this.cache;
    if (!this.breaker.allow()) {
      this.syncBreakerGauge();
      cache.recordMiss();
      this.metrics.quoteCacheMisses.inc();
      return this.circuitOpen;
    }
    const x = cache.mintIdOf(request.inputMint);
    if (x === NO_ID) return this.unknownMint(request.inputMint);
    const y = cache.mintIdOf(request.outputMint);
    if (y === NO_ID) return this.unknownMint(request.outputMint);
    const t0 = this.clock();
    const maxAge = request.maxStateAgeMs ?? cache.stalenessThresholdMs;
    let entry;
    try {
      entry = this.memo.quoteByIds(x, y, request.inputMint, request.outputMint, request.amount, maxAge, request.amountText, request.mode, request.routeFilter);
    } catch (err) {
      // A bug or a pool the math cannot read: counted against the cache path, never shown.
      this.log?.error({ err, inputMint: request.inputMint, outputMint: request.outputMint }, 'cache quote failed');
      this.metrics.quoteCacheMisses.inc();
      this.breaker.recordFailure();
      this.syncBreakerGauge();
      return INTERNAL_FAILURE;
    }
    if (!entry.ok) {
      this.metrics.quoteCacheMisses.inc();
      // Only a cache that cannot serve anybody counts; a refusal the request caused never does.
      if (this.breakerPolicy.countsAsCacheFailure(entry, request.maxStateAgeMs)) {
        this.breaker.recordFailure();
        this.syncBreakerGauge();
      }
      return this.hasFallback && FALLBACK_CODES.has(entry.code) ? withFallback(entry) : entry;
    }
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
    if (entry.outputAmount === 0n) return amountTooSmall(request);
    return this.cacheAnswer.answer(entry, this.memo.stateAgeMs, cache.newestSlot, this.memo.slippageOf(entry, request.slippageBps));
  }

  private unknownMint(mint: string): QuoteFailure {
    this.cache.recordMiss();
    this.metrics.quoteCacheMisses.inc();
    const failure = quoteFailure(ErrorCode.UnknownMint, `unknown token ${mint}`, { mint });
    return this.hasFallback ? withFallback(failure) : failure;
  }

  /**
   * The fallbacks in order: a shared quote cache (a fresh enough answer another replica stored),
   * then RPC (when configured), then the external aggregator (when configured) if RPC gave no
   * quote. Counted, timed, and tracked in `inflight` until settled (close() waits).
   */
  private fallback(request: QuoteRequest, started: number, cacheFailure: QuoteFailure): Promise<QuoteResult> {
    this.fallbacks++;
    const shared = this.shared;
    const done =
      shared === undefined
        ? this.fallbackChain(request, started, cacheFailure)
        : shared.lookup(request, request.maxStateAgeMs ?? this.cache.stalenessThresholdMs).then(
            (hit) => {
              if (hit === null) return this.fallbackChain(request, started, cacheFailure);
              this.metrics.quotes.inc();
              return hit;
            },
            () => this.fallbackChain(request, started, cacheFailure),
          );
    const tracked: Promise<void> = done.then(() => {
      this.inflight.delete(tracked);
    });
    this.inflight.add(tracked);
    return done;
  }

  /**
   * RPC (when configured), then the external aggregator (when configured) if RPC gave no quote.
   * When the external aggregator fails too, the answer is the failure it was asked after (RPC's, or
   * without RPC the cache path's `cacheFailure`): what the service would have answered without it.
   */
  private fallbackChain(request: QuoteRequest, started: number, cacheFailure: QuoteFailure): Promise<QuoteResult> {
    const rpc = this.rpc;
    const external = this.external;
    const first = rpc === undefined ? undefined : this.rpcFallback(rpc, request, started);
    if (external === undefined) return first!;
    return first === undefined
      ? this.externalFallback(external, request, started, cacheFailure.fallback ? { ...cacheFailure, fallback: false } : cacheFailure)
      : first.then((r) => (r.ok ? r : this.externalFallback(external, request, started, r)));
  }

  /** The RPC fallback's answer or failure (never rejects). */
  private rpcFallback(rpc: RpcQuoter, request: QuoteRequest, started: number): Promise<QuoteResult> {
    return rpc.quote(request.inputMint, request.outputMint, request.amount, request.mode, undefined, request.routeFilter).then(
      (r): QuoteResult => {
        if (!r.ok) {
          if (!NOT_FOUND_CODES.has(r.code)) {
            this.metrics.rpcFallbackErrors.inc();
            this.log?.debug({ code: r.code, reason: r.message, inputMint: request.inputMint, outputMint: request.outputMint }, 'RPC fallback failed');
          }
          return r;
        }
        if (r.route.outputAmount === 0n) return amountTooSmall(request);
        this.metrics.quotes.inc();
        this.metrics.quoteLatency.rpc.observe((performance.now() - started) / 1000);
        const route = r.route;
        const slippage = slippageOf(route.mode, route.inputAmount, route.outputAmount, request.slippageBps);
        const answer: QuoteAnswer = { ok: true, quote: route, source: QuoteSource.Rpc, stateAgeMs: 0, contextSlot: r.contextSlot, slippage, body: undefined };
        this.shared?.record(request, answer);
        return answer;
      },
      (err: unknown): QuoteResult => {
        this.metrics.rpcFallbackErrors.inc();
        this.log?.error({ err, inputMint: request.inputMint, outputMint: request.outputMint }, 'RPC fallback threw');
        return INTERNAL_FAILURE;
      },
    );
  }

  /** The external aggregator's answer; on failure `previous`, the failure it was asked after (never rejects). */
  private externalFallback(external: ExternalQuoter, request: QuoteRequest, started: number, previous: QuoteFailure): Promise<QuoteResult> {
    const failed = (failure: QuoteFailure): QuoteResult => {
      this.metrics.externalFallbackErrors.inc();
      this.log?.debug({ code: failure.code, reason: failure.message, previous: previous.code, inputMint: request.inputMint, outputMint: request.outputMint }, 'external fallback failed');
      return previous;
    };
    return external.quote(request).then(
      (r): QuoteResult => {
        if (!r.ok) return failed(r);
        this.metrics.quotes.inc();
        this.metrics.quoteLatency.external.observe((performance.now() - started) / 1000);
        const route = r.route;
        const slippage = slippageOf(route.mode, route.inputAmount, route.outputAmount, request.slippageBps);
        const cacheSlot = this.cacheEnabled ? this.cache.newestSlot : 0n;
        const contextSlot = r.contextSlot > cacheSlot ? r.contextSlot : cacheSlot;
        return { ok: true, quote: route, source: QuoteSource.External, stateAgeMs: 0, contextSlot, slippage, body: undefined };
      },
      (err: unknown): QuoteResult => {
        this.log?.error({ err, inputMint: request.inputMint, outputMint: request.outputMint }, 'external fallback threw');
        return failed(INTERNAL_FAILURE);
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
}
