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
  run(): Promise<Figure[]>;
}

export interface SuiteResult {
  suite: string;
  description: string;
  startedAt: string;
  durationMs: number;
  machine: { node: string; cpus: number; cpuModel: string; native: boolean };
  figures: (Figure & { ratio: number })[];
}

export function ratioOf(f: Figure): number {
  return f.baseline.value === 0 ? Number.NaN : f.value / f.baseline.value;
}

const fmt = (n: number | undefined, digits = 0): string =>
  n === undefined || Number.isNaN(n) ? '' : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export function markdownTable(results: readonly SuiteResult[]): string {
  const rows = [
    '| suite | figure | value | baseline | ratio | p50 µs | p99 µs | p99.9 µs | goal |',
    '|---|---|---:|---|---:|---:|---:|---:|---|',
  ];
  for (const r of results) {
    for (const f of r.figures) {
      const goal = f.goal === undefined ? '' : `${f.goal} ${f.goalMet === undefined ? '' : f.goalMet ? '(met)' : '(not met)'}`;
      rows.push(
        `| ${r.suite} | ${f.name} | ${fmt(f.value, f.value < 100 ? 2 : 0)} ${f.unit} | ${f.baseline.name}: ${fmt(f.baseline.value, f.baseline.value < 100 ? 2 : 0)} ${f.unit} | ${fmt(f.ratio, 2)}× | ${fmt(f.p50Us, 1)} | ${fmt(f.p99Us, 1)} | ${fmt(f.p999Us, 1)} | ${goal.trim()} |`,
      );
    }
  }
  return `${rows.join('\n')}\n`;
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
