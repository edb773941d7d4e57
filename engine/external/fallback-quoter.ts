/**
 * The quote engine's last fallback (engine/quote `ExternalQuoter`) over the external aggregator's
 * `GET /quote` (Jupiter Swap API shape; the simulator's by default): one ProviderClient call per
 * quote, with the request's swap mode and route filter, its answer turned into a RouteQuote.
 *
 * - Route filter: engine DEX names in `dexes` / `excludeDexes` are sent as the aggregator's DEX
 *   labels (`dexa_amm` → `Raydium`, ...; other names as given); `onlyDirectRoutes` as is.
 * - Hops: `ammKey` is the pool, the label is mapped back to the engine's DEX name when it is one of
 *   ours (else kept), `feeAmount` / `feeMint` as reported (0 in the input mint when absent), the
 *   slot the aggregator's `contextSlot`.
 * - Failures are values with the TP_ERR_EXTERNAL_* codes (a timeout is TP_ERR_DEADLINE).
 */
import { ErrorCode } from '../errors.js';
import { quoteFailure, type ExternalQuoter, type ExternalRoute, type QuoteFailure, type QuoteRequest, type RouteHop } from '../quote/index.js';
import { PollOutcomeKind, ProviderClient, type PollOutcome, type PollRequest } from './provider-client.js';
import type { ProviderQuote } from './provider-response.js';

/** The aggregator's label of each engine DEX (Jupiter's names, which the simulator uses too). */
export const DEX_LABELS: Readonly<Record<string, string>> = Object.freeze({
  dexa_amm: 'Raydium',
  dexa_clmm: 'Raydium CLMM',
  dexb_dlmm: 'Meteora DLMM',
  dexc_whirlpool: 'Whirlpool',
});
const DEX_OF_LABEL: ReadonlyMap<string, string> = new Map(Object.entries(DEX_LABELS).map(([dex, label]) => [label.toLowerCase(), dex]));

export interface ProviderFallbackQuoterOptions {
  /** The aggregator's GET /quote URL. */
  quoteUrl: string;
  /** Deadline of one call, connect to last byte. */
  timeoutMs: number;
  /** Sent as x-api-key when not empty. */
  apiKey?: string;
}

function labelsOf(dexes: ReadonlySet<string> | undefined): string[] | undefined {
  return dexes === undefined ? undefined : [...dexes].map((dex) => DEX_LABELS[dex] ?? dex);
}

/** The RouteQuote of an aggregator's answer. */
export function routeOfProviderQuote(request: QuoteRequest, quote: ProviderQuote): ExternalRoute {
  const slot = quote.contextSlot;
  const hops: RouteHop[] = quote.hops.map((hop) => ({
    pool: hop.ammKey,
    dex: DEX_OF_LABEL.get(hop.label.toLowerCase()) ?? hop.label,
    inputMint: hop.inputMint,
    outputMint: hop.outputMint,
    inAmount: hop.inAmount,
    outAmount: hop.outAmount,
    fee: hop.feeAmount ?? 0n,
    feeMint: hop.feeMint ?? hop.inputMint,
    slot,
  }));
  return {
    ok: true,
    route: {
      mode: request.mode,
      inputMint: quote.inputMint,
      outputMint: quote.outputMint,
      inputAmount: quote.inAmount,
      outputAmount: quote.outAmount,
      priceImpact: quote.priceImpact,
      hops,
      slot,
    },
    contextSlot: slot,
  };
}

/** The failure of a poll that gave no quote; a timeout names the deadline of the call (`timeoutMs`). */
function failureOf(outcome: Exclude<PollOutcome, { kind: typeof PollOutcomeKind.Ok }>, timeoutMs: number): QuoteFailure {
  const context = { outcome: outcome.kind };
  switch (outcome.kind) {
    case PollOutcomeKind.NoRoute:
      return quoteFailure(ErrorCode.ExternalNoRoute, `external aggregator: no route (${outcome.message})`, context);
    case PollOutcomeKind.Timeout:
      return quoteFailure(ErrorCode.Deadline, `external aggregator: ${outcome.message}`, { deadlineMs: timeoutMs });
    case PollOutcomeKind.ConnectionError:
      return quoteFailure(ErrorCode.ExternalUnreachable, `external aggregator: ${outcome.message}`, context);
    case PollOutcomeKind.ServerError:
      return quoteFailure(ErrorCode.ExternalServerError, `external aggregator: ${outcome.message}`, context);
    case PollOutcomeKind.Malformed:
      return quoteFailure(ErrorCode.ExternalMalformed, `external aggregator: ${outcome.message}`, context);
    default:
      return quoteFailure(ErrorCode.ExternalRejected, `external aggregator: ${outcome.message}`, context);
  }
}

export class ProviderFallbackQuoter implements ExternalQuoter {
  private readonly client: ProviderClient;
  private readonly timeoutMs: number;

  constructor(options: ProviderFallbackQuoterOptions) {
    this.timeoutMs = options.timeoutMs;
    this.client = new ProviderClient({ quoteUrl: options.quoteUrl, timeoutMs: options.timeoutMs, ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }) });
  }

  /** Requests sent so far. */
  get requests(): number {
    return this.client.requests;
  }

  async quote(request: QuoteRequest): Promise<ExternalRoute | QuoteFailure> {
    const filter = request.routeFilter;
    const poll: PollRequest = {
      inputMint: request.inputMint,
      outputMint: request.outputMint,
      amount: request.amount,
      slippageBps: request.slippageBps,
      swapMode: request.mode,
    };
    if (filter !== undefined) {
      if (filter.onlyDirectRoutes) poll.onlyDirectRoutes = true;
      const dexes = labelsOf(filter.dexes);
      if (dexes !== undefined) poll.dexes = dexes;
      const excluded = labelsOf(filter.excludeDexes);
      if (excluded !== undefined) poll.excludeDexes = excluded;
    }
    const outcome = await this.client.fetchQuote(poll);
    if (outcome.kind !== PollOutcomeKind.Ok) return failureOf(outcome, this.timeoutMs);
    return routeOfProviderQuote(request, outcome.quote);
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
