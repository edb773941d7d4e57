/**
 * Market impact of a backtest's paper fills: a fill moves the pools it traded, so a price gap that
 * lasts over several recorded events is traded once, not at each of them.
 *
 *   a fill ─▶ each hop, in route order: the pool's state after swapping the hop's input, by the
 *             pool program's math (`poolAfterSwap`, engine/dex/pool-after-swap.ts) ─▶ stored in
 *             the replay's PlannerPools (same slot: it replaces the state it was computed on)
 *   the next market event of that pool ─▶ its recorded state replaces the moved one, unless it is
 *             the same state as the one the fill traded on (the pool account's bytes and reserves
 *             unchanged: the event re-announces a pool nobody else traded since), which the fill
 *             would have changed on the chain: then the moved state stands, at the event's slot
 *
 * The replay's PlannerPools reads its pools through this loader (`load`), so every refresh (the
 * planner's per event, the signal strategy's own) sees the moved state while it stands.
 */
import { poolAfterSwap } from '../dex/index.js';
import type { LoadedPool, PoolLoader, PoolLoadResult } from '../pools/index.js';
import type { RouteHop } from '../messages/index.js';
import type { PlannerPools } from '../trading/index.js';

interface MovedPool {
  /** The recorded state the fills moved from. */
  recorded: LoadedPool;
  state: LoadedPool;
}

/** Whether two recorded states of a pool are the same: its account's bytes and its reserves. */
function sameRecordedState(a: LoadedPool, b: LoadedPool): boolean {
  if (a.data.length !== b.data.length || !a.data.every((byte, i) => byte === b.data[i])) return false;
  return a.reserves?.[0] === b.reserves?.[0] && a.reserves?.[1] === b.reserves?.[1];
}

export class FillImpact implements PoolLoader {
  private readonly moved = new Map<string, MovedPool>();
  /** The last recorded state loaded of each pool. */
  private readonly recordedStates = new Map<string, LoadedPool>();

  constructor(private readonly recorded: PoolLoader) {}

  async load(addresses: readonly string[], options?: { signal?: AbortSignal }): Promise<PoolLoadResult[]> {
    const results = await this.recorded.load(addresses, options);
    return results.map((r): PoolLoadResult => {
      if (!r.ok) return r;
      const address = r.value.address;
      this.recordedStates.set(address, r.value);
      const moved = this.moved.get(address);
      if (moved === undefined) return r;
      if (!sameRecordedState(moved.recorded, r.value)) {
        this.moved.delete(address);
        return r;
      }
      return { ok: true, value: moved.state.slot === r.value.slot ? moved.state : { ...moved.state, slot: r.value.slot } };
    });
  }

  /** Whether a fill moved `pool` and its recorded state has not changed since. */
  isMoved(pool: string): boolean {
    return this.moved.has(pool);
  }

  /**
   * Moves the pools of `hops` (the fill's route as re-quoted, in order) in `pools`; a hop the math
   * refuses now leaves its pool as it was.
   */
  apply(hops: readonly Pick<RouteHop, 'pool' | 'inputMint' | 'inputAmount'>[], pools: PlannerPools): void {
    for (const hop of hops) {
      const loaded = pools.loaded(hop.pool);
      const recorded = this.moved.get(hop.pool)?.recorded ?? this.recordedStates.get(hop.pool);
      if (loaded === undefined || recorded === undefined) continue;
      const aToB = loaded.pool.tokenA === hop.inputMint;
      const after = poolAfterSwap(loaded.pool, loaded.context, aToB, hop.inputAmount, loaded.transferFees);
      if (!after.ok) continue;
      const next: LoadedPool = { ...loaded, pool: after.pool, context: after.context };
      if (loaded.reserves !== undefined) {
        const [a, b] = loaded.reserves;
        next.reserves = aToB ? [a + after.poolAmountIn, b - after.poolAmountOut] : [a - after.poolAmountOut, b + after.poolAmountIn];
      }
      this.moved.set(hop.pool, { recorded, state: next });
      pools.store(next, true);
    }
  }
}
