/**
 * The planner's view of the pools: a pool cache (engine/cache, the quote service's) filled from
 * Solana JSON-RPC at start for the monitored pools and again for a pool each time a market event
 * names it, so every strategy quotes on the state the event announced (or a newer one). Pools whose
 * mints charge Token-2022 transfer fees are kept out of the arbitrage graph (their exact quotes need
 * the mints' fee configs, which the search does not carry).
 */
import { PoolCache, poolStateOfLoaded } from '../cache/index.js';
import type { LoadedPool, PoolLoader } from '../pools/index.js';

export interface PoolMembership {
  addPool(address: string, tokenA: string, tokenB: string): void;
  removePool(address: string): void;
}

export class PlannerPools {
  readonly cache: PoolCache;
  private readonly members: PoolMembership[] = [];
  private readonly latest = new Map<string, LoadedPool>();

  constructor(
    private readonly loader: PoolLoader,
    options: { maxPoolCount?: number; stalenessThresholdMs?: number; now?: () => number } = {},
  ) {
    this.cache = new PoolCache({ maxPoolCount: options.maxPoolCount ?? 5_000, stalenessThresholdMs: options.stalenessThresholdMs ?? 60_000, ...(options.now === undefined ? {} : { now: options.now }) });
  }

  /** Strategies that keep a graph of the pools (arbitrage) hear of every pool added. */
  join(member: PoolMembership): void {
    this.members.push(member);
    for (const loaded of this.latest.values()) if (loaded.transferFees === undefined) member.addPool(loaded.address, loaded.pool.tokenA, loaded.pool.tokenB);
  }

  /** The newest state of a pool read so far. */
  loaded(address: string): LoadedPool | undefined {
    return this.latest.get(address);
  }

  /**
   * Reads `addresses` now and stores them; returns the ones that could not be read (address →
   * reason). `signal` stops the read: it rejects with the signal's reason and stores nothing.
   */
  async refresh(addresses: readonly string[], signal?: AbortSignal): Promise<Map<string, string>> {
    const failed = new Map<string, string>();
    if (addresses.length === 0) return failed;
    const results = await this.loader.load(addresses, signal === undefined ? {} : { signal });
    for (const r of results) {
      if (!r.ok) {
        failed.set(r.error.address, `${r.error.reason}: ${r.error.message}`);
        continue;
      }
      this.store(r.value);
    }
    return failed;
  }

  /**
   * Stores a state read elsewhere (tests, the bench). `replaceEqualSlot`: a state of the slot held
   * replaces it (a backtest's paper fill moved the pool within its slot); otherwise the cache keeps
   * the first state of a slot.
   */
  store(loaded: LoadedPool, replaceEqualSlot = false): void {
    const known = this.latest.get(loaded.address);
    if (known !== undefined && known.slot > loaded.slot) return;
    this.cache.upsert(poolStateOfLoaded(loaded), replaceEqualSlot);
    this.latest.set(loaded.address, loaded);
    if (known === undefined && loaded.transferFees === undefined) for (const m of this.members) m.addPool(loaded.address, loaded.pool.tokenA, loaded.pool.tokenB);
  }
}
