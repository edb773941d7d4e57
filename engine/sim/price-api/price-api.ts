import type { IncomingMessage, ServerResponse } from 'node:http';

import { HttpError, HttpErrorCode, sendJson } from '../http/http-io.js';
import type { RouteContext, RouteRegistry } from '../http/router.js';
import type { MarketView } from '../market-view.js';

/**
 * The simulator's price API: the reference prices of the simulated market (engine/sim/oracle.ts,
 * served through the chain's MarketView) in the shape of the public Price API v3 (README.md says
 * what was verified of the real one), so the aggregator's oracle client (engine/aggregator/
 * oracle-prices.ts) reads the simulator and the real service alike.
 *
 *   GET /price/v3?ids=<mint>,<mint>
 *   200 {"<mint>": {"usdPrice": 147.48, "blockId": 348004023, "decimals": 9, "priceChange24h": null}}
 *
 * Unknown mints are omitted (the real API omits tokens it has no reliable price for); a missing or
 * empty `ids` and more than 50 distinct ids are 400 with the simulator's error body
 * `{"error":{"code","message"}}` (docs/architecture.md §3).
 */

/** Paths served: the real API's path. */
export const PRICE_API_PATHS: readonly string[] = Object.freeze(['/price/v3']);
/** The real API's limit of ids per request. */
export const MAX_PRICE_IDS = 50;

/** One token's entry in a v3 answer. */
export interface PriceEntry {
  /** USD per whole token. */
  usdPrice: number;
  /** The slot the price belongs to. */
  blockId: number;
  decimals: number;
  /**
   * Percent change over 24 h. Always null here: the simulator keeps no price history (the real API
   * also sends null for tokens without one).
   */
  priceChange24h: number | null;
}

export type PriceResponse = Record<string, PriceEntry>;

export interface PriceApiOptions {
  market: Pick<MarketView, 'token' | 'slot'>;
  /** Paths to serve (default PRICE_API_PATHS). */
  paths?: readonly string[];
}

/** The distinct mints of an `ids` value, in first-seen order; throws a 400 HttpError when invalid. */
export function parsePriceIds(value: string | null): string[] {
  const ids = [...new Set((value ?? '').split(',').map((s) => s.trim()).filter((s) => s.length > 0))];
  if (ids.length === 0) throw new HttpError(400, HttpErrorCode.InvalidParameter, 'ids: missing (comma-separated mint addresses)');
  if (ids.length > MAX_PRICE_IDS) {
    throw new HttpError(400, HttpErrorCode.InvalidParameter, `ids: at most ${MAX_PRICE_IDS} per request, got ${ids.length}`);
  }
  return ids;
}

export class PriceApi {
  private readonly market: Pick<MarketView, 'token' | 'slot'>;

  constructor(options: PriceApiOptions) {
    this.market = options.market;
  }

  mount(server: RouteRegistry, paths: readonly string[] = PRICE_API_PATHS): this {
    for (const path of paths) server.route('GET', path, this.handle);
    return this;
  }

  /** The answer for these mints, at the market's current slot. */
  prices(ids: readonly string[]): PriceResponse {
    const blockId = Number(this.market.slot());
    const body: PriceResponse = {};
    for (const mint of ids) {
      const token = this.market.token(mint);
      if (token === undefined || !Number.isFinite(token.referencePriceUsd)) continue;
      body[mint] = { usdPrice: token.referencePriceUsd, blockId, decimals: token.decimals, priceChange24h: null };
    }
    return body;
  }

  /** The route handler (bound). Parameter errors are thrown as HttpError for the server to answer. */
  readonly handle = (_req: IncomingMessage, res: ServerResponse, ctx: RouteContext): void => {
    sendJson(res, 200, this.prices(parsePriceIds(ctx.url.searchParams.get('ids'))));
  };
}

/** Serves the price API on the simulator's HTTP server (`GET /price/v3`). */
export function mountPriceApi(server: RouteRegistry, options: PriceApiOptions): PriceApi {
  return new PriceApi(options).mount(server, options.paths);
}
