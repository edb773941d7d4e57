/**
 * Which cache-path failures count against the circuit breaker (issue 11 item 2). The breaker
 * guards the cache as a dependency: it must open when the cache cannot serve anybody, never
 * because of what one request asked. Otherwise five quotes for more than a pair's liquidity open
 * it, and every other client is sent to RPC for the reset timeout.
 *
 * Counted (the engine records these itself): an unexpected exception in the cache path, an
 * attempt slower than CACHE_FIRST_TIMEOUT. Counted here: `TP_ERR_NO_VALID_QUOTES` when the pair
 * has pools but none is fresh, the request did not narrow the age (`maxStateAgeMs` below the
 * staleness threshold), and no pool of the whole cache is fresh: the feed behind the cache has
 * stopped. Never counted: every pool of the pair refused the amount (over-liquidity, exact out
 * beyond the reserves), a stale pair in a cache that is otherwise fresh (one quiet pool is not a
 * failing cache), a request's own age limit, an unknown token, a pair nobody trades, bad
 * parameters (refused before the engine).
 *
 * Whether any pool is fresh costs a walk of the cache (`PoolCache.stats`); it is read at most
 * every `recheckMs` of the cache's clock, and only on that failure path.
 */
import type { PoolCache } from '../cache/index.js';
import { ErrorCode } from '../errors.js';
import type { QuoteFailure } from './quote-failure.js';

export const DEFAULT_FRESHNESS_RECHECK_MS = 250;

export class BreakerPolicy {
  private checkedAt = -Infinity;
  private anyFresh = true;

  constructor(
    private readonly cache: PoolCache,
    private readonly recheckMs = DEFAULT_FRESHNESS_RECHECK_MS,
  ) {}

  /** True when `failure` of the cache path, for a request with `maxStateAgeMs`, is the cache's own. */
  countsAsCacheFailure(failure: QuoteFailure, maxStateAgeMs: number | undefined): boolean {
    if (failure.code !== ErrorCode.NoValidQuotes) return false;
    const context = failure.context as { candidates?: number; pools?: number } | undefined;
    // Fresh candidates that all refused the amount: the request's doing.
    if (context?.candidates !== undefined && context.candidates > 0) return false;
    if (maxStateAgeMs !== undefined && maxStateAgeMs < this.cache.stalenessThresholdMs) return false;
    return !this.cacheHasFreshPool();
  }

  private cacheHasFreshPool(): boolean {
    const now = this.cache.nowMs(); // the cache's clock: the one its freshness is read on
    if (now - this.checkedAt >= this.recheckMs || now < this.checkedAt) {
      this.checkedAt = now;
      this.anyFresh = this.cache.stats().freshPools > 0;
    }
    return this.anyFresh;
  }
}
