/**
 * GetConfidenceBreakdown's answer (aggregator.proto ConfidenceResponse) from an aggregated quote:
 * each source's quote, score, decision and factors, and the thresholds that made the decision.
 */
import { QuoteSourceName, type WireQuote, type WireQuoteError } from '../quote/index.js';
import { DECISION_THRESHOLDS } from './confidence.js';
import type { WireAggregatedQuote, WireConfidenceScore } from './wire-types.js';

export interface WireSourceConfidence {
  source: QuoteSourceName;
  present: boolean;
  quote: WireQuote | null;
  confidence: WireConfidenceScore | null;
  error: WireQuoteError | null;
}

export interface WireConfidenceResponse {
  pairId: string;
  local: WireSourceConfidence;
  external: WireSourceConfidence;
  bestSource: QuoteSourceName;
  confidence: number;
  decision: WireAggregatedQuote['decision'];
  thresholds: { execute: number; verify: number; cautious: number };
  defaultProviderUptime: number;
  scoringEnabled: boolean;
  computedAtUnixMs: string;
}

function side(source: QuoteSourceName, quote: WireQuote | null, confidence: WireConfidenceScore | null, error: WireQuoteError | null): WireSourceConfidence {
  return { source, present: quote !== null, quote, confidence, error: quote === null ? error : null };
}

export function confidenceResponse(quote: WireAggregatedQuote, defaultProviderUptime: number, scoringEnabled: boolean): WireConfidenceResponse {
  return {
    pairId: quote.pairId,
    local: side(QuoteSourceName.Local, quote.localQuote, quote.localConfidence, quote.localError),
    external: side(QuoteSourceName.External, quote.externalQuote, quote.externalConfidence, quote.externalError),
    bestSource: quote.bestSource,
    confidence: quote.confidence,
    decision: quote.decision,
    thresholds: { ...DECISION_THRESHOLDS },
    defaultProviderUptime,
    scoringEnabled,
    computedAtUnixMs: String(Date.now()),
  };
}
