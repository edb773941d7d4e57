/**
 * The in-process sink of the scanner's events (`npm start`, one process): each event's state goes
 * straight into the pool cache under the slot rule, with the decoded pool and its swap context that
 * the event was built from, so no JSON crosses between the scanner and the cache. The split
 * deployment puts the bus between them instead; both end in the same `PoolCache.upsert`.
 */
import type { LoadedPool } from '../pools/index.js';
import type { PoolStateUpdateEvent } from '../scanner/index.js';
import type { PoolStateSink } from '../scanner/index.js';
import { poolStateOfLoaded } from './loaded-pool-state.js';
import type { PoolCache } from './pool-cache.js';
import type { UpsertOutcome } from './types.js';

export class CachePoolStateSink implements PoolStateSink {
  constructor(
    private readonly cache: PoolCache,
    /** Called after every upsert (the quote service counts pool updates received here). */
    private readonly onUpsert?: (outcome: UpsertOutcome, event: PoolStateUpdateEvent) => void,
  ) {}

  publish(event: PoolStateUpdateEvent, loaded: LoadedPool): void {
    const outcome = this.cache.upsert(poolStateOfLoaded(loaded));
    this.onUpsert?.(outcome, event);
  }
}
