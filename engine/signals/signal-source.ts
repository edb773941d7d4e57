/**
 * A signal source: market events in stream order through a model, its signals on the bus.
 *
 *   MARKET_EVENTS market.events.*.pool_update ──durable consumer (the app)──▶ handle(event, seq)
 *     ─▶ model.observe(event), once per stream sequence ─▶ publish each signal ─▶ ack
 *
 * The model sees each event once, in order: a message redelivered after a failed publish (same
 * stream sequence, or an older one) is not observed again; the signals it had led to are
 * published again (same ids: the stream stores them once). `warm(event)` observes without
 * publishing: the app replays recent history through it at start, so a restarted source speaks
 * again as soon as the model it rebuilt is trusted, not one warm-up later.
 */
import type { Logger } from '../obs/index.js';
import type { MarketEvent, TradeSignal } from '../messages/index.js';
import type { SignalModel } from './signal-model.js';
import type { SignalSink } from './signal-publisher.js';
import type { SignalSourceMetrics } from './signal-source-metrics.js';

export interface SignalSourceOptions {
  model: SignalModel;
  publisher: SignalSink;
  metrics?: SignalSourceMetrics;
  logger?: Logger;
}

export class SignalSource {
  private lastSeq = 0;
  /** Signals of an observed sequence not yet stored by the stream. */
  private readonly unpublished = new Map<number, TradeSignal[]>();

  constructor(private readonly options: SignalSourceOptions) {}

  get model(): SignalModel {
    return this.options.model;
  }

  /** Observes an event of history (stream sequence `seq`) without publishing what it leads to. */
  warm(event: MarketEvent, seq: number): void {
    if (seq <= this.lastSeq) return;
    this.lastSeq = seq;
    this.options.model.observe(event);
  }

  /** Handles the message of stream sequence `seq`; resolves with the signals published. Throws to have it redelivered. */
  async handle(event: MarketEvent, seq: number): Promise<TradeSignal[]> {
    const { model, publisher, metrics, logger } = this.options;
    if (seq > this.lastSeq) {
      this.lastSeq = seq;
      let signals: TradeSignal[];
      try {
        signals = model.observe(event);
      } catch (err) {
        metrics?.events.inc({ source: model.source, outcome: 'failed' });
        throw err;
      }
      if (signals.length > 0) this.unpublished.set(seq, signals);
      metrics?.events.inc({ source: model.source, outcome: 'ok' });
    }
    const pending = this.unpublished.get(seq) ?? [];
    const published: TradeSignal[] = [];
    while (pending.length > 0) {
      const signal = pending[0]!;
      try {
        await publisher.publish(signal);
      } catch (err) {
        metrics?.publishErrors.inc({ source: model.source });
        throw err;
      }
      pending.shift();
      metrics?.signals.inc({ source: model.source, direction: signal.direction });
      logger?.info({ id: signal.id, token: signal.token, direction: signal.direction, confidence: signal.confidence, pool: signal.pool }, 'signal published');
      published.push(signal);
    }
    this.unpublished.delete(seq);
    return published;
  }
}
