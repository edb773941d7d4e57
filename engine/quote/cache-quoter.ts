/**
 * The cache path of a quote (spec 02): the best fresh pool among all pools of the pair (exact in:
 * the largest output; exact out: the smallest input), quoted with the exact swap math on its
 * decoded pool and context. It reads the cache only through its read API (PoolCache.candidates and
 * the reads by id).
 */
import type { PairCandidates, PoolCache } from '../cache/index.js';
import { NO_ID } from '../cache/index.js';
import { SwapMode, quoteSwap, type SwapQuote } from '../dex/index.js';
import { CacheRouteSearch } from './cache-route-search.js';
import { ErrorCode } from '../errors.js';
import { quoteOfAnswer, QuoteSource, type Quote, type RouteQuote } from './quote-answer.js';
import { errorOfFailure, quoteFailure, type QuoteFailure } from './quote-failure.js';
import { routeFilterKey } from './route-filter.js';
import type { RouteFilter } from './quote-request.js';
import { betterSwap, DEFAULT_INTERMEDIATE_MINTS, sameSwap } from './route-search.js';
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

/** The winner of a cache quote: the pool id, its exact swap result and its state's age. */
export interface CacheBest {
  readonly ok: true;
  readonly id: number;
  readonly swap: SwapQuote;
  /** Age in ms of the winner's state at the candidates' clock reading. */
  readonly ageMs: number;
}

/**
 * Quotes `amount` of `inputMint` for `outputMint` from `cache` (exact in unless told), as GET
 * /quote would answer it without the memo: the best route, direct or two-hop (cache-route-search.ts). For tools and tests: it allocates, and throws TpError
 * where the engine returns a failure value (NoPoolsInCache, NoValidQuotes; see `bestOfCandidates`).
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

/** `bestOfCandidates` on the candidates of the pair read now, into `scratch` (a new one by default). */
export function bestFromCache(
  cache: PoolCache,
  inputMint: string,
  outputMint: string,
  amount: bigint,
  maxStateAgeMs: number = cache.stalenessThresholdMs,
  mode: SwapMode = SwapMode.ExactIn,
  scratch: PairCandidates = cache.newCandidates(),
): CacheBest | QuoteFailure {
  cache.candidates(cache.mintIdOf(inputMint), cache.mintIdOf(outputMint), maxStateAgeMs, scratch);
  return bestOfCandidates(cache, scratch, inputMint, outputMint, amount, mode);
}

export { betterSwap, sameSwap } from './route-search.js';

/**
 * The best pool among `candidates` (PoolCache.candidates of the pair, just read): each candidate
 * with a decoded pool quoted with the exact swap math on it and its context; the largest output
 * (exact in) or the smallest input (exact out) wins, on a tie the lower pool address. Records a cache hit on success and a miss on failure. Fails with
 * NoPoolsInCache 'no pools found in cache' when no cached pool trades the pair, and with
 * NoValidQuotes 'no valid quotes from cache' when every pool of it is stale, too old for the
 * request or refused by the swap math.
 */
export function bestOfCandidates(
  cache: PoolCache,
  candidates: PairCandidates,
  inputMint: string,
  outputMint: string,
  amount: bigint,
  mode: SwapMode,
): CacheBest | QuoteFailure {
  let bestId = NO_ID;
  let best: SwapQuote | undefined;
  for (let i = 0; i < candidates.count; i++) {
    const id = candidates.ids[i]!;
    const pool = cache.poolAt(id);
    if (pool === undefined) continue;
    let aToB: boolean;
    if (inputMint === pool.tokenA && outputMint === pool.tokenB) aToB = true;
    else if (inputMint === pool.tokenB && outputMint === pool.tokenA) aToB = false;
    else continue;
    const result = quoteSwap(pool, { aToB, mode, amount }, cache.contextAt(id), cache.transferFeesAt(id));
    if (!result.ok) continue;
    if (best === undefined || betterSwap(result, best, mode) || (sameSwap(result, best, mode) && cache.addressOf(id)! < cache.addressOf(bestId)!)) {
      best = result;
      bestId = id;
    }
  }
  if (best === undefined) {
    cache.recordMiss();
    if (candidates.total === 0) return quoteFailure(ErrorCode.NoPoolsInCache, 'no pools found in cache', { inputMint, outputMint });
    return quoteFailure(ErrorCode.NoValidQuotes, 'no valid quotes from cache', {
      inputMint,
      outputMint,
      pools: candidates.total,
      candidates: candidates.count,
    });
  }
  cache.recordHit();
  return { ok: true, id: bestId, swap: best, ageMs: cache.ageAt(bestId, candidates.now) };
}

/** The route of a cache answer: one hop through live pool `best.id`. */
export function routeOfBest(cache: PoolCache, inputMint: string, outputMint: string, best: CacheBest, mode: SwapMode): RouteQuote {
  const id = best.id;
  const swap = best.swap;
  const slot = cache.slotAt(id);
  return {
    mode,
    inputMint,
    outputMint,
    inputAmount: swap.amountIn,
    outputAmount: swap.amountOut,
    priceImpact: swap.priceImpact,
    slot,
    hops: [
      {
        pool: cache.addressOf(id)!,
        dex: cache.dexAt(id) ?? 'unknown',
        inputMint,
        outputMint,
        inAmount: swap.amountIn,
        outAmount: swap.amountOut,
        fee: swap.fee,
        feeMint: swap.feeInOutput === true ? outputMint : inputMint,
        slot,
      },
    ],
  };
}
