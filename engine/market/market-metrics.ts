/**
 * The market scanner's counters on its ops port (/metrics), read at scrape time from the
 * publisher's and the PubSub source's own counts, so the hot path counts once, in plain fields.
 */
import { Counter, type Registry } from 'prom-client';

import type { MarketPublisherStats } from './market-publisher.js';
import type { PubsubPoolSourceStats } from './pubsub-pool-source.js';

export const MARKET_METRIC_NAMES = {
  published: 'market_messages_published_total',
  duplicates: 'market_messages_duplicate_total',
  dropped: 'market_messages_dropped_total',
  publishErrors: 'market_publish_errors_total',
  kvErrors: 'market_kv_errors_total',
  pubsubNotifications: 'market_pubsub_notifications_total',
  pubsubConnects: 'market_pubsub_connects_total',
} as const;

/** A counter whose value is read from `read()` at each scrape. */
function countedFrom(registry: Registry, name: string, help: string, read: () => number): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}

/** Registers the market scanner's counters on `registry`. */
export function registerMarketMetrics(registry: Registry, publisher: { stats: MarketPublisherStats }, pubsub?: { stats: PubsubPoolSourceStats }): void {
  new Counter({
    name: MARKET_METRIC_NAMES.published,
    help: 'MarketEvents (kind=event) and PriceUpdates (kind=price) stored by the stream',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ kind: 'event' }, publisher.stats.events);
      this.inc({ kind: 'price' }, publisher.stats.prices);
    },
  });
  countedFrom(registry, MARKET_METRIC_NAMES.duplicates, 'messages dropped as repeats within the duplicate window', () => publisher.stats.duplicates);
  countedFrom(registry, MARKET_METRIC_NAMES.dropped, 'messages dropped because market.bufferSize were waiting for their acknowledgement, or the bus was down', () => publisher.stats.dropped);
  countedFrom(registry, MARKET_METRIC_NAMES.publishErrors, 'publishes the stream did not acknowledge', () => publisher.stats.publishErrors);
  countedFrom(registry, MARKET_METRIC_NAMES.kvErrors, 'price: and volume: key writes that failed', () => publisher.stats.kvErrors);
  if (pubsub !== undefined) {
    countedFrom(registry, MARKET_METRIC_NAMES.pubsubNotifications, 'websocket mode: accountNotifications received', () => pubsub.stats.notifications);
    countedFrom(registry, MARKET_METRIC_NAMES.pubsubConnects, 'websocket mode: PubSub connections made (reconnects included)', () => pubsub.stats.connects);
  }
}
