/**
 * The quote service's pool directory: the identity (address, dex, token A, token B) of every pool
 * it has known, kept after the cache evicts the pool's state. The RPC fallback takes its candidate
 * pools for a pair from here, so a stale or evicted pool can be read again from the chain.
 *
 * Fed by the update handler (every pool state update), by the RPC fallback (every pool it loads)
 * and by `syncFrom(cache)` (pools written to the cache by anyone else: the in-process scanner,
 * tests), which the service runs before each eviction tick and before each fallback. Bounded by
 * `maxPools`: past it the pool known the longest is forgotten first.
 */
import type { PoolCache } from '../cache/index.js';
import type { Dex } from '../dex/index.js';
import { invalidArgument } from '../errors.js';

export interface PoolIdentity {
  address: string;
  dex: Dex;
  tokenA: string;
  tokenB: string;
}

/** Pools remembered at most; 100 × the cache's default MaxPoolCount. */
export const DEFAULT_DIRECTORY_MAX_POOLS = 100_000;

function pairKey(x: string, y: string): string {
  return x < y ? `${x}:${y}` : `${y}:${x}`;
}

export class PoolDirectory {
  readonly maxPools: number;
  /** Insertion order = the order pools are forgotten in past `maxPools`. */
  private readonly byAddress = new Map<string, PoolIdentity>();
  private readonly byPair = new Map<string, Set<string>>();
  /** Pools per mint (reference counts). */
  private readonly mintPools = new Map<string, number>();

  constructor(options: { maxPools?: number } = {}) {
    const max = options.maxPools ?? DEFAULT_DIRECTORY_MAX_POOLS;
    if (!Number.isInteger(max) || max < 1) throw invalidArgument('maxPools', max, `maxPools must be a positive integer, got ${max}`);
    this.maxPools = max;
  }

  get size(): number {
    return this.byAddress.size;
  }

  /** Records `pool`; true when it was new or its identity changed. */
  add(pool: PoolIdentity): boolean {
    const known = this.byAddress.get(pool.address);
    if (known !== undefined) {
      if (known.dex === pool.dex && known.tokenA === pool.tokenA && known.tokenB === pool.tokenB) return false;
      this.remove(pool.address);
    } else if (this.byAddress.size >= this.maxPools) {
      const oldest = this.byAddress.keys().next().value;
      if (oldest !== undefined) this.remove(oldest);
    }
    const identity: PoolIdentity = { address: pool.address, dex: pool.dex, tokenA: pool.tokenA, tokenB: pool.tokenB };
    this.byAddress.set(pool.address, identity);
    const key = pairKey(pool.tokenA, pool.tokenB);
    let set = this.byPair.get(key);
    if (set === undefined) {
      set = new Set();
      this.byPair.set(key, set);
    }
    set.add(pool.address);
    this.mintPools.set(pool.tokenA, (this.mintPools.get(pool.tokenA) ?? 0) + 1);
    this.mintPools.set(pool.tokenB, (this.mintPools.get(pool.tokenB) ?? 0) + 1);
    return true;
  }

  get(address: string): PoolIdentity | undefined {
    return this.byAddress.get(address);
  }

  /** Every known pool address, oldest first; a fresh array (the split quote service's refresh list). */
  addresses(): string[] {
    return [...this.byAddress.keys()];
  }

  /** Addresses of the pools trading `x` against `y` (either order); a fresh array. */
  poolsForPair(x: string, y: string): string[] {
    const set = this.byPair.get(pairKey(x, y));
    return set === undefined ? [] : [...set];
  }

  /** True when some known pool trades `mint`. */
  hasMint(mint: string): boolean {
    return this.mintPools.has(mint);
  }

  /**
   * Records every pool the cache holds now (fresh or stale). Returns how many were new. A scan of
   * the cache: for the fallback path and timers, not for the cache-hit path.
   */
  syncFrom(cache: PoolCache): number {
    let added = 0;
    for (const address of cache.pools()) {
      const id = cache.idOf(address);
      const dex = cache.dexAt(id);
      const tokenA = cache.tokenAAt(id);
      const tokenB = cache.tokenBAt(id);
      if (dex === undefined || tokenA === undefined || tokenB === undefined) continue;
      if (this.add({ address, dex, tokenA, tokenB })) added++;
    }
    return added;
  }

  private remove(address: string): void {
    const known = this.byAddress.get(address);
    if (known === undefined) return;
    this.byAddress.delete(address);
    const key = pairKey(known.tokenA, known.tokenB);
    const set = this.byPair.get(key);
    set?.delete(address);
    if (set !== undefined && set.size === 0) this.byPair.delete(key);
    for (const mint of [known.tokenA, known.tokenB]) {
      const n = (this.mintPools.get(mint) ?? 1) - 1;
      if (n <= 0) this.mintPools.delete(mint);
      else this.mintPools.set(mint, n);
    }
  }
}
