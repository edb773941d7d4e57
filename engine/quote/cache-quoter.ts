/**
 * A cache quote without the engine (tools and tests): the route the engine's cache path answers
 * (cache-route-search.ts), as GET /quote writes it.
 */
import type { PoolCache } from '../cache/index.js';
import { SwapMode } from '../dex/index.js';
import { CacheRouteSearch } from './cache-route-search.js';
import { quoteOfAnswer, QuoteSource, type Quote } from './quote-answer.js';
import { errorOfFailure } from './quote-failure.js';
import { routeFilterKey } from './route-filter.js';
import type { RouteFilter } from './quote-request.js';
import { DEFAULT_INTERMEDIATE_MINTS } from './route-search.js';
import { DEFAULT_SLIPPAGE_BPS, slippageOf } from './slippage.js';

/** What `quoteFromCache` may be told besides the pair and the amount. */
export interface CacheQuoteOptions {
  /** Default ExactIn. */
  mode?: SwapMode;
  /** Default DEFAULT_SLIPPAGE_BPS (50), GET /quote's default. */
  slippageBps?: number;
  /** Which pools and route shapes; default none (every DEX, two-hop routes allowed). */
  routeFilter?: RouteFilter;
  /** Intermediate tokens of two-hop routes; default DEFAULT_INTERMEDIATE_MINTS (wrapped SOL, USDC). */
  intermediateMints?: readonly string[];
}

/**
 * Quotes `amount` of `inputMint` for `outputMint` from `cache` (exact in unless told), as GET
 * /quote would answer it without the memo: the best route, direct or two-hop (cache-route-search.ts). For tools and tests: it allocates, and throws TpError
 * where the engine returns a failure value (NoPoolsInCache, NoValidQuotes).
 */
export function quoteFromCache(
  cache: PoolCache,
  inputMint: string,
  outputMint: string,
  amount: bigint,
  maxStateAgeMs: number = cache.stalenessThresholdMs,
  options: CacheQuoteOptions = {},
): Quote {
  const mode = options.mode ?? SwapMode.ExactIn;
  const search = new CacheRouteSearch(cache, options.intermediateMints ?? DEFAULT_INTERMEDIATE_MINTS);
  const found = search.search(inputMint, outputMint, amount, mode, maxStateAgeMs, routeFilterKey(options.routeFilter));
  if (!found.ok) throw errorOfFailure(found);
  const route = found.route;
  return quoteOfAnswer({
    ok: true,
    quote: route,
    source: QuoteSource.Cache,
    stateAgeMs: found.ageMs,
    contextSlot: cache.newestSlot,
    slippage: slippageOf(mode, route.inputAmount, route.outputAmount, options.slippageBps ?? DEFAULT_SLIPPAGE_BPS),
    body: undefined,
  });
}
