/**
 * The pairs the external service polls: every distinct pair (by pairID) of every open stream,
 * reference-counted so a pair shared by several streams is polled once, and dropped with the last
 * stream that watches it. Each entry holds its poll schedule and its latest result.
 */
import type { StreamPair } from '../quote-grpc/index.js';
import type { PolledQuote } from './external-quote.js';

export interface PairEntry {
  readonly pair: StreamPair;
  /** Slippage sent to the provider: the first stream's (the API's slippage only changes its
   * otherAmountThreshold; each stream's min_output_amount is computed from outAmount). */
  readonly slippageBps: number;
  refs: number;
  /** Monotonic ms at which the pair may be polled again. */
  dueAt: number;
  inFlight: boolean;
  latest: PolledQuote | undefined;
}

export class PairRegistry {
  private readonly entries = new Map<string, PairEntry>();

  /** Adds a reference to `pair` (registering it, due at `now`, on first sight). */
  acquire(pair: StreamPair, slippageBps: number, now: number): PairEntry {
    let entry = this.entries.get(pair.pairId);
    if (entry === undefined) {
      entry = { pair, slippageBps, refs: 0, dueAt: now, inFlight: false, latest: undefined };
      this.entries.set(pair.pairId, entry);
    }
    entry.refs++;
    return entry;
  }

  /** Drops a reference; the pair is unregistered with its last one. Returns whether it was. */
  release(pairId: string): boolean {
    const entry = this.entries.get(pairId);
    if (entry === undefined) return false;
    if (--entry.refs > 0) return false;
    this.entries.delete(pairId);
    return true;
  }

  get(pairId: string): PairEntry | undefined {
    return this.entries.get(pairId);
  }

  /** Whether `entry` is still the registered one (a pair dropped and added again is a new entry). */
  isCurrent(entry: PairEntry): boolean {
    return this.entries.get(entry.pair.pairId) === entry;
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * The pair not in flight with the earliest due time (the most overdue when it is past). A linear
   * scan: polls are paced at a few per second, so even 10,000 pairs cost microseconds per poll.
   */
  mostOverdue(): PairEntry | undefined {
    let best: PairEntry | undefined;
    for (const e of this.entries.values()) {
      if (!e.inFlight && (best === undefined || e.dueAt < best.dueAt)) best = e;
    }
    return best;
  }

  values(): IterableIterator<PairEntry> {
    return this.entries.values();
  }
}
