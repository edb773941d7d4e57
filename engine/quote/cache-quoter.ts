/**
 * The cache path of a quote (spec 02): the best (largest output) fresh pool among all pools of the
 * pair, quoted with the exact swap math on its decoded pool and context.
 */
import type { PoolCache } from '../cache/index.js';
import { NO_ID, dexOf } from '../cache/index.js';
import { SwapMode, quoteSwap, type SwapQuote } from '../dex/index.js';
import { QuoteErrorCode, quoteError } from './errors.js';

export interface RouteHop {
  pool: string;
  dex: string;
  inputMint: string;
  outputMint: string;
  inAmount: bigint;
  outAmount: bigint;
  fee: bigint;
}

export interface Quote {
  inputMint: string;
  outputMint: string;
  inputAmount: bigint;
  outputAmount: bigint;
  pool: string;
  dex: string;
  priceImpact: number;
  fee: bigint;
  /** Slot of the pool state used. */
  slot: bigint;
  /** Age of that state in ms. */
  stateAgeMs: number;
  /** The newest slot the cache has seen. */
  contextSlot: bigint;
  source: 'cache' | 'rpc';
  route: RouteHop[];
}

/** The winner of a cache quote: the pool id and its exact swap result. */
export interface CacheBest {
  id: number;
  swap: SwapQuote;
}

/**
 * Quotes `amount` (exact in) of `inputMint` for `outputMint` from `cache`. Candidates are the fresh
 * pools of the pair whose state is at most `maxStateAgeMs` old and that carry a decoded pool; the
 * one with the largest output wins (on a tie, the lower pool address). Records a hit on success and a miss on failure.
 * Throws TpError(NoPoolsInCache) 'no pools found in cache' when no pool of the pair is cached, and
 * TpError(NoValidQuotes) 'no valid quotes from cache' when every candidate is stale, too old or
 * refused by the swap math.
 */
export function quoteFromCache(
  cache: PoolCache,
  inputMint: string,
  outputMint: string,
  amount: bigint,
  maxStateAgeMs: number = cache.stalenessThresholdMs,
): Quote {
  const best = bestFromCache(cache, inputMint, outputMint, amount, maxStateAgeMs);
  const address = cache.addressOf(best.id)!;
  return cacheQuoteOf(cache, inputMint, outputMint, best, cache.ageMs(address)!);
}

/**
 * The selection of `quoteFromCache` without building the Quote: the best pool and its swap result.
 * Same candidates, same tie rule, same hit / miss accounting, same errors.
 */
export function bestFromCache(
  cache: PoolCache,
  inputMint: string,
  outputMint: string,
  amount: bigint,
  maxStateAgeMs: number = cache.stalenessThresholdMs,
): CacheBest {
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
      throw quoteError(QuoteErrorCode.NoPoolsInCache, 'no pools found in cache', {
        context: { inputMint, outputMint },
      });
    }
    throw quoteError(QuoteErrorCode.NoValidQuotes, 'no valid quotes from cache', {
      context: { inputMint, outputMint, candidates: pair.count, maxStateAgeMs },
    });
  }
  cache.recordHit();
  return { id: bestId, swap: best };
}

/** The Quote of a cache answer: `best` of live pool `best.id`, with its age and the cache's context slot. */
export function cacheQuoteOf(cache: PoolCache, inputMint: string, outputMint: string, best: CacheBest, stateAgeMs: number): Quote {
  const id = best.id;
  const swap = best.swap;
  const address = cache.addressOf(id)!;
  const dex: string = dexOf(cache.dex[id]!) ?? 'unknown';
  return {
    inputMint,
    outputMint,
    inputAmount: swap.amountIn,
    outputAmount: swap.amountOut,
    pool: address,
    dex,
    priceImpact: swap.priceImpact,
    fee: swap.fee,
    slot: cache.slot[id]!,
    stateAgeMs,
    contextSlot: cache.newestSlot,
    source: 'cache',
    route: [{ pool: address, dex, inputMint, outputMint, inAmount: swap.amountIn, outAmount: swap.amountOut, fee: swap.fee }],
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
