/**
 * One StreamBatchQuotes stream of the local quote service: the pairs it watches, when each is
 * quoted again, what is pushed, and backpressure.
 *
 * - At start every pair is quoted and pushed.
 * - `poolsChanged()` (the server calls it once per burst of cache changes, coalesced) re-quotes
 *   only the pairs whose state version moved: the interned mint ids and `PoolCache.pairVersion`
 *   of the pair, compared with those of its last quote. A pair whose pools did not change costs
 *   two Map lookups and nothing is sent for it.
 * - A re-quote is pushed only when it differs from the last pushed quote of the pair (output
 *   amount, pool, slot, origin, error code); so a change in a pool that does not win sends nothing.
 * - Every pair is pushed at least every `intervalMs`: one timer per stream, set to the earliest
 *   due pair; a due pair is re-quoted and pushed whether or not it changed.
 * - Quotes come from the same paths as GET /quote (`StreamQuotePaths`, i.e. QuoteHttpServer): the
 *   cache path behind the circuit breaker and memo; when it fails in a way the RPC fallback may
 *   take over (and a fallback exists), the fallback runs asynchronously, at most one per pair,
 *   never holding back the other pairs; its answer is pushed when it arrives.
 * - Backpressure: when `write` returns false, quotes are held, at most the latest one per pair
 *   (an older held quote of the pair is replaced and counted), until the sink emits 'drain'.
 */
import type { PoolCache } from '../cache/index.js';
import { NO_ID } from '../cache/index.js';
import type { Logger } from '../obs/index.js';
import type { QuoteMetrics } from '../obs/index.js';
import type { Quote } from './cache-quoter.js';
import { QuoteErrorCode, quoteError } from './errors.js';
import { cachePathMayFallBack } from './http-errors.js';
import { DueTimer } from './due-timer.js';
import { LatestPerPairWriter, type MessageSink } from './latest-per-pair-writer.js';
import type { MemoizedQuote } from './quote-memo.js';
import { LOCAL_PROVIDER, errorQuoteMessage, quoteErrorOf, type StreamPair, type StreamRequest } from './quote-stream-request.js';
import { minOutputAmount, type UpstreamQuote } from './quote-wire.js';

/** The quote paths of GET /quote, as QuoteHttpServer offers them to other front ends. */
export interface StreamQuotePaths {
  readonly cacheEnabled: boolean;
  /** Synchronous cache path; throws the TpError /quote would answer with. */
  quoteCached(input: string, output: string, amount: bigint, amountText?: string): { entry: MemoizedQuote; stateAgeMs: number };
  /** The RPC fallback, or undefined when there is none. */
  quoteRpc(input: string, output: string, amount: bigint): Promise<Quote> | undefined;
}

/** Where quotes go: the gRPC call (a Node writable in object mode). */
export type QuoteSink = MessageSink<UpstreamQuote>;

export interface QuoteSubscriptionOptions {
  request: StreamRequest;
  sink: QuoteSink;
  cache: PoolCache;
  paths: StreamQuotePaths;
  metrics: QuoteMetrics;
  logger?: Logger;
  /** Monotonic ms clock of the push schedule; default performance.now. */
  clock?: () => number;
  /** Wall clock of `quotedAtUnixMs`; default Date.now. */
  wallClock?: () => number;
}

/** Per-pair state. */
interface PairState {
  readonly pair: StreamPair;
  /** Mint ids and pair version at the last quote (-2: never quoted). */
  x: number;
  y: number;
  version: number;
  /** What the last pushed quote said (see `keyOf`); '' before the first push. */
  pushedKey: string;
  /** When the pair is due for an interval push (monotonic ms). */
  dueAt: number;
  rpcInflight: boolean;
  /**
   * The error of the last quote when the cache path failed in a way only a change of the pair's
   * pools can undo (see STABLE_FAILURES) and no fallback took over; undefined otherwise.
   */
  stableError: UpstreamQuote | undefined;
}

/**
 * Cache-path failures that hold as long as the pair's version does not move: candidates only
 * leave with time (they age), never come back, so a pair with no pool, no known mint or no valid
 * candidate at one version has none later at the same version. An interval push of such a pair
 * repeats the error without asking the cache path again, so a stream watching a dead pair does
 * not feed the circuit breaker (which would then open for every /quote client) once a second.
 */
const STABLE_FAILURES: ReadonlySet<string> = new Set([QuoteErrorCode.NoValidQuotes, QuoteErrorCode.NoPoolsInCache, QuoteErrorCode.UnknownMint]);

function keyOf(m: UpstreamQuote): string {
  if (m.error !== undefined) return `e:${m.error.code}:${m.error.grpcStatus}`;
  const hop = m.route[0];
  return `${m.origin}:${m.outputAmount}:${hop?.pool ?? ''}:${m.slot}`;
}

function clampU32(ms: number): number {
  return Math.min(0xffff_ffff, Math.max(0, Math.floor(ms)));
}

export class QuoteSubscription {
  private readonly states: PairState[];
  private readonly request: StreamRequest;
  private readonly cache: PoolCache;
  private readonly paths: StreamQuotePaths;
  private readonly clock: () => number;
  private readonly wallClock: () => number;
  /** Backpressure: the latest quote per pair index while the sink waits for 'drain'. */
  private readonly writer: LatestPerPairWriter<UpstreamQuote>;
  private closed = false;
  private readonly due: DueTimer;

  constructor(options: QuoteSubscriptionOptions) {
    this.request = options.request;
    this.cache = options.cache;
    this.paths = options.paths;
    this.writer = new LatestPerPairWriter({
      sink: options.sink,
      sentCounter: options.metrics.streamQuotesSent,
      supersededCounter: options.metrics.streamQuotesSuperseded,
      logger: options.logger,
      writeFailedMessage: 'quote stream write failed',
    });
    this.clock = options.clock ?? performance.now.bind(performance);
    this.due = new DueTimer(this.clock, () => this.tick());
    this.wallClock = options.wallClock ?? Date.now;
    this.states = this.request.pairs.map((pair) => ({ pair, x: -2, y: -2, version: -2, pushedKey: '', dueAt: 0, rpcInflight: false, stableError: undefined }));
  }

  /** Quotes and pushes every pair, then starts the interval schedule. */
  start(): void {
    for (let i = 0; i < this.states.length; i++) this.quote(i, true);
    this.schedule();
  }

  /** Some pool of the cache changed: re-quote the pairs whose state version moved. */
  poolsChanged(): void {
    if (this.closed) return;
    const cache = this.cache;
    for (let i = 0; i < this.states.length; i++) {
      const s = this.states[i]!;
      const x = cache.mintIdOf(s.pair.inputMint);
      const y = cache.mintIdOf(s.pair.outputMint);
      const version = x === NO_ID || y === NO_ID ? 0 : cache.pairVersion(x, y);
      if (x !== s.x || y !== s.y || version !== s.version) this.quote(i, false);
    }
  }

  /** Stops every timer; later answers (RPC fallbacks in flight) are dropped. Idempotent. */
  close(): void {
    this.closed = true;
    this.due.cancel();
    this.writer.close();
  }

  /** Quotes written to the sink. */
  get sent(): number {
    return this.writer.sent;
  }

  /** Pairs watched (after deduplication). */
  get pairCount(): number {
    return this.states.length;
  }

  /** Quotes pair `i` and pushes the result if it changed (or always, with `force`). */
  private quote(i: number, force: boolean): void {
    const s = this.states[i]!;
    const cache = this.cache;
    const p = s.pair;
    // Versions read before quoting: a change during an RPC fallback is then seen as a change.
    const x = cache.mintIdOf(p.inputMint);
    const y = cache.mintIdOf(p.outputMint);
    const version = x === NO_ID || y === NO_ID ? 0 : cache.pairVersion(x, y);
    const unchanged = x === s.x && y === s.y && version === s.version;
    s.x = x;
    s.y = y;
    s.version = version;
    if (unchanged && s.stableError !== undefined) {
      this.push(i, { ...s.stableError, quotedAtUnixMs: String(this.wallClock()) }, force);
      return;
    }
    s.stableError = undefined;
    let failure: unknown;
    if (this.paths.cacheEnabled) {
      try {
        const { entry, stateAgeMs } = this.paths.quoteCached(p.inputMint, p.outputMint, p.amount, p.amountText);
        this.push(i, this.cacheMessage(p, entry, stateAgeMs), force);
        return;
      } catch (err) {
        failure = err;
        if (!cachePathMayFallBack(err)) {
          this.push(i, errorQuoteMessage(p, this.request.slippageBps, quoteErrorOf(err), this.wallClock()), force);
          return;
        }
      }
    }
    if (s.rpcInflight) return;
    const rpc = this.paths.quoteRpc(p.inputMint, p.outputMint, p.amount);
    if (rpc === undefined) {
      const reason = failure ?? quoteError(QuoteErrorCode.Unavailable, 'the cache is disabled and no RPC fallback is configured');
      const m = errorQuoteMessage(p, this.request.slippageBps, quoteErrorOf(reason), this.wallClock());
      if (STABLE_FAILURES.has(m.error!.code)) s.stableError = m;
      this.push(i, m, force);
      return;
    }
    s.rpcInflight = true;
    rpc.then(
      (quote) => {
        s.rpcInflight = false;
        if (!this.closed) this.push(i, this.rpcMessage(p, quote), force);
      },
      (err: unknown) => {
        s.rpcInflight = false;
        if (!this.closed) this.push(i, errorQuoteMessage(p, this.request.slippageBps, quoteErrorOf(err), this.wallClock()), force);
      },
    );
  }

  private cacheMessage(p: StreamPair, entry: MemoizedQuote, stateAgeMs: number): UpstreamQuote {
    const swap = entry.swap;
    const slot = entry.slot.toString();
    const out = swap.amountOut.toString();
    const age = this.cache.poolAgeSeconds(entry.poolId);
    return {
      pairId: p.pairId,
      inputMint: p.inputMint,
      outputMint: p.outputMint,
      inputAmount: p.amountText,
      outputAmount: out,
      minOutputAmount: minOutputAmount(swap.amountOut, this.request.slippageBps).toString(),
      slippageBps: this.request.slippageBps,
      priceImpact: swap.priceImpact,
      route: [
        {
          pool: entry.pool,
          dex: entry.dex,
          inputMint: p.inputMint,
          outputMint: p.outputMint,
          inAmount: swap.amountIn.toString(),
          outAmount: out,
          fee: swap.fee.toString(),
          slot,
          ...(age === undefined ? {} : { poolAgeSeconds: age }),
        },
      ],
      slot,
      contextSlot: this.cache.newestSlot.toString(),
      stateAgeMs: clampU32(stateAgeMs),
      source: 'QUOTE_SOURCE_LOCAL',
      origin: 'QUOTE_ORIGIN_CACHE',
      provider: LOCAL_PROVIDER,
      quotedAtUnixMs: String(this.wallClock()),
    };
  }

  private rpcMessage(p: StreamPair, q: Quote): UpstreamQuote {
    const slot = q.slot.toString();
    // The fallback wrote the state back into the cache (when enabled): its pool age is known there.
    const id = this.cache.idOf(q.pool);
    const age = id === NO_ID ? undefined : this.cache.poolAgeSeconds(id);
    return {
      pairId: p.pairId,
      inputMint: p.inputMint,
      outputMint: p.outputMint,
      inputAmount: p.amountText,
      outputAmount: q.outputAmount.toString(),
      minOutputAmount: minOutputAmount(q.outputAmount, this.request.slippageBps).toString(),
      slippageBps: this.request.slippageBps,
      priceImpact: q.priceImpact,
      route: q.route.map((h) => ({
        pool: h.pool,
        dex: h.dex,
        inputMint: h.inputMint,
        outputMint: h.outputMint,
        inAmount: h.inAmount.toString(),
        outAmount: h.outAmount.toString(),
        fee: h.fee.toString(),
        slot,
        ...(age === undefined ? {} : { poolAgeSeconds: age }),
      })),
      slot,
      contextSlot: q.contextSlot.toString(),
      stateAgeMs: clampU32(q.stateAgeMs),
      source: 'QUOTE_SOURCE_LOCAL',
      origin: 'QUOTE_ORIGIN_RPC',
      provider: LOCAL_PROVIDER,
      quotedAtUnixMs: String(this.wallClock()),
    };
  }

  /** Pushes `m` for pair `i` unless it says what the last push said (and `force` is off). */
  private push(i: number, m: UpstreamQuote, force: boolean): void {
    if (this.closed) return;
    const s = this.states[i]!;
    const key = keyOf(m);
    if (!force && key === s.pushedKey) return;
    s.pushedKey = key;
    s.dueAt = this.clock() + this.request.intervalMs;
    this.writer.send(i, m);
  }

  /** Interval pushes: every due pair is re-quoted and pushed; then the timer is set again. */
  private tick(): void {
    if (this.closed) return;
    const now = this.clock();
    for (let i = 0; i < this.states.length; i++) {
      const s = this.states[i]!;
      if (s.dueAt <= now) {
        // Due again one interval on even when no push follows (an RPC fallback still running).
        s.dueAt = now + this.request.intervalMs;
        this.quote(i, true);
      }
    }
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
