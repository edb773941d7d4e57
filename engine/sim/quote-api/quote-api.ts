import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

import { createLogger, type Logger } from '../../obs/index.js';
import type { FaultInjector } from '../faults.js';
import { sendJson } from '../http/http-io.js';
import type { RouteContext, RouteRegistry } from '../http/router.js';
import type { MarketView } from '../market-view.js';
import { QUOTE_API_PATHS } from './constants.js';
import { quoteApiError, isQuoteApiError, quoteErrorBody, type QuoteApiError, QuoteErrorCode, injectedFailure, parseQuoteParams, type QuoteErrorBody } from '../../swap-api/index.js';
import { buildQuoteResponse, type QuoteResponse } from './quote-response.js';
import { PoolGraph } from './pool-graph.js';
import { RouteSearch } from './route-search.js';

/**
 * The simulator's external-aggregator quote API: `GET /quote` in the shape of the widely used
 * public swap API (docs/wire-formats.md §7), routed over the simulator's own pools (up to 3 hops, no splits).
 * Served on `/quote`, `/swap/v1/quote` and `/v6/quote`, so a client configured with any of the
 * real base URLs' paths finds it. Faults (`faults.quoteApi`) add latency and fail requests.
 */

export interface QuoteApiOptions {
  market: MarketView;
  faults?: FaultInjector;
  logger?: Logger;
  /** Paths to serve (default QUOTE_API_PATHS). */
  paths?: readonly string[];
}

/** Seconds a client should wait after an injected 429 or 503. */
const RETRY_AFTER_SECONDS = '1';

export class QuoteApi {
  private readonly market: MarketView;
  private readonly faults: FaultInjector | undefined;
  private readonly log: Logger;
  private readonly graph: PoolGraph;
  private readonly search: RouteSearch;
  private readonly isKnownMint = (mint: string): boolean => this.market.token(mint) !== undefined;

  constructor(options: QuoteApiOptions) {
    this.market = options.market;
    this.faults = options.faults;
    this.log = options.logger ?? createLogger({ name: 'sim-quote-api' });
    this.graph = new PoolGraph(options.market);
    this.search = new RouteSearch(this.graph, this.log);
  }

  /** Adds `GET` routes for every path to the server. */
  mount(server: RouteRegistry, paths: readonly string[] = QUOTE_API_PATHS): this {
    for (const path of paths) server.route('GET', path, this.handle);
    return this;
  }

  /**
   * Answers one query, synchronously and without faults: the response body, or a thrown
   * QuoteApiError carrying the status and body the HTTP answer uses.
   */
  quote(query: URLSearchParams): QuoteResponse {
    const started = performance.now();
    const params = parseQuoteParams(query, this.isKnownMint);
    this.graph.sync();
    this.checkTradable(params.inputMint);
    this.checkTradable(params.outputMint);
    // The real API answers a zero amount with "no route".
    const route = params.amount === 0n ? undefined : this.search.best(params);
    if (route === undefined) throw quoteApiError(QuoteErrorCode.CouldNotFindAnyRoute, 'Could not find any route');
    return buildQuoteResponse(params, route, this.market.slot(), (performance.now() - started) / 1000);
  }

  /** The route handler (bound): faults first, then the quote. */
  readonly handle = async (_req: IncomingMessage, res: ServerResponse, ctx: RouteContext): Promise<void> => {
    const fault = this.faults?.quoteApi;
    if (fault !== undefined) {
      if (fault.latencyMs > 0) await sleep(fault.latencyMs);
      if (this.faults!.happens(fault.failRate)) {
        this.log.debug({ status: fault.failStatus }, 'quote API: injected failure');
        this.sendError(res, injectedFailure(fault.failStatus));
        return;
      }
    }
    let body: QuoteResponse;
    try {
      body = this.quote(ctx.url.searchParams);
    } catch (err) {
      if (isQuoteApiError(err)) {
        this.sendError(res, err);
        return;
      }
      this.log.error({ err, query: ctx.url.search }, 'quote API: quote failed');
      const internal: QuoteErrorBody = { error: 'Internal Server Error', errorCode: QuoteErrorCode.InternalServerError };
      sendJson(res, 500, internal);
      return;
    }
    sendJson(res, 200, body);
  };

  private checkTradable(mint: string): void {
    if (this.market.token(mint) !== undefined || this.graph.neighboursOf(mint).size > 0) return;
    throw quoteApiError(QuoteErrorCode.TokenNotTradable, `The token ${mint} is not tradable`);
  }

  private sendError(res: ServerResponse, err: QuoteApiError): void {
    const headers: OutgoingHttpHeaders = {};
    if (err.context.status === 429 || err.context.status === 503) headers['retry-after'] = RETRY_AFTER_SECONDS;
    sendJson(res, err.context.status, quoteErrorBody(err), headers);
  }
}

/**
 * Serves the quote API on the simulator's HTTP server (`GET /quote`, `/swap/v1/quote`,
 * `/v6/quote`). Returns the API, whose `quote()` answers in process too.
 */
export function mountQuoteApi(server: RouteRegistry, options: QuoteApiOptions): QuoteApi {
  return new QuoteApi(options).mount(server, options.paths);
}
