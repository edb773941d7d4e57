/**
 * The cache path of a quote (spec 02): the best (largest output) fresh pool among all pools of the
 * pair, quoted with the exact swap math on its decoded pool and context.
 */
import type { PoolCache } from '../cache/index.js';
import { NO_ID, dexOf } from '../cache/index.js';
import { SwapMode, quoteSwap, type SwapQuote } from '../dex/index.js';
import { ErrorCode } from '../errors.js';
import { quoteOfAnswer, QuoteSource, type Quote, type RouteQuote } from './quote-answer.js';
import { errorOfFailure, quoteFailure, type QuoteFailure } from './quote-failure.js';

/** The winner of a cache quote: the pool id and its exact swap result. */
export interface CacheBest {
  readonly ok: true;
  readonly id: number;
  readonly swap: SwapQuote;
}

/**
 * Quotes `amount` (exact in) of `inputMint` for `outputMint` from `cache`, as GET /quote would
 * answer it without the memo. For tools and tests: it throws TpError where the engine returns a
 * failure value (NoPoolsInCache, NoValidQuotes; see `bestFromCache`).
 */
export function quoteFromCache(
  cache: PoolCache,
  inputMint: string,
  outputMint: string,
  amount: bigint,
  maxStateAgeMs: number = cache.stalenessThresholdMs,
): Quote {
  const best = bestFromCache(cache, inputMint, outputMint, amount, maxStateAgeMs);
  if (!best.ok) throw errorOfFailure(best);
  const address = cache.addressOf(best.id)!;
  return quoteOfAnswer({
    ok: true,
    quote: routeOfBest(cache, inputMint, outputMint, best),
    source: QuoteSource.Cache,
    stateAgeMs: cache.ageMs(address)!,
    contextSlot: cache.newestSlot,
    body: undefined,
  });
}

/**
 * The best pool of the pair and its swap result. Candidates are the fresh pools of the pair whose
 * state is at most `maxStateAgeMs` old and that carry a decoded pool; the one with the largest
 * output wins (on a tie, the lower pool address). Records a hit on success and a miss on failure.
 * Fails with NoPoolsInCache 'no pools found in cache' when no pool of the pair is cached, and with
 * NoValidQuotes 'no valid quotes from cache' when every candidate is stale, too old or refused by
 * the swap math.
 */
export function bestFromCache(
  cache: PoolCache,
  inputMint: string,
  outputMint: string,
  amount: bigint,
  maxStateAgeMs: number = cache.stalenessThresholdMs,
): CacheBest | QuoteFailure {
  const pair = cache.poolsForPair(inputMint, outputMint);
  let bestId = NO_ID;
  let best: SwapQuote | undefined;
  for (let i = 0; i < pair.count; i++) {
    const id = pair.ids[i]!;
    const pool = cache.decodedPools[id];
    if (pool === undefined) continue;
    const address = cache.addressOf(id)!;
    const age = cache.ageMs(address)!;
    if (age > maxStateAgeMs) continue;
    let aToB: boolean;
    if (inputMint === pool.tokenA && outputMint === pool.tokenB) aToB = true;
    else if (inputMint === pool.tokenB && outputMint === pool.tokenA) aToB = false;
    else continue;
    const ctx = cache.contexts[id];
    const result = ctx === undefined
      ? quoteSwap(pool, { aToB, mode: SwapMode.ExactIn, amount })
      : quoteSwap(pool, { aToB, mode: SwapMode.ExactIn, amount }, ctx);
    if (!result.ok) continue;
    // Ties go to the lower pool address, as on the RPC path: one answer per state, whatever the source.
    if (
      best === undefined ||
      result.amountOut > best.amountOut ||
      (result.amountOut === best.amountOut && cache.addressOf(id)! < cache.addressOf(bestId)!)
    ) {
      best = result;
      bestId = id;
    }
  }
  if (best === undefined || bestId === NO_ID) {
    cache.recordMiss();
    if (pair.count === 0 && !hasPairEntry(cache, inputMint, outputMint)) {
      return quoteFailure(ErrorCode.NoPoolsInCache, 'no pools found in cache', { inputMint, outputMint });
    }
    return quoteFailure(ErrorCode.NoValidQuotes, 'no valid quotes from cache', { inputMint, outputMint, candidates: pair.count, maxStateAgeMs });
  }
  cache.recordHit();
  return { ok: true, id: bestId, swap: best };
}

/** The route of a cache answer: one hop through live pool `best.id`. */
export function routeOfBest(cache: PoolCache, inputMint: string, outputMint: string, best: CacheBest): RouteQuote {
  const id = best.id;
  const swap = best.swap;
  const slot = cache.slot[id]!;
  return {
    inputMint,
    outputMint,
    inputAmount: swap.amountIn,
    outputAmount: swap.amountOut,
    priceImpact: swap.priceImpact,
    slot,
    hops: [
      {
        pool: cache.addressOf(id)!,
        dex: dexOf(cache.dex[id]!) ?? 'unknown',
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

/**
 * True when some cached entry (fresh or stale) trades the pair. Only on the miss path: a scan of
 * the cache, to tell 'no pools' from 'none fresh'.
 */
function hasPairEntry(cache: PoolCache, mintX: string, mintY: string): boolean {
  const x = cache.mintIdOf(mintX);
  const y = cache.mintIdOf(mintY);
  if (x === NO_ID || y === NO_ID) return false;
  for (const address of cache.pools()) {
    const id = cache.idOf(address);
    const a = cache.tokenA[id]!;
    const b = cache.tokenB[id]!;
    if ((a === x && b === y) || (a === y && b === x)) return true;
  }
  return false;
}
