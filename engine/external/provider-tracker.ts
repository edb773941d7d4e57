/**
 * What the external quote service knows about its provider: uptime over a sliding window, latency,
 * error counts by kind. Uptime is the share of polls in the window that got an answer from the
 * provider other than a 5xx: timeouts, connection errors and 5xx are "down"; a 429 is "up" (the
 * provider answered, it only asks us to slow down), and so are 4xx and malformed 200s.
 */
import { PollOutcomeKind } from './provider-client.js';

const DOWN: ReadonlySet<PollOutcomeKind> = new Set([PollOutcomeKind.ServerError, PollOutcomeKind.Timeout, PollOutcomeKind.ConnectionError]);

/** Weight of the newest sample in the latency EWMA. */
export const LATENCY_EWMA_ALPHA = 0.2;

/** Whether a poll that ended with `kind` counts as the provider being up. */
export function countsAsUp(kind: PollOutcomeKind): boolean {
  return !DOWN.has(kind);
}

export interface ProviderSnapshot {
  /** Up polls / polls in the window; undefined before the first poll of the window. */
  uptimeRatio: number | undefined;
  windowMs: number;
  pollsInWindow: number;
  upPollsInWindow: number;
  /** Since start. */
  polls: number;
  /** Of polls that got an answer (any status); undefined before the first. */
  lastLatencyMs: number | undefined;
  ewmaLatencyMs: number | undefined;
  /** Polls by outcome other than ok, since start. */
  errors: Record<string, number>;
}

export class ProviderTracker {
  readonly windowMs: number;
  private readonly now: () => number;
  /** Poll times and results in the window, oldest first, from `head`. */
  private times: number[] = [];
  private ups: boolean[] = [];
  private head = 0;
  private upCount = 0;
  private polls = 0;
  private last: number | undefined;
  private ewma: number | undefined;
  private readonly errors = new Map<string, number>();

  constructor(windowMs: number, now: () => number = () => performance.now()) {
    this.windowMs = windowMs;
    this.now = now;
  }

  /** Records one finished poll. */
  record(kind: PollOutcomeKind, durationMs: number): void {
    const up = countsAsUp(kind);
    this.times.push(this.now());
    this.ups.push(up);
    if (up) this.upCount++;
    this.polls++;
    if (kind !== PollOutcomeKind.Ok) this.errors.set(kind, (this.errors.get(kind) ?? 0) + 1);
    if (kind !== PollOutcomeKind.Timeout && kind !== PollOutcomeKind.ConnectionError) {
      this.last = durationMs;
      this.ewma = this.ewma === undefined ? durationMs : this.ewma + LATENCY_EWMA_ALPHA * (durationMs - this.ewma);
    }
    this.expire();
  }

  /** Up polls / polls over the window, or undefined when the window holds no poll. */
  uptime(): number | undefined {
    this.expire();
    const n = this.times.length - this.head;
    return n === 0 ? undefined : this.upCount / n;
  }

  snapshot(): ProviderSnapshot {
    const uptimeRatio = this.uptime();
    return {
      uptimeRatio,
      windowMs: this.windowMs,
      pollsInWindow: this.times.length - this.head,
      upPollsInWindow: this.upCount,
      polls: this.polls,
      lastLatencyMs: this.last,
      ewmaLatencyMs: this.ewma,
      errors: Object.fromEntries(this.errors),
    };
  }

  private expire(): void {
    const cutoff = this.now() - this.windowMs;
    while (this.head < this.times.length && this.times[this.head]! <= cutoff) {
      if (this.ups[this.head]) this.upCount--;
      this.head++;
    }
    // Compact once the dead prefix is most of the arrays (amortized O(1) per poll).
    if (this.head > 1024 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.ups = this.ups.slice(this.head);
      this.head = 0;
    }
  }
}
