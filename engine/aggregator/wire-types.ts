/**
 * The tidepool.v1 aggregator.proto messages as loadTidepoolProto() reads and writes them (camelCase
 * fields, u64 and int64 as decimal strings, enums as their names, absent messages as null), and the
 * enum names as `as const` objects. Only the fields the aggregator touches are typed strictly.
 * quote.proto's messages (Quote, RouteHop, QuoteError, PairAmount, the requests) and QuoteSource are
 * in engine/quote/quote-wire.ts, shared with both upstream services.
 */
import type { QuoteSourceName, WireQuote, WireQuoteError, WireRouteHop } from '../quote/index.js';

export const DecisionName = {
  Unspecified: 'DECISION_UNSPECIFIED',
  Execute: 'DECISION_EXECUTE',
  Verify: 'DECISION_VERIFY',
  Cautious: 'DECISION_CAUTIOUS',
  Skip: 'DECISION_SKIP',
} as const;
export type DecisionName = (typeof DecisionName)[keyof typeof DecisionName];

export const SourceClassName = {
  Unspecified: 'SOURCE_CLASS_UNSPECIFIED',
  LocalOnly: 'SOURCE_CLASS_LOCAL_ONLY',
  ExternalOnly: 'SOURCE_CLASS_EXTERNAL_ONLY',
  Both: 'SOURCE_CLASS_BOTH',
} as const;
export type SourceClassName = (typeof SourceClassName)[keyof typeof SourceClassName];

export const FactorKindName = {
  PoolAge: 'CONFIDENCE_FACTOR_KIND_POOL_AGE',
  Route: 'CONFIDENCE_FACTOR_KIND_ROUTE',
  Oracle: 'CONFIDENCE_FACTOR_KIND_ORACLE',
  Provider: 'CONFIDENCE_FACTOR_KIND_PROVIDER',
  Slippage: 'CONFIDENCE_FACTOR_KIND_SLIPPAGE',
} as const;
export type FactorKindName = (typeof FactorKindName)[keyof typeof FactorKindName];

export const ServingStatusName = {
  Serving: 'SERVING_STATUS_SERVING',
  Degraded: 'SERVING_STATUS_DEGRADED',
  NotServing: 'SERVING_STATUS_NOT_SERVING',
} as const;
export type ServingStatusName = (typeof ServingStatusName)[keyof typeof ServingStatusName];

export const UpstreamStateName = {
  Connecting: 'UPSTREAM_STATE_CONNECTING',
  Streaming: 'UPSTREAM_STATE_STREAMING',
  Reconnecting: 'UPSTREAM_STATE_RECONNECTING',
} as const;
export type UpstreamStateName = (typeof UpstreamStateName)[keyof typeof UpstreamStateName];

export interface WireConfidenceFactor {
  kind: FactorKindName;
  input: number;
  inputUnit: 'seconds' | 'hops' | 'fraction';
  inputKnown: boolean;
  score: number;
  weight: number;
  contribution: number;
  detail: string;
}

export interface WireConfidenceScore {
  score: number;
  decision: DecisionName;
  factors: WireConfidenceFactor[];
  scoringEnabled: boolean;
}

export interface WireAggregatedQuote {
  pairId: string;
  inputMint: string;
  outputMint: string;
  inputAmount: string;
  localQuote: WireQuote | null;
  externalQuote: WireQuote | null;
  bestSource: QuoteSourceName;
  outputAmount: string;
  minOutputAmount: string;
  route: WireRouteHop[];
  routeHash: string;
  confidence: number;
  localConfidence: WireConfidenceScore | null;
  externalConfidence: WireConfidenceScore | null;
  decision: DecisionName;
  priceDifferencePct: number;
  sourceClass: SourceClassName;
  slot: string;
  aggregatedAtUnixMs: string;
  /** Left out of the shared stream body: each stream appends its own (see stream-fanout.ts). */
  sequence?: string;
  localError: WireQuoteError | null;
  externalError: WireQuoteError | null;
}

export interface WireUpstreamStatus {
  source: QuoteSourceName;
  address: string;
  state: UpstreamStateName;
  healthy: boolean;
  timeoutMs: number;
  lastLatencyMs: number;
  avgLatencyMs: number;
  quotesReceived: string;
  errors: string;
  timeouts: string;
  reconnects: string;
  backoffMs: number;
  connectedSinceUnixMs: string;
  lastQuoteAtUnixMs: string;
  lastError: string;
}
