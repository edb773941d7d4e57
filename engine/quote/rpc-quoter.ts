/**
 * The RPC fallback of a quote (spec 02 hybrid mode): the candidate pools of the pair come from the
 * pool directory, their state is read fresh through a `PoolLoader` (Solana JSON-RPC), and the same
 * route search the cache path uses (route-search.ts: direct or two-hop, exact swap math) picks the route. The loaded states are
 * written back into the cache under the slot rule, so the next quote of the pair hits the cache.
 */
import { performance } from 'node:perf_hooks';

import type { PoolCache, PoolStateUpdate } from '../cache/index.js';
import { SwapMode, quoteSwap, type DecodedPool, type SwapQuote } from '../dex/index.js';
import { ErrorCode, isTpError, TpError } from '../errors.js';
import type { Logger } from '../obs/index.js';
import type { LoadedPool, PoolLoadFailure, PoolLoadResult, PoolLoader } from '../pools/index.js';
// The RPC client's abort helper alone: a cache-only engine (no loader) does not load the RPC client.
import { abortable } from '../rpc/abortable.js';
import type { RouteQuote } from './quote-answer.js';
import type { RouteFilter } from './quote-request.js';
import { allowsDex, allowsMultiHop, routeFilterKey } from './route-filter.js';
import { betterSwap, chooseRoute, DEFAULT_INTERMEDIATE_MINTS, routeQuoteOf, sameSwap, type HopChoice, type HopFinder } from './route-search.js';
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
  /** Intermediate tokens of two-hop routes; default DEFAULT_INTERMEDIATE_MINTS (wrapped SOL, USDC). */
  intermediateMints?: readonly string[];
}

export const DEFAULT_DIRECTORY_SYNC_INTERVAL_MS = 250;

/** Reserves of a loaded pool: the loader's when it read them, else the AMM account's, else 0 / 0. */
function reservesOf(loaded: LoadedPool): readonly [bigint, bigint] {
  if (loaded.reserves !== undefined) return loaded.reserves;
  const pool: DecodedPool = loaded.pool;
  return pool.dex === 'dexa_amm' ? [pool.reserveA, pool.reserveB] : [0n, 0n];
}

/** The cache update of a pool read from RPC (its slot is the RPC context slot), its mints' transfer fees included. */
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
  if (loaded.transferFees !== undefined) update.transferFees = loaded.transferFees;
  return update;
}

/** NoPoolForPair's message when the directory knows pools of the route but the filter refuses them all. */
export const FILTERED_OUT_RPC_MESSAGE = 'no route: no pool of the pair passes the route filter (dexes / excludeDexes)';

/**
 * HopFinder over pools just read: the best pool of a leg among those loaded for that pair (ties to
 * the lower address, as on the cache path), quoted with the pool's transfer fees when read.
 */
class LoadedHopFinder implements HopFinder<LoadedPool> {
  /** Pools loaded. */
  loaded = 0;
  private readonly byPair = new Map<string, LoadedPool[]>();

  constructor(private readonly filterKey: number) {}

  add(loaded: LoadedPool): void {
    this.loaded++;
    const key = pairKey(loaded.pool.tokenA, loaded.pool.tokenB);
    const list = this.byPair.get(key);
    if (list === undefined) this.byPair.set(key, [loaded]);
    else if (!list.some((p) => p.address === loaded.address)) list.push(loaded);
  }

  best(input: string, output: string, amount: bigint, mode: SwapMode): HopChoice<LoadedPool> | undefined {
    let best: SwapQuote | undefined;
    let bestPool: LoadedPool | undefined;
    for (const loaded of this.byPair.get(pairKey(input, output)) ?? []) {
      if (!allowsDex(this.filterKey, loaded.dex)) continue;
      const pool = loaded.pool;
      let aToB: boolean;
      if (input === pool.tokenA && output === pool.tokenB) aToB = true;
      else if (input === pool.tokenB && output === pool.tokenA) aToB = false;
      else continue; // the pool's mints changed since the directory learned them
      const result = quoteSwap(pool, { aToB, mode, amount }, loaded.context, loaded.transferFees);
      if (!result.ok) continue;
      if (best === undefined || bestPool === undefined || betterSwap(result, best, mode) || (sameSwap(result, best, mode) && loaded.address < bestPool.address)) {
        best = result;
        bestPool = loaded;
      }
    }
    return best === undefined || bestPool === undefined ? undefined : { pool: bestPool, swap: best, inputMint: input, outputMint: output };
  }
}

function pairKey(x: string, y: string): string {
  return x < y ? `${x}:${y}` : `${y}:${x}`;
}

export class RpcQuoter {
  readonly deadlineMs: number;
  /** Intermediate tokens of two-hop routes. */
  readonly intermediates: readonly string[];
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
    this.intermediates = options.intermediateMints ?? DEFAULT_INTERMEDIATE_MINTS;
    this.log = options.logger;
  }

  /**
   * Quotes `amount` of `input` for `output` (`mode`: exact in or exact out) from state read now
   * through the loader, choosing the route as the cache path does (route-search.ts: the best direct
   * pool against the best two-hop route through each intermediate token, unless `filter` says
   * `onlyDirectRoutes`; pools of DEXes the filter refuses are not read). The pools of every leg
   * are read in one load; each hop is priced with the pool's mints' transfer fees when the loader
   * read them.
   * Never rejects; fails with UnknownMint / NoPoolForPair (404) when the directory knows no pool
   * for them (or none the filter allows); Deadline when the loader has not answered within
   * `deadlineMs`; RpcFallbackFailed when no candidate could be read (the loader's error in the
   * message); NoValidQuotes when every route read refuses the swap.
   */
  async quote(
    input: string,
    output: string,
    amount: bigint,
    mode: SwapMode = SwapMode.ExactIn,
    deadlineMs = this.deadlineMs,
    filter?: RouteFilter,
  ): Promise<RpcQuote | QuoteFailure> {
    if (this.cache !== undefined && performance.now() - this.lastSync >= this.syncIntervalMs) {
      this.lastSync = performance.now();
      this.directory.syncFrom(this.cache);
    }
    const filterKey = routeFilterKey(filter);
    const known = this.routeCandidates(input, output, filterKey);
    const candidates = known.filter((address) => allowsDex(filterKey, this.directory.get(address)?.dex ?? ''));
    if (candidates.length === 0) {
      for (const mint of [input, output]) {
        if (!this.directory.hasMint(mint)) return quoteFailure(ErrorCode.UnknownMint, `unknown token ${mint}`, { mint });
      }
      if (known.length > 0) return quoteFailure(ErrorCode.NoPoolForPair, FILTERED_OUT_RPC_MESSAGE, { inputMint: input, outputMint: output, pools: known.length });
      return quoteFailure(ErrorCode.NoPoolForPair, 'no pool for the pair', { inputMint: input, outputMint: output });
    }

    const results = await this.loadWithin(candidates, deadlineMs);
    if (results === undefined) {
      return quoteFailure(ErrorCode.Deadline, `no RPC answer within the ${deadlineMs} ms deadline`, { deadlineMs });
    }
    const finder = new LoadedHopFinder(filterKey);
    let newest = 0n;
    let firstFailure: PoolLoadFailure | undefined;
    for (const r of results) {
      if (!r.ok) {
        firstFailure ??= r.error;
        continue;
      }
      const loaded = r.value;
      this.remember(loaded);
      if (loaded.slot > newest) newest = loaded.slot;
      finder.add(loaded);
    }
    const chosen = finder.loaded === 0 ? undefined : chooseRoute(finder, input, output, amount, mode, this.intermediates, allowsMultiHop(filterKey));
    if (chosen === undefined) {
      if (finder.loaded > 0) {
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
    const route = routeQuoteOf(mode, chosen, (loaded: LoadedPool) => ({ address: loaded.address, dex: loaded.dex, slot: loaded.slot }));
    return { ok: true, route, contextSlot: cacheSlot > newest ? cacheSlot : newest };
  }

  /**
   * The pools a route of (input → output) may use, as the directory knows them: the direct pair's,
   * and with two-hop routes allowed both legs through each intermediate that has pools on both.
   */
  private routeCandidates(input: string, output: string, filterKey: number): string[] {
    const addresses = this.directory.poolsForPair(input, output);
    if (!allowsMultiHop(filterKey)) return addresses;
    for (const via of this.intermediates) {
      if (via === input || via === output) continue;
      const first = this.directory.poolsForPair(input, via);
      if (first.length === 0) continue;
      const second = this.directory.poolsForPair(via, output);
      if (second.length === 0) continue;
      addresses.push(...first, ...second);
    }
    return addresses;
  }

  /**
   * `loader.load` under the deadline: undefined past it. The deadline aborts the load (its signal):
   * the loader stops at once, reads no second round and decodes nothing, and a getMultipleAccounts
   * request only this load was waiting for is aborted (its connection closed); a request shared
   * with another reader finishes for that reader, and its answer is not written back from here.
   */
  private async loadWithin(addresses: readonly string[], deadlineMs: number): Promise<PoolLoadResult[] | undefined> {
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new TpError(ErrorCode.Deadline, `no RPC answer within the ${deadlineMs} ms deadline`, { context: { deadlineMs } })), deadlineMs);
    try {
      // abortable: a loader that does not watch the signal still loses the race at the deadline.
      return await abortable(this.loader.load(addresses, { signal: deadline.signal }), deadline.signal);
    } catch (err) {
      if (deadline.signal.aborted) return undefined;
      // A loader that rejects (instead of answering per pool) failed as a whole.
      const message = isTpError(err) || err instanceof Error ? err.message : String(err);
      return addresses.map((address) => ({ ok: false, error: { address, reason: 'rpc', message } }));
    } finally {
      clearTimeout(timer);
    }
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
