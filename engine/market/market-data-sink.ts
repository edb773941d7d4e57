/**
 * The market scanner's sink: where the pool-state scanner's pipeline (block stream → parse →
 * account reads → decode, engine/scanner) hands each new pool state, as it hands it to the pool
 * cache or the POOL_UPDATES publisher. Each state becomes MarketEvents and PriceUpdates
 * (`MarketEventDeriver`) published by `MarketPublisher`. The rpc-polling mode hands its states here
 * too, with no transaction signature.
 *
 * With an `EventStateWriter` (the market scanner's `market.eventState`, default on), each
 * pool_update carries the accounts the state was read from (`data.state`, event-state.ts), for
 * deterministic replays; when a publish of a pool's events is not stored, that pool's next state is
 * sent in full.
 */
import type { LoadedPool } from '../pools/index.js';
import type { PoolStateSink, PoolStateUpdateEvent } from '../scanner/index.js';
import type { EventStateWriter } from './event-state.js';
import { MarketEventDeriver, type DeriverThresholds } from './market-event-deriver.js';
import { MarketEventType } from '../messages/index.js';
import type { MarketPublisher } from './market-publisher.js';
import { observePool } from './pool-observation.js';

export class MarketDataSink implements PoolStateSink {
  readonly deriver: MarketEventDeriver;

  constructor(
    private readonly publisher: MarketPublisher,
    thresholds?: DeriverThresholds,
    private readonly now: () => number = Date.now,
    private readonly eventState?: EventStateWriter,
  ) {
    this.deriver = new MarketEventDeriver(thresholds);
  }

  publish(event: PoolStateUpdateEvent, loaded: LoadedPool): Promise<void> {
    return this.observe(loaded, event.transaction.signature);
  }

  /** A state seen without a transaction (polling) or with one. */
  async observe(loaded: LoadedPool, signature = ''): Promise<void> {
    const at = this.now();
    const derived = this.deriver.observe(observePool(loaded, at), signature);
    if (derived.events.length === 0) return;
    const writer = this.eventState;
    if (writer !== undefined) {
      const update = derived.events.find((e) => e.type === MarketEventType.PoolUpdate);
      const state = update === undefined ? undefined : writer.stateOf(loaded, at);
      if (update !== undefined && state !== undefined) update.data['state'] = state;
    }
    const { eventsNotStored } = await this.publisher.publish(derived, loaded.address);
    if (eventsNotStored > 0) writer?.forget(loaded.address);
  }
}
