/**
 * Publishes MarketEvents and PriceUpdates on the MARKET_EVENTS stream and keeps the `price:` and
 * `volume:` keys from them.
 *
 * - Subjects: `market.events.<protocol>.<type>` and `market.events.prices.<token>`.
 * - Duplicates: every MarketEvent carries a deterministic id (pool, slot, transaction, type) sent as
 *   its JetStream message id; the stream's duplicate window is `dedupWindowMs`, so a second publish
 *   of the same event within it (a replica, a retry) is dropped by the server. The publisher also
 *   remembers the ids it sent within the window and drops a repeat before it reaches the bus
 *   (counted in `duplicates`). PriceUpdates carry `<token>:<quote>:<slot>` as their id.
 * - Buffer: at most `bufferSize` messages wait for their acknowledgement; past it new ones are
 *   dropped and counted (`dropped`), so a slow bus cannot grow the scanner's memory.
 * - Key-value: `price:{token}:{dex}` ← {price, timestamp} of each PriceUpdate source whose pool just
 *   changed, `volume:{token}:24h` ← {volume, averageTradeSize}; written in one round trip per state,
 *   failures counted (`kvErrors`), never blocking the events.
 */
import type { JetStreamClient } from 'nats';

import { type KeySpace, type KvEntry, KEY_TTL_MS, toJsonText } from '../state/index.js';
import { encodeMarketEvent, encodePriceUpdate, marketEventSubject, priceUpdateSubject, type MarketEvent, type PriceUpdate } from '../messages/index.js';
import type { Derived } from './market-event-deriver.js';

export interface MarketPublisherOptions {
  /** JetStream client, or undefined while the bus is down (messages are then dropped and counted). */
  js: () => JetStreamClient | undefined;
  keys?: KeySpace;
  bufferSize: number;
  dedupWindowMs: number;
  /** Subject prefix (tests). */
  prefix?: string;
  now?: () => number;
  /** Called with each event after the stream stored it (metrics, tests). */
  onPublished?: (event: MarketEvent | PriceUpdate, subject: string) => void;
}

export interface MarketPublisherStats {
  events: number;
  prices: number;
  duplicates: number;
  dropped: number;
  publishErrors: number;
  kvErrors: number;
}

export class MarketPublisher {
  readonly stats: MarketPublisherStats = { events: 0, prices: 0, duplicates: 0, dropped: 0, publishErrors: 0, kvErrors: 0 };
  private inFlight = 0;
  private readonly sent = new Map<string, number>();
  private readonly now: () => number;
  private readonly pending = new Set<Promise<boolean>>();

  constructor(private readonly options: MarketPublisherOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Publishes everything `derived` holds; resolves when each publish settled, with the number of
   * MarketEvents the stream did not store (dropped, or the publish failed; a duplicate was stored).
   */
  async publish(derived: Derived, changedPool: string): Promise<{ eventsNotStored: number }> {
    const work: Promise<boolean>[] = [];
    const prefix = this.options.prefix ?? '';
    for (const e of derived.events) work.push(this.send(e.id, marketEventSubject(e.protocol, e.type, prefix), () => encodeMarketEvent(e), e, 'events'));
    const events = work.length;
    for (const p of derived.prices) work.push(this.send(`${p.token}:${p.quoteToken}:${p.slot}`, priceUpdateSubject(p.token, prefix), () => encodePriceUpdate(p), p, 'prices'));
    const [stored] = await Promise.all([Promise.all(work), this.writeKeys(derived, changedPool)]);
    let eventsNotStored = 0;
    for (let i = 0; i < events; i++) if (!stored[i]) eventsNotStored++;
    return { eventsNotStored };
  }

  private forget(now: number): void {
    const horizon = now - this.options.dedupWindowMs;
    for (const [id, at] of this.sent) {
      if (at > horizon) break;
      this.sent.delete(id);
    }
  }

  /** Resolves true when the stream holds the message (stored now, or a duplicate of one stored). */
  private send(id: string, subject: string, encode: () => Uint8Array, message: MarketEvent | PriceUpdate, kind: 'events' | 'prices'): Promise<boolean> {
    const now = this.now();
    this.forget(now);
    if (this.sent.has(id)) {
      this.stats.duplicates++;
      return Promise.resolve(true);
    }
    const js = this.options.js();
    if (js === undefined || this.inFlight >= this.options.bufferSize) {
      this.stats.dropped++;
      return Promise.resolve(false);
    }
    this.sent.set(id, now);
    this.inFlight++;
    const p = js
      .publish(subject, encode(), { msgID: id })
      .then(
        (ack) => {
          if (ack.duplicate) this.stats.duplicates++;
          else {
            this.stats[kind]++;
            this.options.onPublished?.(message, subject);
          }
          return true;
        },
        () => {
          this.stats.publishErrors++;
          this.sent.delete(id);
          return false;
        },
      )
      .finally(() => {
        this.inFlight--;
        this.pending.delete(p);
      });
    this.pending.add(p);
    return p;
  }

  private async writeKeys(derived: Derived, changedPool: string): Promise<void> {
    const keys = this.options.keys;
    if (keys === undefined) return;
    const entries: KvEntry[] = [];
    for (const p of derived.prices) {
      const source = p.sources.find((s) => s.pool === changedPool);
      if (source !== undefined) entries.push(keys.priceEntry(p.token, source.dex, { price: source.price, timestamp: p.timestamp }));
    }
    for (const v of derived.volumes) {
      entries.push({ key: keys.volumeKey(v.token), value: toJsonText({ volume: v.volume.toString(), averageTradeSize: v.averageTradeSize.toString() }), ttlMs: KEY_TTL_MS.volume });
    }
    if (entries.length === 0) return;
    try {
      await keys.store.setMany(entries);
    } catch {
      this.stats.kvErrors++;
    }
  }

  /** Waits for every publish in flight. */
  async drain(): Promise<void> {
    await Promise.all([...this.pending]);
  }
}
