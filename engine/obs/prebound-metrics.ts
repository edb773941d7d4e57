/**
 * A counter and a histogram for per-request metrics (the RPC proxy's calls, the quote service's
 * latency) whose label children are bound once and then cost a few arithmetic operations a call. prom-client's own `labels(...)` children look
 * their series up again on every inc/observe (validate the labels, hash them into a string, find
 * the entry): a few hundred nanoseconds and ~140 bytes of garbage each, on every request. These
 * keep each series' numbers in the child itself and hand prom-client's Registry the same values
 * its Counter and Histogram would at scrape time (`get()`), so `/rpc/metrics` reads the same:
 * names, label order, buckets (`le` first), `_sum` and `_count`.
 */
import type { Registry } from 'prom-client';
import { invalidArgument } from '../errors.js';

type MetricValue = { labels: Record<string, string | number>; sharedLabels?: Record<string, string>; value: number; metricName?: string };

abstract class PreboundMetric<Child extends { zero(): void }, L extends string> {
  readonly aggregator = 'sum';
  protected readonly children = new Map<string, { labels: Record<L, string>; child: Child }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly L[],
    registers: readonly Registry[],
  ) {
    for (const r of registers) r.registerMetric(this as never);
  }

  /** The child of these label values (in labelNames' order), made once and kept. */
  labels(...values: string[]): Child {
    const key = values.join('\u0000');
    let entry = this.children.get(key);
    if (entry === undefined) {
      if (values.length !== this.labelNames.length) throw invalidArgument('values', values.length, `${this.name} takes ${this.labelNames.length} label values, got ${values.length}`);
      const labels = {} as Record<L, string>;
      this.labelNames.forEach((n, i) => (labels[n] = values[i]!));
      entry = { labels, child: this.makeChild() };
      this.children.set(key, entry);
    }
    return entry.child;
  }

  /** Every series back to zero, in place: bound children stay valid (prom-client's Registry.resetMetrics). */
  reset(): void {
    for (const entry of this.children.values()) entry.child.zero();
  }

  protected abstract makeChild(): Child;
}

export class PreboundCounterChild {
  value = 0;

  inc(n = 1): void {
    this.value += n;
  }

  zero(): void {
    this.value = 0;
  }
}

export class PreboundCounter<L extends string> extends PreboundMetric<PreboundCounterChild, L> {
  readonly type = 'counter';

  protected makeChild(): PreboundCounterChild {
    return new PreboundCounterChild();
  }

  /** What prom-client's Registry reads at scrape time. */
  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: MetricValue[] }> {
    const values: MetricValue[] = [];
    for (const { labels, child } of this.children.values()) values.push({ labels: { ...labels }, value: child.value });
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }
}

export class PreboundHistogramChild {
  sum = 0;
  count = 0;
  /** Observations per bucket (not cumulative), the last one past every bound (+Inf). */
  readonly buckets: Float64Array;

  constructor(private readonly bounds: readonly number[]) {
    this.buckets = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) throw invalidArgument('value', String(value), `Value is not a valid number: ${value}`);
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.buckets[i]!++;
    this.sum += value;
    this.count++;
  }

  /** A function that observes the seconds since this call (prom-client's `startTimer`). */
  startTimer(): () => number {
    const started = performance.now();
    return () => {
      const seconds = (performance.now() - started) / 1000;
      this.observe(seconds);
      return seconds;
    };
  }

  zero(): void {
    this.sum = 0;
    this.count = 0;
    this.buckets.fill(0);
  }
}

export class PreboundHistogram<L extends string> extends PreboundMetric<PreboundHistogramChild, L> {
  readonly type = 'histogram';
  private readonly bounds: readonly number[];

  constructor(name: string, help: string, labelNames: readonly L[], buckets: readonly number[], registers: readonly Registry[]) {
    super(name, help, labelNames, registers);
    this.bounds = [...buckets].sort((a, b) => a - b);
  }

  protected makeChild(): PreboundHistogramChild {
    return new PreboundHistogramChild(this.bounds);
  }

  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: MetricValue[] }> {
    const values: MetricValue[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const { labels, child } of this.children.values()) {
      let acc = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        acc += child.buckets[i]!;
        values.push({ labels: { le: this.bounds[i]! }, sharedLabels: labels, value: acc, metricName: bucketName });
      }
      values.push({ labels: { le: '+Inf' }, sharedLabels: labels, value: child.count, metricName: bucketName });
      values.push({ labels: {}, sharedLabels: labels, value: child.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: labels, value: child.count, metricName: `${this.name}_count` });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }
}
