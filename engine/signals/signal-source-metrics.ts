/**
 * The signal source's Prometheus metrics (ours; label `source`, the model's):
 *
 * | metric                                  | type    | what                                                 |
 * |-----------------------------------------|---------|------------------------------------------------------|
 * | `signal_source_events_total`            | counter | market events read, label `outcome` (ok, failed)      |
 * | `signal_source_signals_total`           | counter | signals published, label `direction` (buy, sell)      |
 * | `signal_source_publish_errors_total`    | counter | signals the bus did not store                         |
 * | `signal_source_model_samples`           | gauge   | labelled samples the model learned from              |
 * | `signal_source_model_hit_rate`          | gauge   | share of its scored predictions that were right       |
 *
 * The two gauges read the model's `stats()` (`samples`, `hitRate`) when it has them.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

import type { SignalModel } from './signal-model.js';

export const SIGNAL_SOURCE_METRIC_NAMES = {
  events: 'signal_source_events_total',
  signals: 'signal_source_signals_total',
  publishErrors: 'signal_source_publish_errors_total',
  samples: 'signal_source_model_samples',
  hitRate: 'signal_source_model_hit_rate',
} as const;

export class SignalSourceMetrics {
  readonly events: Counter<'source' | 'outcome'>;
  readonly signals: Counter<'source' | 'direction'>;
  readonly publishErrors: Counter<'source'>;

  constructor(registry: Registry, model: SignalModel) {
    const source = model.source;
    const stat = (key: string) =>
      function (this: Gauge<'source'>): void {
        const v = model.stats?.()[key];
        if (v !== undefined) this.set({ source }, v);
      };
    this.events = new Counter({ name: SIGNAL_SOURCE_METRIC_NAMES.events, help: 'Market events the signal source read, by outcome.', labelNames: ['source', 'outcome'], registers: [registry] });
    this.signals = new Counter({ name: SIGNAL_SOURCE_METRIC_NAMES.signals, help: 'Trade signals published, by direction.', labelNames: ['source', 'direction'], registers: [registry] });
    this.publishErrors = new Counter({ name: SIGNAL_SOURCE_METRIC_NAMES.publishErrors, help: 'Trade signals the bus did not store.', labelNames: ['source'], registers: [registry] });
    new Gauge({ name: SIGNAL_SOURCE_METRIC_NAMES.samples, help: 'Labelled samples the signal model learned from.', labelNames: ['source'], registers: [registry], collect: stat('samples') });
    new Gauge({ name: SIGNAL_SOURCE_METRIC_NAMES.hitRate, help: 'Share of the signal model\'s scored predictions that were right (0 to 1).', labelNames: ['source'], registers: [registry], collect: stat('hitRate') });
  }
}
