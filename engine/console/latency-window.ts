/**
 * Quote and stream → cache latency for the console's charts, from the services' own Prometheus
 * histograms: each scrape's cumulative buckets minus the previous scrape's give the observations
 * of that interval, and their p50 / p99 are interpolated inside the bucket the rank falls in, as
 * PromQL's histogram_quantile does. No second set of timers in the hot paths: the console reads
 * what Prometheus reads.
 */

/** One histogram's cumulative bucket counts by upper bound (`+Inf` as Infinity). */
export type Buckets = Map<number, number>;

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/**
 * The buckets of histogram `name` in a text exposition, summed over every series whose labels
 * include `match` (e.g. `{source: 'cache'}`); undefined when the exposition has no such series.
 */
export function histogramBuckets(text: string, name: string, match: Readonly<Record<string, string>> = {}): Buckets | undefined {
  const bucketName = `${name}_bucket`;
  let out: Buckets | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith(bucketName)) continue;
    const m = LINE.exec(line);
    if (m === null || m[1] !== bucketName) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]!] = l[2]!;
    if (labels.le === undefined) continue;
    if (!Object.entries(match).every(([k, v]) => labels[k] === v)) continue;
    const le = labels.le === '+Inf' ? Infinity : Number(labels.le);
    const value = Number(m[3]);
    if (!Number.isFinite(value) || Number.isNaN(le)) continue;
    out ??= new Map();
    out.set(le, (out.get(le) ?? 0) + value);
  }
  return out;
}

/** `now - before` per bucket (a counter reset, now < before, counts `now` alone). */
export function bucketDelta(now: Buckets, before: Buckets | undefined): Buckets {
  const out: Buckets = new Map();
  for (const [le, n] of now) {
    const b = before?.get(le) ?? 0;
    out.set(le, n >= b ? n - b : n);
  }
  return out;
}

/**
 * The `q` quantile (0..1) of cumulative `buckets`, interpolated linearly inside its bucket (the
 * first bucket from 0); the highest finite bound when it falls in +Inf; null with no observations.
 */
export function bucketQuantile(q: number, buckets: Buckets): number | null {
  const bounds = [...buckets.keys()].sort((a, b) => a - b);
  if (bounds.length === 0) return null;
  const total = buckets.get(bounds[bounds.length - 1]!) ?? 0;
  if (!(total > 0)) return null;
  const rank = q * total;
  let prevBound = 0;
  let prevCount = 0;
  for (const le of bounds) {
    const count = buckets.get(le)!;
    if (count >= rank) {
      if (le === Infinity) return prevBound;
      if (count === prevCount) return le;
      return prevBound + ((le - prevBound) * (rank - prevCount)) / (count - prevCount);
    }
    prevBound = le;
    prevCount = count;
  }
  return prevBound;
}

/** One point of the latency charts: Unix ms, then p50 / p99 in milliseconds (null: no observations). */
export interface LatencyPoint {
  t: number;
  quoteP50: number | null;
  quoteP99: number | null;
  streamP50: number | null;
  streamP99: number | null;
}

/** Where a latency series is read: a metrics URL, a histogram, its labels, and its unit. */
export interface LatencySeriesSource {
  url: string;
  histogram: string;
  match?: Record<string, string>;
  /** Multiplier to milliseconds: 1000 for a `_seconds` histogram, 1 for a `_ms` one. */
  toMs: number;
}

/** The per-interval quantiles of one histogram, scrape after scrape. */
export class IntervalQuantiles {
  private previous: Buckets | undefined;

  constructor(readonly source: LatencySeriesSource) {}

  /** Feeds one scrape's text; the interval's [p50, p99] in ms (nulls before the second scrape or without observations). */
  next(text: string | undefined): [number | null, number | null] {
    const now = text === undefined ? undefined : histogramBuckets(text, this.source.histogram, this.source.match);
    if (now === undefined) {
      this.previous = undefined;
      return [null, null];
    }
    const first = this.previous === undefined;
    const delta = bucketDelta(now, this.previous);
    this.previous = now;
    if (first) return [null, null];
    const ms = (v: number | null): number | null => (v === null ? null : Math.round(v * this.source.toMs * 1000) / 1000);
    return [ms(bucketQuantile(0.5, delta)), ms(bucketQuantile(0.99, delta))];
  }
}
