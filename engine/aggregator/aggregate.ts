/**
 * Builds one AggregatedQuote (aggregator.proto) from what each source has for a pair: its quote,
 * or why it has none. Pure: the caller supplies the oracle price, the scoring options and the time.
 *
 * - Source class: both / local-only / external-only by which quotes are present.
 * - Best quote: confidence-weighted comparison, output × confidence; a tie goes to local (our own
 *   exact math); scoring off: the larger output, tie to local.
 * - Decision: from the best quote's confidence (docs/architecture.md §3 thresholds); scoring off:
 *   Verify (nothing vouches for the quote, so the caller should check it); no quote: Skip.
 * - price_difference_pct = (external − local) / local × 100 when both are present, else 0.
 */
import { QuoteSourceName, minOutputAmount, type WireQuote, type WireQuoteError } from '../quote/index.js';
import { scoreQuote, type ScoringOptions } from './confidence.js';
import type { PairOraclePrice } from './contracts.js';
import type { PairKey } from './request-validation.js';
import { priceDifferencePct } from './swap-route-event.js';
import { DecisionName, SourceClassName, type WireAggregatedQuote, type WireConfidenceScore } from './wire-types.js';

/** One source's side: a quote, or the reason it has none. */
export interface SourceSide {
  quote?: WireQuote | undefined;
  error?: WireQuoteError | undefined;
}

export interface AggregateInput {
  pair: PairKey;
  local: SourceSide;
  external: SourceSide;
  oracle: PairOraclePrice | undefined;
  scoring: ScoringOptions;
  now: number;
}

/** Scores are compared in integer millionths of a millionth: output × score stays exact above 2^53. */
const SCORE_SCALE = 1e12;

/** Whether the external quote beats the local one by output × confidence (a tie keeps local). */
export function externalIsBetter(
  local: { quote: WireQuote; confidence: WireConfidenceScore },
  external: { quote: WireQuote; confidence: WireConfidenceScore },
  scoringEnabled: boolean,
): boolean {
  if (!scoringEnabled) return BigInt(external.quote.outputAmount) > BigInt(local.quote.outputAmount);
  const l = BigInt(local.quote.outputAmount) * BigInt(Math.round(local.confidence.score * SCORE_SCALE));
  const e = BigInt(external.quote.outputAmount) * BigInt(Math.round(external.confidence.score * SCORE_SCALE));
  return e > l;
}

/** The aggregated quote at slippage 0 (see withSlippage), without a sequence. */
export function aggregate(input: AggregateInput): WireAggregatedQuote {
  const { pair, local, external, scoring } = input;
  const localScore = local.quote === undefined ? null : scoreQuote(local.quote, input.oracle, scoring);
  const externalScore = external.quote === undefined ? null : scoreQuote(external.quote, input.oracle, scoring);
  let best: WireQuote | undefined;
  let bestScore: WireConfidenceScore | null = null;
  let bestSource: QuoteSourceName = QuoteSourceName.Unspecified;
  let sourceClass: SourceClassName = SourceClassName.Unspecified;
  let diff = 0;
  if (local.quote !== undefined && external.quote !== undefined) {
    sourceClass = SourceClassName.Both;
    diff = priceDifferencePct(BigInt(local.quote.outputAmount), BigInt(external.quote.outputAmount));
    const ext = externalIsBetter({ quote: local.quote, confidence: localScore! }, { quote: external.quote, confidence: externalScore! }, scoring.scoringEnabled);
    best = ext ? external.quote : local.quote;
    bestScore = ext ? externalScore : localScore;
    bestSource = ext ? QuoteSourceName.External : QuoteSourceName.Local;
  } else if (local.quote !== undefined) {
    sourceClass = SourceClassName.LocalOnly;
    best = local.quote;
    bestScore = localScore;
    bestSource = QuoteSourceName.Local;
  } else if (external.quote !== undefined) {
    sourceClass = SourceClassName.ExternalOnly;
    best = external.quote;
    bestScore = externalScore;
    bestSource = QuoteSourceName.External;
  }
  let decision: DecisionName = DecisionName.Skip;
  if (bestScore !== null) decision = scoring.scoringEnabled ? bestScore.decision : DecisionName.Verify;
  return {
    pairId: pair.pairId,
    inputMint: pair.inputMint,
    outputMint: pair.outputMint,
    inputAmount: pair.amount.toString(),
    localQuote: local.quote ?? null,
    externalQuote: external.quote ?? null,
    bestSource,
    outputAmount: best?.outputAmount ?? '0',
    minOutputAmount: best?.outputAmount ?? '0',
    route: best?.route ?? [],
    routeHash: best?.routeHash ?? '',
    confidence: bestScore?.score ?? 0,
    localConfidence: localScore,
    externalConfidence: externalScore,
    decision,
    priceDifferencePct: diff,
    sourceClass,
    slot: best?.slot ?? '0',
    aggregatedAtUnixMs: String(input.now),
    localError: local.quote === undefined ? (local.error ?? null) : null,
    externalError: external.quote === undefined ? (external.error ?? null) : null,
  };
}

function quoteWithSlippage(quote: WireQuote | null, slippageBps: number): WireQuote | null {
  if (quote === null) return null;
  return { ...quote, slippageBps, minOutputAmount: minOutputAmount(BigInt(quote.outputAmount), slippageBps).toString() };
}

/**
 * The client's view of an aggregated quote: upstreams quote at slippage 0, so min_output_amount of
 * the best quote and of both sources is applied here with the client's slippage.
 */
export function withSlippage(quote: WireAggregatedQuote, slippageBps: number): WireAggregatedQuote {
  return {
    ...quote,
    localQuote: quoteWithSlippage(quote.localQuote, slippageBps),
    externalQuote: quoteWithSlippage(quote.externalQuote, slippageBps),
    minOutputAmount: minOutputAmount(BigInt(quote.outputAmount), slippageBps).toString(),
  };
}
