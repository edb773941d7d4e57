/**
 * The RPC fallback of a quote (spec 02 hybrid mode): the candidate pools of the pair come from the
 * pool directory, their state is read fresh through a `PoolLoader` (Solana JSON-RPC), and the same
 * `quoteSwap` the cache path uses picks the best (largest output) pool. The loaded states are
 * written back into the cache under the slot rule, so the next quote of the pair hits the cache.
 */
import { performance } from 'node:perf_hooks';

import type { PoolCache, PoolStateUpdate } from '../cache/index.js';
import { SwapMode, quoteSwap, type DecodedPool, type SwapQuote } from '../dex/index.js';
import { ErrorCode, isTpError } from '../errors.js';
import type { Logger } from '../obs/index.js';
import type { LoadedPool, PoolLoadFailure, PoolLoadResult, PoolLoader } from '../pools/index.js';
import { betterSwap, sameSwap } from './cache-quoter.js';
import type { RouteQuote } from './quote-answer.js';
import { quoteFailure, type QuoteFailure } from './quote-failure.js';
import type { PoolDirectory } from './pool-directory.js';

/** A route priced on state read from RPC now. */
export interface RpcQuote {
  readonly ok: true;
  readonly route: RouteQuote;
  /** The newest slot seen: the cache's, or the RPC context slot when newer. */
  readonly contextSlot: bigint;
}

export interface RpcQuoterOptions {
  loader: PoolLoader;
  directory: PoolDirectory;
  /** Where loaded states are written back; undefined when the cache is disabled (RPC only). */
  cache: PoolCache | undefined;
  /** Default deadline of one fallback, in ms. */
  deadlineMs: number;
  logger?: Logger;
  /**
   * Least time between two directory syncs from the cache on the fallback path (a sync scans the
   * cache; unknown-token requests must not buy one each). Default 250 ms.
   */
  syncIntervalMs?: number;
}

export const DEFAULT_DIRECTORY_SYNC_INTERVAL_MS = 250;

/** Reserves of a loaded pool: the loader's when it read them, else the AMM account's, else 0 / 0. */
function reservesOf(loaded: LoadedPool): readonly [bigint, bigint] {
  if (loaded.reserves !== undefined) return loaded.reserves;
  const pool: DecodedPool = loaded.pool;
  return pool.dex === 'dexa_amm' ? [pool.reserveA, pool.reserveB] : [0n, 0n];
}

/** The cache update of a pool read from RPC (its slot is the RPC context slot). */
export function updateOfLoadedPool(loaded: LoadedPool): PoolStateUpdate {
  const [reserveA, reserveB] = reservesOf(loaded);
  const update: PoolStateUpdate = {
    address: loaded.address,
    dex: loaded.dex,
    tokenA: loaded.pool.tokenA,
    tokenB: loaded.pool.tokenB,
    reserveA,
    reserveB,
    slot: loaded.slot,
    pool: loaded.pool,
  };
  if (loaded.context !== undefined) update.context = loaded.context;
  return update;
}

export class RpcQuoter {
  readonly deadlineMs: number;
  private readonly loader: PoolLoader;
  private readonly directory: PoolDirectory;
  private readonly cache: PoolCache | undefined;
  private readonly log: Logger | undefined;
  private readonly syncIntervalMs: number;
  private lastSync = -Infinity;

  constructor(options: RpcQuoterOptions) {
    this.syncIntervalMs = options.syncIntervalMs ?? DEFAULT_DIRECTORY_SYNC_INTERVAL_MS;
    this.loader = options.loader;
    this.directory = options.directory;
    this.cache = options.cache;
    this.deadlineMs = options.deadlineMs;
    this.log = options.logger;
  }

  /**
   * Quotes `amount` of `input` for `output` (`mode`: exact in or exact out) from state read now
   * through the loader, choosing the pool as the cache path does (cache-quoter.ts).
   * Never rejects; fails with UnknownMint / NoPoolForPair (404) when the directory knows no pool
   * for them; Deadline when the loader has not answered within `deadlineMs`; RpcFallbackFailed when
   * no candidate could be read (the loader's error in the message); NoValidQuotes when every pool
   * read refuses the swap.
   */
  async quote(input: string, output: string, amount: bigint, mode: SwapMode = SwapMode.ExactIn, deadlineMs = this.deadlineMs): Promise<RpcQuote | QuoteFailure> {
    if (this.cache !== undefined && performance.now() - this.lastSync >= this.syncIntervalMs) {
      this.lastSync = performance.now();
      this.directory.syncFrom(this.cache);
    }
    const candidates = this.directory.poolsForPair(input, output);
    if (candidates.length === 0) {
      for (const mint of [input, output]) {
        if (!this.directory.hasMint(mint)) return quoteFailure(ErrorCode.UnknownMint, `unknown token ${mint}`, { mint });
      }
      return quoteFailure(ErrorCode.NoPoolForPair, 'no pool for the pair', { inputMint: input, outputMint: output });
    }

    const results = await this.loadWithin(candidates, deadlineMs);
    if (results === undefined) {
      return quoteFailure(ErrorCode.Deadline, `no RPC answer within the ${deadlineMs} ms deadline`, { deadlineMs });
    }
    let best: SwapQuote | undefined;
    let bestPool: LoadedPool | undefined;
    let newest = 0n;
    let loadedAny = false;
    let firstFailure: PoolLoadFailure | undefined;
    for (const r of results) {
      if (!r.ok) {
        firstFailure ??= r.error;
        continue;
      }
      const loaded = r.value;
      loadedAny = true;
      this.remember(loaded);
      if (loaded.slot > newest) newest = loaded.slot;
      const pool = loaded.pool;
      let aToB: boolean;
      if (input === pool.tokenA && output === pool.tokenB) aToB = true;
      else if (input === pool.tokenB && output === pool.tokenA) aToB = false;
      else continue; // the pool's mints changed since the directory learned them
      const req = { aToB, mode, amount };
      const result = loaded.context === undefined ? quoteSwap(pool, req) : quoteSwap(pool, req, loaded.context);
      if (!result.ok) continue;
      // Ties go to the lower pool address, as on the cache path.
      if (best === undefined || bestPool === undefined || betterSwap(result, best, mode) || (sameSwap(result, best, mode) && loaded.address < bestPool.address)) {
        best = result;
        bestPool = loaded;
      }
    }
    if (best === undefined || bestPool === undefined) {
      if (loadedAny) {
        return quoteFailure(ErrorCode.NoValidQuotes, 'no valid quotes from RPC', { inputMint: input, outputMint: output, candidates: candidates.length });
      }
      const why = firstFailure === undefined ? 'no answer' : `${firstFailure.reason}: ${firstFailure.message}`;
      return quoteFailure(ErrorCode.RpcFallbackFailed, `RPC fallback failed: ${why}`, {
        inputMint: input,
        outputMint: output,
        failures: results.filter((r) => !r.ok).length,
      });
    }
    const cacheSlot = this.cache?.newestSlot ?? 0n;
    const slot = bestPool.slot;
    return {
      ok: true,
      route: {
        mode,
        inputMint: input,
        outputMint: output,
        inputAmount: best.amountIn,
        outputAmount: best.amountOut,
        priceImpact: best.priceImpact,
        slot,
        hops: [
          {
            pool: bestPool.address,
            dex: bestPool.dex,
            inputMint: input,
            outputMint: output,
            inAmount: best.amountIn,
            outAmount: best.amountOut,
            fee: best.fee,
            feeMint: best.feeInOutput === true ? output : input,
            slot,
          },
        ],
      },
      contextSlot: cacheSlot > newest ? cacheSlot : newest,
    };
  }

  /**
   * `loader.load` raced against the deadline: undefined past it. A load that loses the race is not
   * cancelled (the loader's own RPC timeout bounds it); when it lands, its states are still written back.
   */
  private loadWithin(addresses: readonly string[], deadlineMs: number): Promise<PoolLoadResult[] | undefined> {
    const load = this.loader.load(addresses).catch((err: unknown): PoolLoadResult[] => {
      // A loader that rejects (instead of answering per pool) failed as a whole.
      const message = isTpError(err) || err instanceof Error ? err.message : String(err);
      return addresses.map((address) => ({ ok: false, error: { address, reason: 'rpc', message } }));
    });
    return new Promise((resolve) => {
      let settled = false;
      const timer = setTimeout(() => {
        settled = true;
        resolve(undefined);
        // Late answers still refresh the cache.
        void load.then((late) => {
          for (const r of late) if (r.ok) this.remember(r.value);
        });
      }, deadlineMs);
      void load.then((results) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(results);
      });
    });
  }

  /** Directory and cache write-back (slot rule) of one loaded pool. */
  private remember(loaded: LoadedPool): void {
    this.directory.add({ address: loaded.address, dex: loaded.dex, tokenA: loaded.pool.tokenA, tokenB: loaded.pool.tokenB });
    if (this.cache === undefined) return;
    try {
      this.cache.upsert(updateOfLoadedPool(loaded));
    } catch (err) {
      this.log?.warn({ err, pool: loaded.address }, 'RPC state not written to the cache');
    }
  }
}
