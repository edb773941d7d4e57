/**
 * Market impact of a backtest's paper fills: a fill moves the pools it traded, so a price gap that
 * lasts over several recorded events is traded once, not at each of them.
 *
 *   a fill ─▶ each hop, in route order: the pool's state after swapping the hop's input, by the
 *             pool program's math (`poolAfterSwap`, engine/dex/pool-after-swap.ts) ─▶ stored in
 *             the replay's PlannerPools (same slot: it replaces the state it was computed on)
 *   the next market event of that pool ─▶ its recorded state replaces the moved one (`forget`)
 *
 * The loader the replay's PlannerPools reads (`load`) answers a moved pool's moved state as long
 * as the recorded state it was computed on is the newest one, so a strategy that refreshes a pool
 * (the signal strategy does) does not undo the fill.
 */
import { poolAfterSwap } from '../dex/index.js';
import type { LoadedPool, PoolLoader, PoolLoadResult } from '../pools/index.js';
import type { RouteHop } from '../messages/index.js';
import type { PlannerPools } from '../trading/index.js';

export class FillImpact implements PoolLoader {
  /** Pool → its state moved by fills, on the recorded state of that slot. */
  private readonly moved = new Map<string, LoadedPool>();

  constructor(private readonly recorded: PoolLoader) {}

  async load(addresses: readonly string[], options?: { signal?: AbortSignal }): Promise<PoolLoadResult[]> {
    const results = await this.recorded.load(addresses, options);
    return results.map((r) => {
      if (!r.ok) return r;
      const moved = this.moved.get(r.value.address);
      return moved !== undefined && moved.slot === r.value.slot ? { ok: true, value: moved } : r;
    });
  }

  /** A market event of `pool` was applied: its recorded state is the pool's again. */
  forget(pool: string): void {
    this.moved.delete(pool);
  }

  /** Whether a fill moved `pool` since its last event. */
  isMoved(pool: string): boolean {
    return this.moved.has(pool);
  }

  /**
   * Moves the pools of `hops` (the fill's route as re-quoted, in order) in `pools`; a hop the math
   * refuses now (it filled a moment ago on the same state) leaves its pool as it was.
   */
  apply(hops: readonly Pick<RouteHop, 'pool' | 'inputMint' | 'inputAmount'>[], pools: PlannerPools): void {
    for (const hop of hops) {
      const loaded = pools.loaded(hop.pool);
      if (loaded === undefined) continue;
      const aToB = loaded.pool.tokenA === hop.inputMint;
      const after = poolAfterSwap(loaded.pool, loaded.context, aToB, hop.inputAmount, loaded.transferFees);
      if (!after.ok) continue;
      const next: LoadedPool = { ...loaded, pool: after.pool, context: after.context };
      if (loaded.reserves !== undefined) {
        const [a, b] = loaded.reserves;
        next.reserves = aToB ? [a + after.poolAmountIn, b - after.poolAmountOut] : [a - after.poolAmountOut, b + after.poolAmountIn];
      }
      this.moved.set(hop.pool, next);
      pools.store(next, true);
    }
  }
}
