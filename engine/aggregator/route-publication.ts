/**
 * When an aggregated quote becomes a SwapRouteEvent (spec 01 Events; the rule is ours, README):
 * source class BOTH (the event's estimated profit compares the two sources), decision not Skip,
 * and (best route hash, local output, external output) different from the last event published for
 * the pair, so an unchanged market publishes nothing however often it is re-aggregated.
 */
import type { Logger } from 'pino';

import { QuoteSourceName } from '../quote/index.js';
import type { RoutePublisher } from './contracts.js';
import { Decision, QuoteSource, type SwapRouteEventFields, type SwapRouteHop } from './swap-route-event.js';
import { DecisionName, SourceClassName, type WireAggregatedQuote } from './wire-types.js';

/** Pairs remembered; past it the oldest is forgotten (it may then publish once more). */
const MAX_REMEMBERED_PAIRS = 100_000;

const DECISION_OF: Partial<Record<string, Decision>> = {
  [DecisionName.Execute]: Decision.Execute,
  [DecisionName.Verify]: Decision.Verify,
  [DecisionName.Cautious]: Decision.Cautious,
};

/** The event fields of a BOTH-class aggregated quote. */
export function swapRouteEventFields(quote: WireAggregatedQuote): SwapRouteEventFields {
  const local = quote.localQuote!;
  const external = quote.externalQuote!;
  const bestIsExternal = quote.bestSource === QuoteSourceName.External;
  const hops: SwapRouteHop[] = quote.route.map((h) => ({
    pool: h.pool,
    dex: h.dex,
    inputMint: h.inputMint,
    outputMint: h.outputMint,
    inAmount: BigInt(h.inAmount),
    outAmount: BigInt(h.outAmount),
    fee: BigInt(h.fee),
  }));
  return {
    inputMint: quote.inputMint,
    outputMint: quote.outputMint,
    inputAmount: BigInt(quote.inputAmount),
    localOutputAmount: BigInt(local.outputAmount),
    externalOutputAmount: BigInt(external.outputAmount),
    bestSource: bestIsExternal ? QuoteSource.External : QuoteSource.Local,
    confidence: quote.confidence,
    localConfidence: quote.localConfidence?.score ?? 0,
    externalConfidence: quote.externalConfidence?.score ?? 0,
    decision: DECISION_OF[quote.decision] ?? Decision.Skip,
    slot: BigInt(local.slot),
    // schemas/swap-route-event.fbs: quoted_at = when the aggregated quote was made, created_at =
    // when the event was built.
    quotedAtMs: Number(quote.aggregatedAtUnixMs),
    createdAtMs: Date.now(),
    hops,
  };
}

export class RoutePublication {
  private readonly last = new Map<string, string>();

  constructor(
    private readonly publisher: RoutePublisher,
    private readonly logger: Logger,
  ) {}

  /** Publishes the quote's event when the rule says so; returns whether it did. */
  consider(quote: WireAggregatedQuote): boolean {
    if (quote.sourceClass !== SourceClassName.Both) return false;
    if (DECISION_OF[quote.decision] === undefined) return false; // Skip (or none)
    const key = `${quote.routeHash}|${quote.localQuote!.outputAmount}|${quote.externalQuote!.outputAmount}`;
    if (this.last.get(quote.pairId) === key) return false;
    let fields: SwapRouteEventFields;
    try {
      fields = swapRouteEventFields(quote);
    } catch (err) {
      this.logger.warn({ err, pairId: quote.pairId }, 'cannot build the SwapRouteEvent of an aggregated quote');
      return false;
    }
    this.last.delete(quote.pairId); // re-insert: insertion order is the forgetting order
    this.last.set(quote.pairId, key);
    if (this.last.size > MAX_REMEMBERED_PAIRS) this.last.delete(this.last.keys().next().value!);
    this.publisher.publish(fields);
    return true;
  }
}
