/**
 * Keeps a flood of identical failures (garbage batches, a dead RPC) from flooding the log: at most
 * one line per key every `intervalMs`, and that line says how many were suppressed since the last.
 * The counters in Prometheus stay exact; only the log lines are thinned.
 */
export class LogThrottle {
  private readonly last = new Map<string, { at: number; suppressed: number }>();

  constructor(
    readonly intervalMs = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The number of lines suppressed since the last allowed one, or -1 when this one is suppressed. */
  take(key: string): number {
    const t = this.now();
    const entry = this.last.get(key);
    if (entry === undefined) {
      if (this.last.size > 1_000) this.last.clear(); // keys are few; never let them grow unbounded
      this.last.set(key, { at: t, suppressed: 0 });
      return 0;
    }
    if (t - entry.at < this.intervalMs) {
      entry.suppressed++;
      return -1;
    }
    const suppressed = entry.suppressed;
    entry.at = t;
    entry.suppressed = 0;
    return suppressed;
  }
}
