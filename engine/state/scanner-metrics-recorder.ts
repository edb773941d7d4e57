import type { Counter, Histogram } from 'prom-client';

import type { Logger } from '../obs/index.js';
import type { ScannerMetrics } from '../obs/index.js';
import type { ScannerMetricsRow, ScannerMetricsStore } from './db/scanner-metrics.js';

/**
 * Writes the scanner's `scanner_metrics` row once per interval (spec 03), from the scanner's own
 * Prometheus metrics (spec 02 names), so the two never disagree:
 * - events_processed: PoolStateUpdateEvents published in the interval
 *   (`blockstream_scanner_events_published_total`);
 * - latency_p50 / latency_p99: of `end_to_end_latency_ms` over the interval, estimated from the
 *   histogram's bucket counts as Prometheus' histogram_quantile does (linear within a bucket);
 *   null when nothing was observed;
 * - error_count: parsing, bus publish and stream connection errors in the interval.
 * A row that cannot be written (database down) waits in a bounded backlog and goes with the next.
 */

export interface ScannerMetricsRecorderOptions {
  scannerId: string;
  /** Default 10 s. */
  intervalMs?: number;
  /** Rows kept while the database is down. Default 360 (an hour at 10 s). */
  maxBacklog?: number;
  logger?: Logger;
}

interface Snapshot {
  events: number;
  errors: number;
  /** Cumulative count per bucket upper bound, ascending, +Inf last. */
  buckets: { le: number; count: number }[];
}

async function counterValue(c: Counter): Promise<number> {
  return (await c.get()).values.reduce((s, v) => s + v.value, 0);
}

async function histogramBuckets(h: Histogram): Promise<{ le: number; count: number }[]> {
  const out: { le: number; count: number }[] = [];
  for (const v of (await h.get()).values) {
    if (!v.metricName?.endsWith('_bucket')) continue;
    const le = v.labels.le;
    out.push({ le: le === '+Inf' ? Infinity : Number(le), count: v.value });
  }
  return out.sort((a, b) => a.le - b.le);
}

/** The q-quantile of the observations between two cumulative bucket snapshots; null when none. */
export function quantileBetween(before: readonly { le: number; count: number }[], after: readonly { le: number; count: number }[], q: number): number | null {
  const deltas = after.map((b, i) => ({ le: b.le, count: b.count - (before[i]?.count ?? 0) }));
  const total = deltas[deltas.length - 1]?.count ?? 0;
  if (total <= 0) return null;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const b of deltas) {
    if (b.count >= rank) {
      if (b.le === Infinity) return lower;
      const inBucket = b.count - below;
      return inBucket <= 0 ? b.le : lower + ((b.le - lower) * (rank - below)) / inBucket;
    }
    lower = b.le;
    below = b.count;
  }
  return lower;
}

export class ScannerMetricsRecorder {
  private timer: NodeJS.Timeout | undefined;
  private last: Snapshot | undefined;
  private readonly backlog: ScannerMetricsRow[] = [];
  private ticking: Promise<void> | undefined;
  readonly intervalMs: number;
  private readonly maxBacklog: number;
  /** Rows written, and rows dropped because the backlog was full. */
  written = 0;
  dropped = 0;

  constructor(
    private readonly store: ScannerMetricsStore,
    private readonly metrics: ScannerMetrics,
    private readonly options: ScannerMetricsRecorderOptions,
  ) {
    this.intervalMs = options.intervalMs ?? 10_000;
    this.maxBacklog = options.maxBacklog ?? 360;
  }

  private async snapshot(): Promise<Snapshot> {
    const m = this.metrics;
    const [events, parsing, publish, connection, buckets] = await Promise.all([
      counterValue(m.eventsPublished),
      counterValue(m.parsingErrors),
      counterValue(m.busPublishErrors),
      counterValue(m.connectionErrors),
      histogramBuckets(m.endToEndLatencyMs),
    ]);
    return { events, errors: parsing + publish + connection, buckets };
  }

  /** Takes the baseline, then writes a row every interval. */
  async start(): Promise<void> {
    if (this.timer !== undefined) return;
    this.last = await this.snapshot();
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  /** Writes the row of the interval since the last one (and any backlog). Never throws. */
  async tick(at = new Date()): Promise<void> {
    if (this.ticking !== undefined) return this.ticking;
    this.ticking = (async () => {
      const now = await this.snapshot();
      const before = this.last ?? { events: 0, errors: 0, buckets: [] };
      this.last = now;
      this.backlog.push({
        time: at,
        scannerId: this.options.scannerId,
        eventsProcessed: Math.max(0, now.events - before.events),
        latencyP50: quantileBetween(before.buckets, now.buckets, 0.5),
        latencyP99: quantileBetween(before.buckets, now.buckets, 0.99),
        errorCount: Math.max(0, now.errors - before.errors),
      });
      while (this.backlog.length > this.maxBacklog) {
        this.backlog.shift();
        this.dropped++;
      }
      while (this.backlog.length > 0) {
        try {
          await this.store.insert(this.backlog[0]!);
        } catch (err) {
          this.options.logger?.warn({ err, waiting: this.backlog.length }, 'scanner_metrics row not written; kept for the next interval');
          return;
        }
        this.backlog.shift();
        this.written++;
      }
    })();
    try {
      await this.ticking;
    } finally {
      this.ticking = undefined;
    }
  }

  /** Writes the last partial interval and stops. */
  async close(): Promise<void> {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.tick();
  }
}
