/**
 * The market scanner's sink: where the pool-state scanner's pipeline (block stream → parse →
 * account reads → decode, engine/scanner) hands each new pool state, as it hands it to the pool
 * cache or the POOL_UPDATES publisher. Each state becomes MarketEvents and PriceUpdates
 * (`MarketEventDeriver`) published by `MarketPublisher`. The rpc-polling mode hands its states here
 * too, with no transaction signature.
 */
import type { LoadedPool } from '../../pools/index.js';
import type { PoolStateSink, PoolStateUpdateEvent } from '../../scanner/index.js';
import { MarketEventDeriver, type DeriverThresholds } from './market-event-deriver.js';
import type { MarketPublisher } from './market-publisher.js';
import { observePool } from './pool-observation.js';

export class MarketDataSink implements PoolStateSink {
  readonly deriver: MarketEventDeriver;

  constructor(
    private readonly publisher: MarketPublisher,
    thresholds?: DeriverThresholds,
    private readonly now: () => number = Date.now,
  ) {
    this.deriver = new MarketEventDeriver(thresholds);
  }

  publish(event: PoolStateUpdateEvent, loaded: LoadedPool): Promise<void> {
    return this.observe(loaded, event.transaction.signature);
  }

  /** A state seen without a transaction (polling) or with one. */
  observe(loaded: LoadedPool, signature = ''): Promise<void> {
    const derived = this.deriver.observe(observePool(loaded, this.now()), signature);
    if (derived.events.length === 0) return Promise.resolve();
    return this.publisher.publish(derived, loaded.address);
  }
}
