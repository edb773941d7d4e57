/**
 * The pools of a route as the executor reads them just before a trade: read again over RPC (the
 * planner's `PlannerPools`, an `RpcPoolLoader` underneath), so the pre-trade re-quote runs on the
 * current state, and turned into the `SwapPool`s the route's swap instructions are built from
 * (program id of the DEX, AmmInfo keys for Raydium AMM v4 from the pool account bytes, the mints'
 * token programs when the loader read them).
 */
import type { DecoderRegistry, SwapPool } from '../dex/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { swapPoolOfLoaded } from '../pools/index.js';
import type { PlannerPools } from '../trading/index.js';
import { plannerPoolsSource, type RouteStateSource } from './route-requote.js';

export class RoutePools {
  readonly source: RouteStateSource;

  constructor(
    readonly pools: PlannerPools,
    private readonly registry: DecoderRegistry,
  ) {
    this.source = plannerPoolsSource(pools);
  }

  /** Reads the pools again; throws TP_ERR_UNAVAILABLE naming the first one that could not be read. */
  async refresh(addresses: readonly string[]): Promise<void> {
    const failed = await this.pools.refresh([...new Set(addresses)]);
    for (const [address, reason] of failed) throw new TpError(ErrorCode.Unavailable, `pool ${address} could not be read: ${reason}`, { context: { pool: address } });
  }

  /** The SwapPools of `addresses`, in order (after `refresh`). */
  swapPools(addresses: readonly string[]): SwapPool[] {
    return addresses.map((a) => {
      const loaded = this.pools.loaded(a);
      if (loaded === undefined) throw new TpError(ErrorCode.Unavailable, `pool ${a} has not been read`, { context: { pool: a } });
      return swapPoolOfLoaded(loaded, this.registry);
    });
  }

  /** The oldest slot the route's pools were read at. */
  oldestSlot(addresses: readonly string[]): bigint | undefined {
    let slot: bigint | undefined;
    for (const a of addresses) {
      const s = this.pools.loaded(a)?.slot;
      if (s !== undefined && (slot === undefined || s < slot)) slot = s;
    }
    return slot;
  }
}
