/**
 * The poll loop of the external quote service: which pair to ask the provider about next, and
 * when.
 *
 * - Most overdue first: the registered pair with the earliest due time is polled next; a poll makes
 *   the pair due again one poll interval after it was sent, so no pair is polled more often than
 *   that, and under a rate limit too tight for every pair the pairs take turns.
 * - Rate limit: every request takes a RequestPacer token (`rps`, no burst); without one, the loop
 *   sleeps until the next token.
 * - 429: all polling pauses until the Retry-After has passed; the pair that got it gets a
 *   RESOURCE_EXHAUSTED error quote. The others wait (their last quotes stay the latest, re-sent
 *   with their quoted_at, so their age shows); afterwards the most overdue goes first as always.
 * - Circuit breaker (engine/quote/circuit-breaker.ts, docs/architecture.md §3): 5xx, timeouts, connection
 *   errors, malformed answers and 4xx other than 400/429 are failures; answers (no route and other
 *   400s included) are successes; 429 is neither. While open no request is sent and each due pair
 *   gets an UNAVAILABLE error quote, once per poll interval. Half-open: one trial request at a time.
 * - Each result (quote or error quote) becomes the pair's latest and goes to the listeners.
 */
import { type CircuitBreaker, CircuitState } from '../common/index.js';
import type { StreamPair } from '../quote-grpc/index.js';
import { LogThrottle } from '../obs/index.js';
import type { Logger } from '../obs/index.js';
import { ExternalError, errorPolledQuote, polledQuote, type PolledQuote } from './external-quote.js';
import type { ExternalMetrics } from './external-metrics.js';
import { PairRegistry, type PairEntry } from './pair-registry.js';
import { PollOutcomeKind, type PollOutcome, type PollRequest } from './provider-client.js';
import type { ProviderTracker } from './provider-tracker.js';
import { RequestPacer } from './request-pacer.js';

/** What the poller asks the provider through (ProviderClient, or a fake in tests). */
export interface QuoteFetcher {
  /** Never rejects: every end is a PollOutcome. */
  fetchQuote(req: PollRequest): Promise<PollOutcome>;
}

export type PollListener = (pairId: string, result: PolledQuote) => void;

export interface ExternalPollerOptions {
  fetcher: QuoteFetcher;
  breaker: CircuitBreaker;
  tracker: ProviderTracker;
  metrics: ExternalMetrics;
  provider: string;
  rateLimitRps: number;
  pollIntervalMs: number;
  logger?: Logger;
  /** Monotonic ms; default performance.now. */
  clock?: () => number;
  /** Wall clock of quoted_at; default Date.now. */
  wallClock?: () => number;
}

export class ExternalPoller {
  readonly registry = new PairRegistry();
  private readonly fetcher: QuoteFetcher;
  private readonly breaker: CircuitBreaker;
  private readonly tracker: ProviderTracker;
  private readonly metrics: ExternalMetrics;
  private readonly provider: string;
  private readonly pollIntervalMs: number;
  private readonly pacer: RequestPacer;
  private readonly log: Logger | undefined;
  private readonly clock: () => number;
  private readonly wallClock: () => number;
  private readonly listeners = new Set<PollListener>();
  /** One warning per outcome kind per 10 s: a dead provider must not flood the log. */
  private readonly logThrottle = new LogThrottle();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private immediate: NodeJS.Immediate | undefined;
  private pausedUntil = 0;
  private inFlight = 0;
  private closed = false;
  private readonly pending = new Set<Promise<void>>();

  constructor(options: ExternalPollerOptions) {
    this.fetcher = options.fetcher;
    this.breaker = options.breaker;
    this.tracker = options.tracker;
    this.metrics = options.metrics;
    this.provider = options.provider;
    this.pollIntervalMs = options.pollIntervalMs;
    this.log = options.logger;
    this.clock = options.clock ?? (() => performance.now());
    this.wallClock = options.wallClock ?? Date.now;
    this.pacer = new RequestPacer(options.rateLimitRps, { now: this.clock() });
  }

  /** Calls `listener` with every poll result; returns the unsubscribe function. */
  onResult(listener: PollListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Registers a stream's pair (refcounted); it is polled as soon as its turn and the limits allow. */
  acquire(pair: StreamPair, slippageBps: number): PairEntry {
    const entry = this.registry.acquire(pair, slippageBps, this.clock());
    this.wake();
    return entry;
  }

  /** Drops a stream's reference to a pair; the last one unregisters it (a poll in flight is ignored). */
  release(pairId: string): void {
    this.registry.release(pairId);
  }

  /** The latest result of a registered pair. */
  latest(pairId: string): PolledQuote | undefined {
    return this.registry.get(pairId)?.latest;
  }

  /** Monotonic ms until which polling is paused by a 429 (0: not paused). */
  get rateLimitedUntil(): number {
    return this.pausedUntil > this.clock() ? this.pausedUntil : 0;
  }

  get requestsInFlight(): number {
    return this.inFlight;
  }

  /** Stops polling; waits for requests in flight (their results are dropped). Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
    this.listeners.clear();
    await Promise.all([...this.pending]);
  }

  /** Runs the loop soon (coalesced). */
  private wake(): void {
    if (this.closed || this.immediate !== undefined) return;
    this.immediate = setImmediate(() => {
      this.immediate = undefined;
      this.run();
    });
  }

  private sleepUntil(at: number): void {
    if (at >= this.timerAt && this.timer !== undefined) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerAt = Infinity;
      this.run();
    }, Math.max(0, Math.ceil(at - this.clock())));
  }

  private run(): void {
    if (this.closed) return;
    for (;;) {
      const now = this.clock();
      if (now < this.pausedUntil) return this.sleepUntil(this.pausedUntil);
      const entry = this.registry.mostOverdue();
      if (entry === undefined) return;
      if (entry.dueAt > now) return this.sleepUntil(entry.dueAt);
      const state = this.breaker.state;
      if (state === CircuitState.Open) {
        entry.dueAt = now + this.pollIntervalMs;
        this.metrics.circuitOpenSkips.inc();
        this.deliver(entry, errorPolledQuote(entry.pair, ExternalError.circuitOpen(), this.provider, this.wallClock()));
        continue;
      }
      // Half-open: one trial at a time; its answer wakes the loop.
      if (state === CircuitState.HalfOpen && this.inFlight > 0) return;
      const wait = this.pacer.msUntilToken(now);
      if (wait > 0) return this.sleepUntil(now + wait);
      this.pacer.tryTake(now);
      entry.inFlight = true;
      entry.dueAt = now + this.pollIntervalMs;
      this.inFlight++;
      const p = this.poll(entry);
      this.pending.add(p);
      void p.finally(() => this.pending.delete(p));
    }
  }

  private async poll(entry: PairEntry): Promise<void> {
    const { pair } = entry;
    let outcome: PollOutcome;
    try {
      outcome = await this.fetcher.fetchQuote({ inputMint: pair.inputMint, outputMint: pair.outputMint, amount: pair.amount, slippageBps: entry.slippageBps });
    } catch (err) {
      // QuoteFetcher promises never to reject; one that does must not wedge the pair in flight.
      outcome = { kind: PollOutcomeKind.ConnectionError, message: (err as Error)?.message ?? String(err), durationMs: 0 };
    }
    this.inFlight--;
    entry.inFlight = false;
    if (this.closed) return;
    this.tracker.record(outcome.kind, outcome.durationMs);
    this.metrics.requests.labels(outcome.kind).inc();
    this.metrics.requestDuration.observe(outcome.durationMs / 1000);
    const at = this.wallClock();
    let result: PolledQuote;
    switch (outcome.kind) {
      case PollOutcomeKind.Ok:
        this.breaker.recordSuccess();
        result = polledQuote(pair, outcome.quote, this.provider, at);
        break;
      case PollOutcomeKind.NoRoute:
        this.breaker.recordSuccess();
        result = errorPolledQuote(pair, ExternalError.noRoute(outcome.message), this.provider, at);
        break;
      case PollOutcomeKind.RateLimited: {
        const until = this.clock() + outcome.retryAfterMs;
        if (until > this.pausedUntil) this.pausedUntil = until;
        this.metrics.rateLimitPauses.inc();
        this.log?.debug({ retryAfterMs: outcome.retryAfterMs }, 'provider rate limited the poller: pausing');
        result = errorPolledQuote(pair, ExternalError.rateLimited(outcome.message), this.provider, at);
        break;
      }
      case PollOutcomeKind.Rejected:
        // A 400 is about the request (the provider is up); 401/403/404 mean every request will fail.
        if (outcome.httpStatus === 400) this.breaker.recordSuccess();
        else this.breaker.recordFailure();
        result = errorPolledQuote(pair, ExternalError.rejected(outcome.message), this.provider, at);
        break;
      case PollOutcomeKind.ServerError:
        this.breaker.recordFailure();
        result = errorPolledQuote(pair, ExternalError.serverError(outcome.message), this.provider, at);
        break;
      case PollOutcomeKind.Timeout:
        this.breaker.recordFailure();
        result = errorPolledQuote(pair, ExternalError.timeout(outcome.message), this.provider, at);
        break;
      case PollOutcomeKind.ConnectionError:
        this.breaker.recordFailure();
        result = errorPolledQuote(pair, ExternalError.unreachable(outcome.message), this.provider, at);
        break;
      case PollOutcomeKind.Malformed:
        this.breaker.recordFailure();
        result = errorPolledQuote(pair, ExternalError.malformed(outcome.message), this.provider, at);
        break;
    }
    if (outcome.kind !== PollOutcomeKind.Ok && outcome.kind !== PollOutcomeKind.NoRoute && this.log !== undefined) {
      const suppressed = this.logThrottle.take(outcome.kind);
      if (suppressed >= 0) this.log.warn({ provider: this.provider, pairId: pair.pairId, outcome: outcome.kind, message: outcome.message, suppressed }, 'provider poll failed');
    }
    this.deliver(entry, result);
    this.wake();
  }

  private deliver(entry: PairEntry, result: PolledQuote): void {
    // A pair unregistered while its poll was in flight has no stream left to tell.
    if (!this.registry.isCurrent(entry)) return;
    entry.latest = result;
    for (const listener of this.listeners) listener(entry.pair.pairId, result);
  }
}
