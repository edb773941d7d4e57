/**
 * The 5-factor confidence score of spec 01, as pure functions: each factor turns one measured input
 * into a score in [0, 1]; the weighted sum is the quote's confidence; the thresholds of
 * docs/architecture.md §3 map it to a decision. The curves are documented in ./README.md.
 * An input that cannot be measured (no pool age, no oracle price) scores a neutral 0.5.
 */
import type { WireQuote } from '../quote/index.js';
import type { PairOraclePrice } from './contracts.js';
import { DecisionName, FactorKindName, type WireConfidenceFactor, type WireConfidenceScore } from './wire-types.js';

/** Spec 01 weights; they sum to 1. */
export const CONFIDENCE_WEIGHTS = { poolAge: 0.3, route: 0.2, oracle: 0.3, provider: 0.1, slippage: 0.1 } as const;

/** docs/architecture.md §3: Execute ≥ 0.8, Verify ≥ 0.6, Cautious ≥ 0.4, else Skip. */
export const DECISION_THRESHOLDS = { execute: 0.8, verify: 0.6, cautious: 0.4 } as const;

/** Score of a factor whose input is unknown. */
export const UNKNOWN_INPUT_SCORE = 0.5;
/** Pool age curve: a pool seen just now scores 0.2, an hour-old pool (or older) 1. */
export const POOL_AGE_FLOOR = 0.2;
export const POOL_AGE_MATURE_SECONDS = 3600;
/** Oracle curve: 0 deviation scores 1, 5% deviation or more scores 0. */
export const ORACLE_ZERO_SCORE_DEVIATION = 0.05;
/** Slippage curve: 0 impact scores 1, 2% impact or more scores 0. */
export const SLIPPAGE_ZERO_SCORE_IMPACT = 0.02;
/** Route curve by hop count: 1 → 1.0, 2 → 0.8, 3 → 0.6, 4 or more → 0.4. */
export const ROUTE_SCORES = [1, 1, 0.8, 0.6, 0.4] as const;

const clamp01 = (x: number): number => (x < 0 ? 0 : x > 1 ? 1 : x);

/**
 * Sums of weighted scores pick up binary-fraction noise (0.3 + 0.2 + … ≠ exact); rounding to 12
 * decimals keeps a score that is 0.8 on paper at 0.8, so it decides Execute.
 */
const round12 = (x: number): number => Math.round(x * 1e12) / 1e12;

/** The decision a score maps to (docs/architecture.md §3). */
export function decisionFor(score: number): DecisionName {
  if (score >= DECISION_THRESHOLDS.execute) return DecisionName.Execute;
  if (score >= DECISION_THRESHOLDS.verify) return DecisionName.Verify;
  if (score >= DECISION_THRESHOLDS.cautious) return DecisionName.Cautious;
  return DecisionName.Skip;
}

function factor(
  kind: WireConfidenceFactor['kind'],
  weight: number,
  inputUnit: WireConfidenceFactor['inputUnit'],
  input: number | undefined,
  score: number,
  detail: string,
): WireConfidenceFactor {
  const known = input !== undefined;
  const s = known ? round12(clamp01(score)) : UNKNOWN_INPUT_SCORE;
  return { kind, input: input ?? 0, inputUnit, inputKnown: known, score: s, weight, contribution: round12(s * weight), detail };
}

/** Pool age factor: input = the youngest pool's age in seconds; clamp(0.2 + 0.8 × age / 3600, 0.2, 1). */
export function poolAgeFactor(youngestPoolAgeSeconds: number | undefined): WireConfidenceFactor {
  const age = youngestPoolAgeSeconds;
  const score = age === undefined ? 0 : Math.max(POOL_AGE_FLOOR, POOL_AGE_FLOOR + ((1 - POOL_AGE_FLOOR) * age) / POOL_AGE_MATURE_SECONDS);
  return factor(FactorKindName.PoolAge, CONFIDENCE_WEIGHTS.poolAge, 'seconds', age, score, age === undefined ? 'pool age unreported' : `youngest pool ${age} s old`);
}

/** Route factor: input = number of hops. A route without hops is unknown. */
export function routeFactor(hops: number): WireConfidenceFactor {
  const known = hops > 0 ? hops : undefined;
  const score = known === undefined ? 0 : ROUTE_SCORES[Math.min(known, ROUTE_SCORES.length - 1)]!;
  return factor(FactorKindName.Route, CONFIDENCE_WEIGHTS.route, 'hops', known, score, known === undefined ? 'no hops' : `${known} hop${known === 1 ? '' : 's'}`);
}

/**
 * Oracle factor: input = |quote atom price − oracle atom price| / oracle atom price, where the quote
 * atom price is outputAmount / inputAmount in base units; score clamp(1 − d / 0.05, 0, 1).
 * Unknown when the oracle has no price for the pair (or either price is not a positive number).
 */
export function oracleFactor(quoteAtomPrice: number, oracle: PairOraclePrice | undefined): WireConfidenceFactor {
  if (oracle === undefined || !(oracle.atomPrice > 0) || !Number.isFinite(oracle.atomPrice) || !(quoteAtomPrice > 0) || !Number.isFinite(quoteAtomPrice)) {
    return factor(FactorKindName.Oracle, CONFIDENCE_WEIGHTS.oracle, 'fraction', undefined, 0, oracle === undefined ? 'no oracle price' : 'no comparable price');
  }
  const d = Math.abs(quoteAtomPrice - oracle.atomPrice) / oracle.atomPrice;
  return factor(FactorKindName.Oracle, CONFIDENCE_WEIGHTS.oracle, 'fraction', d, 1 - d / ORACLE_ZERO_SCORE_DEVIATION, `oracle ${oracle.atomPrice}, quote ${quoteAtomPrice} (base units)`);
}

/** Provider factor: input = uptime fraction (the quote's, else the configured default); score = uptime. */
export function providerFactor(reportedUptime: number | undefined, defaultUptime: number): WireConfidenceFactor {
  const uptime = reportedUptime !== undefined && Number.isFinite(reportedUptime) ? reportedUptime : defaultUptime;
  const detail = reportedUptime === undefined ? `default uptime ${defaultUptime}` : `reported uptime ${reportedUptime}`;
  return factor(FactorKindName.Provider, CONFIDENCE_WEIGHTS.provider, 'fraction', clamp01(uptime), uptime, detail);
}

/** Slippage factor: input = the quote's price impact (fraction); score clamp(1 − impact / 0.02, 0, 1). */
export function slippageFactor(priceImpact: number): WireConfidenceFactor {
  if (!Number.isFinite(priceImpact)) return factor(FactorKindName.Slippage, CONFIDENCE_WEIGHTS.slippage, 'fraction', undefined, 0, 'price impact unknown');
  const impact = Math.abs(priceImpact);
  return factor(FactorKindName.Slippage, CONFIDENCE_WEIGHTS.slippage, 'fraction', impact, 1 - impact / SLIPPAGE_ZERO_SCORE_IMPACT, `price impact ${impact}`);
}

/** Age of the youngest pool on the route; undefined unless every hop reports its pool's age. */
export function youngestPoolAge(route: WireQuote['route']): number | undefined {
  if (route.length === 0) return undefined;
  let youngest = Infinity;
  for (const hop of route) {
    if (hop.poolAgeSeconds === undefined || hop.poolAgeSeconds === null) return undefined;
    if (hop.poolAgeSeconds < youngest) youngest = hop.poolAgeSeconds;
  }
  return youngest;
}

/** Quote price in base units: output per input; NaN when the input amount is 0. */
export function quoteAtomPrice(quote: Pick<WireQuote, 'inputAmount' | 'outputAmount'>): number {
  const input = Number(quote.inputAmount);
  return input > 0 ? Number(quote.outputAmount) / input : NaN;
}

export interface ScoringOptions {
  scoringEnabled: boolean;
  defaultProviderUptime: number;
}

/**
 * The confidence of one source's quote. Scoring off: score 0, no factors, DECISION_UNSPECIFIED
 * (the aggregated quote then recommends Verify; see README).
 */
export function scoreQuote(quote: WireQuote, oracle: PairOraclePrice | undefined, options: ScoringOptions): WireConfidenceScore {
  if (!options.scoringEnabled) return { score: 0, decision: DecisionName.Unspecified, factors: [], scoringEnabled: false };
  const factors = [
    poolAgeFactor(youngestPoolAge(quote.route)),
    routeFactor(quote.route.length),
    oracleFactor(quoteAtomPrice(quote), oracle),
    providerFactor(quote.providerUptime ?? undefined, options.defaultProviderUptime),
    slippageFactor(quote.priceImpact),
  ];
  let sum = 0;
  for (const f of factors) sum += f.contribution;
  const score = round12(clamp01(sum));
  return { score, decision: decisionFor(score), factors, scoringEnabled: true };
}
