import * as hdr from 'hdr-histogram-js';

/**
 * Latency recording with an HDR histogram (hdr-histogram-js), values in nanoseconds, 3 significant
 * digits, from 1 ns to 60 s. Percentiles are reported in microseconds.
 */
export class LatencyRecorder {
  private readonly histogram = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 60_000_000_000,
    numberOfSignificantValueDigits: 3,
    bitBucketSize: 64,
    useWebAssembly: false,
  });

  recordNs(ns: number | bigint): void {
    const v = typeof ns === 'bigint' ? Number(ns) : ns;
    this.histogram.recordValue(Math.max(1, Math.round(v)));
  }

  get count(): number {
    return this.histogram.totalCount;
  }

  percentileUs(p: number): number {
    return this.histogram.getValueAtPercentile(p) / 1000;
  }

  summary(): { count: number; p50Us: number; p99Us: number; p999Us: number; maxUs: number } {
    return {
      count: this.count,
      p50Us: this.percentileUs(50),
      p99Us: this.percentileUs(99),
      p999Us: this.percentileUs(99.9),
      maxUs: this.histogram.maxValue / 1000,
    };
  }

  /** Adds every value `other` recorded. */
  add(other: LatencyRecorder): void {
    this.histogram.add(other.histogram);
  }

  reset(): void {
    this.histogram.reset();
  }
}
