/**
 * One StreamBatchQuotes stream of the local quote service: the pairs it watches, when each is
 * quoted again, what is pushed, and backpressure.
 *
 * - At start every pair is quoted and pushed.
 * - `poolsChanged()` (the server calls it once per burst of cache changes, coalesced) re-quotes
 *   only the pairs whose state version moved (`QuoteEngine.stateVersion`: the cache's pair version
 *   of the pair), compared with that of its last quote. A pair whose pools did not change costs
 *   two Map lookups and nothing is sent for it.
 * - A re-quote is pushed only when it differs from the last pushed quote of the pair (input and
 *   output amounts, pool, slot, origin, error code); so a change in a pool that does not win sends nothing.
 * - Every pair is pushed at least every `intervalMs`: one timer per stream, set to the earliest
 *   due pair; when it fires, every pair due within a tenth of the interval is pushed, whether or
 *   not it changed. A pair whose state version has not moved since its last answer is not quoted
 *   again: its last answer is said again with its times moved on (`reissuedQuoteMessage`), while
 *   the state is within the cache's staleness threshold.
 * - Quotes come from the quote engine, as GET /quote's do (quote-engine.ts): the cache path behind
 *   the circuit breaker and memo; when it fails in a way the RPC fallback may take over (and a
 *   fallback exists), the engine's fallback runs asynchronously, at most one per pair, never
 *   holding back the other pairs; its answer is pushed when it arrives.
 * - Backpressure: when `write` returns false, quotes are held, at most the latest one per pair
 *   (an older held quote of the pair is replaced and counted), until the sink emits 'drain'.
 * - Pacing (issue 11 item 1; stream-pacer.ts): with a pacer, the first quotes, the re-quotes of
 *   changed pairs and the interval pushes are flags per pair, run a slice at a time between which
 *   the event loop answers requests; a pair flagged twice is pushed once. While the process is
 *   overloaded (load-monitor.ts), interval pushes are shed: the pair is due again one interval
 *   later, counted in `shed`. Without a pacer (direct use in tests), the work runs at once.
 * - Budget (stream-budget.ts): with a client quote budget, every pair quoted takes a token of
 *   the bucket the client's streams share. With none left, the slice stops at that pair, which
 *   stays flagged with the pairs after it: a pair asked for again meanwhile is still one flag
 *   (coalesced, not queued), counted in `coalesced`; a timer resumes the stream at that same pair
 *   once a few tokens are back, so every pair gets its turn.
 */
import type { Logger } from '../obs/index.js';
import type { QuoteMetrics } from '../obs/index.js';
import { ErrorCode } from '../errors.js';
import { DueTimer } from '../common/index.js';
import type { QuoteBudget } from './stream-budget.js';
import type { PacedWork, StreamPacer } from './stream-pacer.js';
import { LatestPerPairWriter, type MessageSink } from '../common/index.js';
import type { QuoteAnswer, QuoteEngine, QuoteResult, QuoteFailure, QuoteRequest, UpstreamQuote } from '../quote/index.js';



import { errorQuoteMessage, quoteErrorOf, type StreamPair, type StreamRequest } from './quote-stream-request.js';
import { CACHE_ORIGIN, answerQuoteMessage, reissuedQuoteMessage } from './answer-message.js';


/** Where quotes go: the gRPC call (a Node writable in object mode). */
export type QuoteSink = MessageSink<UpstreamQuote>;

export interface QuoteSubscriptionOptions {
  request: StreamRequest;
  sink: QuoteSink;
  engine: QuoteEngine;
  /** Counters of the stream (sent, superseded); default the engine's. */
  metrics?: QuoteMetrics;
  logger?: Logger;
  /** Monotonic ms clock of the push schedule; default performance.now. */
  clock?: () => number;
  /** Wall clock of `quotedAtUnixMs`; default Date.now. */
  wallClock?: () => number;
  /** Runs the stream's work in slices shared with the server's other streams; none: at once. */
  pacer?: StreamPacer;
  /** The quote budget of the stream's client (shared with its other streams); none: unbounded. */
  budget?: QuoteBudget | undefined;
}

/** Pending work of a pair (flags): first quote, state changed, interval push (the one that may be shed). */
const PENDING_FIRST = 1;
const PENDING_CHANGE = 2;
const PENDING_INTERVAL = 4;
/**
 * Pairs quoted between two readings of the clock in a slice: 2, since a pair quoted afresh costs
 * 50-100 µs (route search and swap math), so a 0.5 ms slice overruns by at most about one pair.
 */
const PAIRS_PER_CLOCK_READ = 2;
/**
 * The interval timer takes every pair due within this share of the interval from now: pairs whose
 * pushes went out at scattered times (a budget, a slow client) are then pushed in a few groups per
 * interval, up to a tenth of it early, instead of waking the stream for each pair.
 */
const DUE_SLACK_FRACTION = 0.1;
/** A stream out of budget resumes once this many milliseconds of its client's rate are back. */
const BUDGET_RESUME_MS = 5;

/** Per-pair state. */
interface PairState {
  readonly pair: StreamPair;
  /** The engine's request of the pair, built once. */
  readonly request: QuoteRequest;
  /** The engine's state version of the pair at its last quote (NaN: never quoted). */
  version: number;
  /** What the last pushed quote said (see `keyOf`); '' before the first push. */
  pushedKey: string;
  /** When the pair is due for an interval push (monotonic ms). */
  dueAt: number;
  rpcInflight: boolean;
  /** PENDING_* flags of work not yet done. */
  pending: number;
  /**
   * The error of the last quote when the cache path failed in a way only a change of the pair's
   * pools can undo (see STABLE_FAILURES) and no fallback took over; undefined otherwise.
   */
  stableError: UpstreamQuote | undefined;
  /** The last cache answer and when, on the cache's clock: said again while the version holds. */
  lastAnswer: UpstreamQuote | undefined;
  lastAnswerAt: number;
}

/**
 * Cache-path failures that hold as long as the pair's version does not move: candidates only
 * leave with time (they age), never come back, so a pair with no pool, no known mint or no valid
 * candidate at one version has none later at the same version. An interval push of such a pair
 * repeats the error without asking the cache path again, so a stream watching a dead pair does
 * not feed the circuit breaker (which would then open for every /quote client) once a second.
 */
const STABLE_FAILURES: ReadonlySet<string> = new Set([ErrorCode.NoValidQuotes, ErrorCode.NoPoolsInCache, ErrorCode.UnknownMint]);

function keyOf(m: UpstreamQuote): string {
  if (m.error !== undefined) return `e:${m.error.code}:${m.error.grpcStatus}`;
  // Every hop's pool and slot: a two-hop route whose second pool changed is a different answer.
  let hops = '';
  for (const hop of m.route) hops += `${hop.pool}@${hop.slot}:`;
  return `${m.origin}:${m.inputAmount}:${m.outputAmount}:${hops}${m.slot}`;
}

export class QuoteSubscription implements PacedWork {
  private readonly states: PairState[];
  private readonly request: StreamRequest;
  private readonly engine: QuoteEngine;
  private readonly clock: () => number;
  private readonly wallClock: () => number;
  /** Backpressure: the latest quote per pair index while the sink waits for 'drain'. */
  private readonly writer: LatestPerPairWriter<UpstreamQuote>;
  private closed = false;
  private readonly due: DueTimer;
  private readonly pacer: StreamPacer | undefined;
  /** Pairs with pending work, and where the next slice starts looking. */
  private pendingCount = 0;
  private cursor = 0;
  private readonly budget: QuoteBudget | undefined;
  /** Resumes the stream once its budget has tokens again. */
  private budgetTimer: NodeJS.Timeout | undefined;
  /** Interval pushes shed under load. */
  shed = 0;
  /** Pushes asked for a pair that was still waiting for its budget (merged into that one). */
  coalesced = 0;

  constructor(options: QuoteSubscriptionOptions) {
    this.request = options.request;
    this.engine = options.engine;
    const metrics = options.metrics ?? options.engine.metrics;
    this.writer = new LatestPerPairWriter({
      sink: options.sink,
      sentCounter: metrics.streamQuotesSent,
      supersededCounter: metrics.streamQuotesSuperseded,
      logger: options.logger,
      writeFailedMessage: 'quote stream write failed',
    });
    this.clock = options.clock ?? performance.now.bind(performance);
    this.pacer = options.pacer;
    this.budget = options.budget;
    this.due = new DueTimer(this.clock, () => this.tick());
    this.wallClock = options.wallClock ?? Date.now;
    this.states = this.request.pairs.map((pair) => ({
      pair,
      request: {
        inputMint: pair.inputMint,
        outputMint: pair.outputMint,
        mode: pair.mode,
        amount: pair.amount,
        amountText: pair.amountText,
        maxStateAgeMs: undefined,
        slippageBps: this.request.slippageBps,
      },
      version: Number.NaN,
      pushedKey: '',
      dueAt: 0,
      rpcInflight: false,
      pending: 0,
      stableError: undefined,
      lastAnswer: undefined,
      lastAnswerAt: 0,
    }));
  }

  /** Quotes and pushes every pair, then starts the interval schedule. */
  start(): void {
    for (let i = 0; i < this.states.length; i++) this.mark(i, PENDING_FIRST);
    this.runPending();
    this.schedule();
  }

  /** Some pool of the cache changed: re-quote the pairs whose state version moved. */
  poolsChanged(): void {
    if (this.closed) return;
    const engine = this.engine;
    for (let i = 0; i < this.states.length; i++) {
      const s = this.states[i]!;
      if (engine.stateVersion(s.request) !== s.version) this.mark(i, PENDING_CHANGE);
    }
    this.runPending();
  }

  /**
   * Pending work until `deadline` (performance.now ms): each flagged pair quoted once, pushed
   * when it changed or (first quote, interval) always; with `shed`, a pair flagged only for its
   * interval push is skipped. Returns true while flagged pairs remain.
   */
  runSlice(deadline: number, shed: boolean): boolean {
    const n = this.states.length;
    const budget = this.budget;
    const tokens = budget === undefined ? Infinity : budget.available();
    let spent = 0;
    let sinceRead = 0;
    while (this.pendingCount > 0 && !this.closed) {
      const i = this.cursor;
      const s = this.states[i]!;
      const flags = s.pending;
      if (flags !== 0 && !(shed && flags === PENDING_INTERVAL) && spent >= tokens) {
        // Out of budget: this pair is the first served when tokens are back.
        budget!.spend(spent);
        this.awaitBudget();
        return false;
      }
      this.cursor = i + 1 === n ? 0 : i + 1;
      if (flags === 0) continue;
      s.pending = 0;
      this.pendingCount--;
      if (shed && flags === PENDING_INTERVAL) {
        this.shed++;
        continue;
      }
      spent++;
      this.quote(i, (flags & (PENDING_FIRST | PENDING_INTERVAL)) !== 0);
      if (++sinceRead === PAIRS_PER_CLOCK_READ) {
        sinceRead = 0;
        if (performance.now() >= deadline) break;
      }
    }
    budget?.spend(spent);
    return this.pendingCount > 0 && !this.closed;
  }

  /** Arms the timer that hands the stream back to the pacer once its budget has a few tokens. */
  private awaitBudget(): void {
    if (this.budgetTimer !== undefined || this.closed) return;
    const budget = this.budget!;
    const wanted = Math.min(this.pendingCount, Math.max(1, Math.ceil((budget.perSecond * BUDGET_RESUME_MS) / 1000)));
    this.budgetTimer = setTimeout(() => {
      this.budgetTimer = undefined;
      this.runPending();
    }, Math.ceil(budget.msUntil(wanted)));
  }

  /** Stops every timer; later answers (RPC fallbacks in flight) are dropped. Idempotent. */
  close(): void {
    this.closed = true;
    this.pacer?.cancel(this);
    if (this.budgetTimer !== undefined) clearTimeout(this.budgetTimer);
    this.budgetTimer = undefined;
    this.due.cancel();
    this.writer.close();
  }

  /** Whether the stream waits for its client's budget to have tokens again. */
  get awaitingBudget(): boolean {
    return this.budgetTimer !== undefined;
  }

  /** Quotes written to the sink. */
  get sent(): number {
    return this.writer.sent;
  }

  /** Pairs watched (after deduplication). */
  get pairCount(): number {
    return this.states.length;
  }

  /** Flags work for pair `i`. */
  private mark(i: number, flag: number): void {
    const s = this.states[i]!;
    if (s.pending === 0) this.pendingCount++;
    else this.coalesced++;
    s.pending |= flag;
  }

  /** Hands the pending work to the pacer, or (no pacer) does it now. */
  private runPending(): void {
    if (this.pendingCount === 0 || this.closed || this.budgetTimer !== undefined) return;
    if (this.pacer !== undefined) this.pacer.schedule(this);
    else this.runSlice(Infinity, false);
  }

  /** Quotes pair `i` and pushes the result if it changed (or always, with `force`). */
  private quote(i: number, force: boolean): void {
    const s = this.states[i]!;
    const p = s.pair;
    // The version read before quoting: a change during an RPC fallback is then seen as a change.
    const version = this.engine.stateVersion(s.request);
    const unchanged = version === s.version;
    s.version = version;
    if (unchanged && s.stableError !== undefined) {
      this.push(i, { ...s.stableError, quotedAtUnixMs: String(this.wallClock()) }, force);
      return;
    }
    s.stableError = undefined;
    // Same version, same answer: an interval push of an unchanged pair says its last answer again,
    // with its times moved on, unless the state would now be too old for the cache path.
    const last = s.lastAnswer;
    if (unchanged && last !== undefined) {
      const stateAgeMs = last.stateAgeMs + (this.engine.stateClockMs() - s.lastAnswerAt);
      if (stateAgeMs <= this.engine.stalenessThresholdMs) {
        this.push(i, reissuedQuoteMessage(last, this.engine, this.wallClock(), stateAgeMs), force, s.pushedKey);
        return;
      }
    }
    s.lastAnswer = undefined;
    // At most one fallback per pair: while one runs, the cache may still answer, else it will.
    const result = this.engine.quote(s.request, !s.rpcInflight);
    if (result instanceof Promise) {
      s.rpcInflight = true;
      void result.then((r) => {
        s.rpcInflight = false;
        if (!this.closed) this.push(i, this.remember(s, this.messageOf(p, r)), force);
      });
      return;
    }
    if (!result.ok && result.fallback) return;
    const m = this.messageOf(p, result);
    // A dead pair at this version stays dead until the version moves (no fallback took it over).
    if (!result.ok && STABLE_FAILURES.has(result.code)) s.stableError = m;
    this.push(i, this.remember(s, m), force);
  }

  /**
   * Keeps `m` as the pair's last answer for `reissuedQuoteMessage`: only an answer of the cache,
   * whose state version says when it changes (an error, or an RPC or external answer, is none: the
   * next interval asks again, as the fallback's own limits allow).
   */
  private remember(s: PairState, m: UpstreamQuote): UpstreamQuote {
    s.lastAnswer = m.error === undefined && m.origin === CACHE_ORIGIN ? m : undefined;
    s.lastAnswerAt = this.engine.stateClockMs();
    return m;
  }

  private messageOf(p: StreamPair, r: QuoteResult): UpstreamQuote {
    return r.ok ? this.answerMessage(p, r) : this.failureMessage(p, r);
  }

  private failureMessage(p: StreamPair, failure: QuoteFailure): UpstreamQuote {
    return errorQuoteMessage(p, this.request.slippageBps, quoteErrorOf(failure), this.wallClock());
  }

  private answerMessage(p: StreamPair, a: QuoteAnswer): UpstreamQuote {
    return answerQuoteMessage(p.pairId, a, this.engine, this.wallClock());
  }

  /**
   * Pushes `m` for pair `i` unless it says what the last push said (and `force` is off). `key`:
   * `keyOf(m)` when the caller knows it.
   */
  private push(i: number, m: UpstreamQuote, force: boolean, key = keyOf(m)): void {
    if (this.closed) return;
    const s = this.states[i]!;
    if (!force && key === s.pushedKey) return;
    s.pushedKey = key;
    s.dueAt = this.clock() + this.request.intervalMs;
    this.writer.send(i, m);
  }

  /** Interval pushes: every due pair is re-quoted and pushed; then the timer is set again. */
  private tick(): void {
    if (this.closed) return;
    const now = this.clock();
    const dueBy = now + this.request.intervalMs * DUE_SLACK_FRACTION;
    const shed = this.pacer?.shedding === true;
    for (let i = 0; i < this.states.length; i++) {
      const s = this.states[i]!;
      if (s.dueAt <= dueBy) {
        // Due again one interval on even when no push follows (an RPC fallback still running, a
        // push shed under load, a push still pending from the last interval).
        s.dueAt = now + this.request.intervalMs;
        if (shed) this.shed++;
        else this.mark(i, PENDING_INTERVAL);
      }
    }
    this.runPending();
    this.schedule();
  }

  /** Sets the timer to the earliest due pair. */
  private schedule(): void {
    if (this.closed) return;
    let next = Infinity;
    for (const s of this.states) {
      if (s.dueAt === 0) s.dueAt = this.clock() + this.request.intervalMs;
      if (s.dueAt < next) next = s.dueAt;
    }
    this.due.arm(next);
  }
}
