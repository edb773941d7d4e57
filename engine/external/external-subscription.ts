/**
 * One StreamBatchQuotes stream of the external quote service: what it sends and when.
 *
 * - At open, the latest poll result of each of its pairs that has one, at once.
 * - Then every new poll result of its pairs (quote or error quote), as it arrives.
 * - A pair with no new result is re-sent (its latest result, quoted_at unchanged) once
 *   `intervalMs` has passed since it was last sent, so the aggregator sees the stream alive: one
 *   timer per stream, set to the earliest due pair.
 * - Backpressure: when `write` returns false, at most the latest quote per pair is held (an older
 *   held one is replaced and counted) until the sink emits 'drain'.
 */
import type { Logger } from '../obs/index.js';
import { DueTimer } from '../common/index.js';
import { LatestPerPairWriter, type MessageSink } from '../common/index.js';
import type { StreamRequest } from '../quote-grpc/index.js';
import type { UpstreamQuote } from '../quote/index.js';
import { toStreamQuote, type PolledQuote } from './external-quote.js';
import type { ExternalMetrics } from './external-metrics.js';

/** Where quotes go: the gRPC call (a Node writable in object mode). */
export type ExternalQuoteSink = MessageSink<UpstreamQuote>;

export interface ExternalSubscriptionOptions {
  request: StreamRequest;
  sink: ExternalQuoteSink;
  /** The latest poll result of a pair, if any. */
  latest: (pairId: string) => PolledQuote | undefined;
  /** The provider uptime to stamp on each quote sent. */
  uptime: () => number | undefined;
  metrics: ExternalMetrics;
  logger?: Logger;
  /** Monotonic ms; default performance.now. */
  clock?: () => number;
}

interface PairState {
  readonly pairId: string;
  /** Monotonic ms at which the pair is re-sent when nothing new came. */
  dueAt: number;
}

export class ExternalSubscription {
  readonly request: StreamRequest;
  private readonly states: PairState[];
  private readonly indexOf = new Map<string, number>();
  private readonly latest: (pairId: string) => PolledQuote | undefined;
  private readonly uptime: () => number | undefined;
  private readonly clock: () => number;
  /** Backpressure: the latest quote per pair index while the sink waits for 'drain'. */
  private readonly writer: LatestPerPairWriter<UpstreamQuote>;
  private closed = false;
  private readonly due: DueTimer;

  constructor(options: ExternalSubscriptionOptions) {
    this.request = options.request;
    this.latest = options.latest;
    this.uptime = options.uptime;
    this.writer = new LatestPerPairWriter({
      sink: options.sink,
      sentCounter: options.metrics.quotesSent,
      supersededCounter: options.metrics.quotesSuperseded,
      logger: options.logger,
      writeFailedMessage: 'external quote stream write failed',
    });
    this.clock = options.clock ?? (() => performance.now());
    this.due = new DueTimer(this.clock, () => this.tick());
    this.states = this.request.pairs.map((p, i) => {
      this.indexOf.set(p.pairId, i);
      return { pairId: p.pairId, dueAt: 0 };
    });
  }

  /** Sends the latest result of every pair that has one, then starts the re-send schedule. */
  start(): void {
    const now = this.clock();
    for (let i = 0; i < this.states.length; i++) {
      const s = this.states[i]!;
      const polled = this.latest(s.pairId);
      if (polled !== undefined) this.push(i, polled);
      else s.dueAt = now + this.request.intervalMs;
    }
    this.schedule();
  }

  /** A new poll result for `pairId` (ignored when the stream does not watch it). */
  update(pairId: string, polled: PolledQuote): void {
    const i = this.indexOf.get(pairId);
    if (i === undefined || this.closed) return;
    this.push(i, polled);
    this.schedule();
  }

  /** Stops the timer; later results are dropped. Idempotent. */
  close(): void {
    this.closed = true;
    this.due.cancel();
    this.writer.close();
  }

  /** Quotes written to the sink. */
  get sent(): number {
    return this.writer.sent;
  }

  get pairIds(): string[] {
    return this.states.map((s) => s.pairId);
  }

  private push(i: number, polled: PolledQuote): void {
    if (this.closed) return;
    const m = toStreamQuote(polled, this.request.slippageBps, this.uptime());
    this.states[i]!.dueAt = this.clock() + this.request.intervalMs;
    this.writer.send(i, m);
  }

  private tick(): void {
    if (this.closed) return;
    const now = this.clock();
    for (let i = 0; i < this.states.length; i++) {
      const s = this.states[i]!;
      if (s.dueAt > now) continue;
      const polled = this.latest(s.pairId);
      // While backpressured the held quote is already the latest: nothing to add.
      if (polled !== undefined && !this.writer.isBlocked) this.push(i, polled);
      else s.dueAt = now + this.request.intervalMs;
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.closed) return;
    let next = Infinity;
    for (const s of this.states) if (s.dueAt < next) next = s.dueAt;
    this.due.arm(next);
  }
}
