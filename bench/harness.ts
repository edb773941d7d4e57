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
