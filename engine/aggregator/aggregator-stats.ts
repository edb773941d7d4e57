/**
 * The statistics of spec 01 ("Statistics kept by the service") that the aggregator counts itself:
 * requests, aggregations per source class, average confidence, price differences. (Node runs the
 * aggregator on one thread, so plain numbers are the "atomic counters" of the spec.) Each count is
 * also recorded in the Prometheus metrics.
 */
import type { AggregatorMetrics } from './aggregator-metrics.js';
import { SourceClassName, type WireAggregatedQuote } from './wire-types.js';

/** Pairs whose price difference is kept one by one; past it the oldest is forgotten. */
const MAX_PRICE_DIFFERENCE_PAIRS = 1000;

export const RequestKind = {
  Full: 'full',
  LocalOnly: 'local_only',
  ExternalOnly: 'external_only',
  Failed: 'failed',
  Stream: 'stream',
} as const;
export type RequestKind = (typeof RequestKind)[keyof typeof RequestKind];

/** Price difference statistics: (external − local) / local × 100 of BOTH-class quotes. */
export interface PriceDifferenceStats {
  samples: number;
  lastPct: number;
  avgAbsPct: number;
  maxAbsPct: number;
}

class PriceDifference {
  samples = 0;
  lastPct = 0;
  sumAbs = 0;
  maxAbs = 0;

  add(pct: number): void {
    this.samples++;
    this.lastPct = pct;
    this.sumAbs += Math.abs(pct);
    if (Math.abs(pct) > this.maxAbs) this.maxAbs = Math.abs(pct);
  }

  toJSON(): PriceDifferenceStats {
    return { samples: this.samples, lastPct: this.lastPct, avgAbsPct: this.samples === 0 ? 0 : this.sumAbs / this.samples, maxAbsPct: this.maxAbs };
  }
}

export interface AggregationCounts {
  localOnly: number;
  externalOnly: number;
  both: number;
}

export interface RequestCounts {
  /** GetAggregatedQuote calls. */
  total: number;
  /** Answered from the local quote alone (the external one absent). */
  localOnly: number;
  externalOnly: number;
  /** Answered with both sources. */
  full: number;
  /** Failed (INVALID_ARGUMENT, NOT_FOUND, UNAVAILABLE, DEADLINE_EXCEEDED). */
  failed: number;
  /** StreamAggregatedQuotes calls accepted. */
  streams: number;
}

export class AggregatorStats {
  readonly requests: RequestCounts = { total: 0, localOnly: 0, externalOnly: 0, full: 0, failed: 0, streams: 0 };
  readonly aggregations: AggregationCounts = { localOnly: 0, externalOnly: 0, both: 0 };
  private confidenceSum = 0;
  private confidenceCount = 0;
  private readonly priceDifference = new PriceDifference();
  private readonly priceDifferenceByPair = new Map<string, PriceDifference>();

  constructor(private readonly metrics: AggregatorMetrics) {}

  countRequest(kind: RequestKind): void {
    this.metrics.requests.inc({ kind });
    if (kind === RequestKind.Stream) {
      this.requests.streams++;
      return;
    }
    this.requests.total++;
    if (kind === RequestKind.Full) this.requests.full++;
    else if (kind === RequestKind.LocalOnly) this.requests.localOnly++;
    else if (kind === RequestKind.ExternalOnly) this.requests.externalOnly++;
    else this.requests.failed++;
  }

  /** The request kind of an answered GetAggregatedQuote. */
  static kindOf(quote: WireAggregatedQuote): RequestKind {
    if (quote.sourceClass === SourceClassName.Both) return RequestKind.Full;
    if (quote.sourceClass === SourceClassName.LocalOnly) return RequestKind.LocalOnly;
    if (quote.sourceClass === SourceClassName.ExternalOnly) return RequestKind.ExternalOnly;
    return RequestKind.Failed;
  }

  /** Counts one built aggregated quote. */
  countAggregation(quote: WireAggregatedQuote, scoringEnabled: boolean): void {
    switch (quote.sourceClass) {
      case SourceClassName.Both:
        this.aggregations.both++;
        this.metrics.aggregations.inc({ source_class: 'both' });
        this.addPriceDifference(quote.pairId, quote.priceDifferencePct);
        break;
      case SourceClassName.LocalOnly:
        this.aggregations.localOnly++;
        this.metrics.aggregations.inc({ source_class: 'local_only' });
        break;
      case SourceClassName.ExternalOnly:
        this.aggregations.externalOnly++;
        this.metrics.aggregations.inc({ source_class: 'external_only' });
        break;
      default:
        return; // no quote: nothing to average
    }
    if (scoringEnabled) {
      this.confidenceSum += quote.confidence;
      this.confidenceCount++;
      this.metrics.confidence.observe(quote.confidence);
    }
  }

  get averageConfidence(): number {
    return this.confidenceCount === 0 ? 0 : this.confidenceSum / this.confidenceCount;
  }

  priceDifferenceJson(): PriceDifferenceStats & { byPair: Record<string, PriceDifferenceStats> } {
    const byPair: Record<string, PriceDifferenceStats> = {};
    for (const [id, d] of this.priceDifferenceByPair) byPair[id] = d.toJSON();
    return { ...this.priceDifference.toJSON(), byPair };
  }

  private addPriceDifference(pairId: string, pct: number): void {
    this.priceDifference.add(pct);
    this.metrics.priceDifference.observe(Math.abs(pct) / 100);
    let d = this.priceDifferenceByPair.get(pairId);
    if (d === undefined) {
      d = new PriceDifference();
      this.priceDifferenceByPair.set(pairId, d);
      if (this.priceDifferenceByPair.size > MAX_PRICE_DIFFERENCE_PAIRS) {
        this.priceDifferenceByPair.delete(this.priceDifferenceByPair.keys().next().value!);
      }
    }
    d.add(pct);
  }
}
