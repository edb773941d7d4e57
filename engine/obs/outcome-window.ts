/**
 * Recent outcomes for health checks (issue 11, item 6): /health must say what the last minute was
 * like, not only whether a connection is up. A service keeps two cumulative counters (ok, failed),
 * which costs its hot path two increments; `OutcomeWindow.observe` samples them when health is
 * asked and answers with the counts over the last `windowMs` (since start while the process is
 * younger), the error rate, and how long ago the ok counter last moved.
 * `judgeOutcomes` turns that into a reason to fail, or none. The quote service, the scanner and the
 * aggregator use it; /ready (the quote API) may call the same functions.
 */

export interface OutcomeCounts {
  ok: number;
  failed: number;
}

export interface WindowedOutcomes {
  ok: number;
  failed: number;
  /** failed / (ok + failed); null without any outcome in the window. */
  errorRate: number | null;
  /** The span the counts cover (the window, or less just after start). */
  windowMs: number;
  /** ms since the ok counter was last seen to grow; null when it never has. */
  lastOkAgeMs: number | null;
}

/** The `health.*` thresholds (engine/config health-settings.ts). */
export interface HealthThresholds {
  windowMs: number;
  /** At or above this error rate (0-1) over the window, the service is failing. */
  maxErrorRate: number;
  /** Fewer outcomes than this in the window are not judged (too few to say). */
  minSamples: number;
}

interface Sample extends OutcomeCounts {
  at: number;
}

/** Samples kept at most; older ones are merged by keeping one per window slice. */
const MAX_SAMPLES = 64;

export class OutcomeWindow {
  private readonly samples: Sample[];
  private lastOk = 0;
  private lastOkAt = -1;

  constructor(
    readonly windowMs: number,
    private readonly clock: () => number = Date.now,
  ) {
    this.samples = [{ at: clock(), ok: 0, failed: 0 }];
  }

  /** Records the counters' current totals and answers with the outcomes of the window. */
  observe(totals: OutcomeCounts): WindowedOutcomes {
    const now = this.clock();
    if (totals.ok > this.lastOk) {
      this.lastOk = totals.ok;
      this.lastOkAt = now;
    }
    // The baseline: the newest sample at least a window old, else the oldest kept.
    const cutoff = now - this.windowMs;
    while (this.samples.length > 1 && this.samples[1]!.at <= cutoff) this.samples.shift();
    const base = this.samples[0]!;
    const last = this.samples[this.samples.length - 1]!;
    if (now - last.at >= this.windowMs / MAX_SAMPLES || this.samples.length === 1) {
      this.samples.push({ at: now, ok: totals.ok, failed: totals.failed });
      if (this.samples.length > MAX_SAMPLES) this.samples.splice(1, 1);
    }
    const ok = Math.max(0, totals.ok - base.ok);
    const failed = Math.max(0, totals.failed - base.failed);
    return {
      ok,
      failed,
      errorRate: ok + failed === 0 ? null : failed / (ok + failed),
      windowMs: Math.min(this.windowMs, now - base.at),
      lastOkAgeMs: this.lastOkAt < 0 ? null : now - this.lastOkAt,
    };
  }
}

/**
 * Why `outcomes` fail the thresholds (`what`: "quotes", "pool reads", ...), or undefined when they
 * pass or are too few to judge.
 */
export function judgeOutcomes(outcomes: WindowedOutcomes, thresholds: HealthThresholds, what: string): string | undefined {
  const total = outcomes.ok + outcomes.failed;
  if (total < thresholds.minSamples || outcomes.errorRate === null) return undefined;
  if (outcomes.errorRate < thresholds.maxErrorRate) return undefined;
  const pct = Math.round(outcomes.errorRate * 100);
  return `${outcomes.failed} of ${total} ${what} failed in the last ${Math.round(outcomes.windowMs / 1000)} s (${pct}%, limit ${Math.round(thresholds.maxErrorRate * 100)}%)`;
}
