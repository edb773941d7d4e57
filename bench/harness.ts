/**
 * The benchmark harness: named suites, each producing figures measured beside a baseline from the
 * same run, so every number is read as a ratio that the machine's speed does not distort.
 */

export interface Figure {
  /** What was measured, e.g. `parse, TypeScript parser`. */
  name: string;
  unit: string;
  value: number;
  higherIsBetter: boolean;
  /** The baseline measured in the same run. */
  baseline: { name: string; value: number };
  /** Latency percentiles from an HDR histogram, in microseconds, when the figure has them. */
  p50Us?: number;
  p99Us?: number;
  p999Us?: number;
  /** The goal from docs/architecture.md §6, as text, and whether this run met it. */
  goal?: string;
  goalMet?: boolean;
  note?: string;
}

export interface Suite {
  name: string;
  description: string;
  /**
   * How long the suite may run before the runner kills it and reports it timed out (its own
   * process, bench/runner); default 10 min. `npm run bench -- --time-limit <s>` overrides it.
   */
  timeLimitMs?: number;
  run(): Promise<Figure[]>;
}

export function ratioOf(f: Figure): number {
  return f.baseline.value === 0 ? Number.NaN : f.value / f.baseline.value;
}

/** What a latency figure reads off an HDR histogram (`LatencyRecorder.summary()`). */
export interface LatencyPercentiles {
  p50Us: number;
  p99Us: number;
  p999Us: number;
}

/**
 * A p99 latency figure: `ours` p99 beside the baseline's p99 measured in the same run, in µs or ms
 * (the p columns stay in µs), met when `ours` p99 is under `goalUs`.
 */
export function p99Figure(f: {
  name: string;
  unit: 'µs' | 'ms';
  ours: LatencyPercentiles;
  baseline: { name: string; p99Us: number };
  goal: string;
  goalUs: number;
  note?: string;
}): Figure {
  const scale = f.unit === 'ms' ? 1000 : 1;
  return {
    name: f.name,
    unit: f.unit,
    value: f.ours.p99Us / scale,
    higherIsBetter: false,
    baseline: { name: f.baseline.name, value: f.baseline.p99Us / scale },
    p50Us: f.ours.p50Us,
    p99Us: f.ours.p99Us,
    p999Us: f.ours.p999Us,
    goal: f.goal,
    goalMet: f.ours.p99Us < f.goalUs,
    ...(f.note === undefined ? {} : { note: f.note }),
  };
}
