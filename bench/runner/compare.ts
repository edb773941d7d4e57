/**
 * `npm run bench -- --compare`: each figure of this run beside the same figure of the previous run
 * of the same machine (results-store.ts `previousSuites`), matched by suite and figure name.
 *
 * A figure regressed when it is worse by more than the threshold (default 20%) relative to the
 * previous value: for a lower-is-better figure (latency, time, memory) current > previous × 1.2;
 * for a higher-is-better one (throughput, rate) current < previous × 0.8. A figure the previous run
 * had and this run lacks (its suite failed, or the figure is gone) is listed as missing.
 */
import type { Figure } from '../harness.js';
import type { PreviousSuite, SuiteRecord } from './results-store.js';

export const REGRESSION_THRESHOLD = 0.2;

export interface FigureComparison {
  suite: string;
  figure: string;
  unit: string;
  higherIsBetter: boolean;
  previous: number;
  current: number;
  /** How much worse, as a fraction of the previous value (negative: better); NaN when it cannot be said. */
  worse: number;
  regression: boolean;
  /** The previous run's commit (12 hex) and start. */
  previousCommit: string;
  previousAt: string;
}

export interface RunComparison {
  threshold: number;
  /** Keyed by `figureKey(suite, figure)`. */
  figures: Map<string, FigureComparison>;
  regressions: FigureComparison[];
  /** `suite: figure` the previous run had and this one does not. */
  missing: string[];
  /** Suites of this run with no previous successful run on this machine. */
  noPrevious: string[];
}

export const figureKey = (suite: string, figure: string): string => `${suite}\u0000${figure}`;

/** How much worse `current` is than `previous`, as a fraction of `previous` (negative: better). */
export function worseBy(previous: number, current: number, higherIsBetter: boolean): number {
  if (!Number.isFinite(previous) || !Number.isFinite(current) || previous === 0) return Number.NaN;
  const change = (current - previous) / Math.abs(previous);
  return higherIsBetter ? -change : change;
}

export function compareRun(current: readonly SuiteRecord[], previous: ReadonlyMap<string, PreviousSuite>, threshold = REGRESSION_THRESHOLD): RunComparison {
  const out: RunComparison = { threshold, figures: new Map(), regressions: [], missing: [], noPrevious: [] };
  for (const suite of current) {
    const prev = previous.get(suite.suite);
    if (prev === undefined) {
      out.noPrevious.push(suite.suite);
      continue;
    }
    const now = new Map<string, Figure>(suite.figures.map((f) => [f.name, f]));
    for (const before of prev.suite.figures) {
      const f = now.get(before.name);
      if (f === undefined) {
        out.missing.push(`${suite.suite}: ${before.name}`);
        continue;
      }
      const worse = worseBy(before.value, f.value, f.higherIsBetter);
      const c: FigureComparison = {
        suite: suite.suite,
        figure: f.name,
        unit: f.unit,
        higherIsBetter: f.higherIsBetter,
        previous: before.value,
        current: f.value,
        worse,
        regression: worse > threshold,
        previousCommit: prev.run.git.commit.slice(0, 12),
        previousAt: prev.run.startedAt,
      };
      out.figures.set(figureKey(suite.suite, f.name), c);
      if (c.regression) out.regressions.push(c);
    }
  }
  return out;
}
