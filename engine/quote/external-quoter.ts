/**
 * The last fallback of a quote: an external aggregator's quote API (spec 03: "quote failures fall
 * back to an external aggregator"), asked when neither the cache nor the RPC fallback could answer.
 *
 * The engine only knows this interface. The client of the aggregator's `GET /quote` (Jupiter Swap
 * API shape) lives in engine/external, a layer above this one, which implements it
 * (`ProviderFallbackQuoter`); the application wires it in through `QuoteServiceDeps.external`.
 */
import type { RouteQuote } from './quote-answer.js';
import type { QuoteFailure } from './quote-failure.js';
import type { QuoteRequest } from './quote-request.js';

/** A route the external aggregator priced. */
export interface ExternalRoute {
  readonly ok: true;
  /** Hops as the aggregator reported them (its pool keys, DEX labels, amounts and fees). */
  readonly route: RouteQuote;
  /** The aggregator's context slot; 0 when it does not say. */
  readonly contextSlot: bigint;
}

export interface ExternalQuoter {
  /**
   * Quotes `request` (its mode, amount and route filter passed on) within the quoter's own
   * deadline. Never rejects: a failure is a value (TP_ERR_EXTERNAL_* codes).
   */
  quote(request: QuoteRequest): Promise<ExternalRoute | QuoteFailure>;
  /** Closes the connections. */
  close(): Promise<void>;
}
