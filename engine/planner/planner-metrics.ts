/**
 * The planners' Prometheus metrics (spec 03 names none; these are ours, label `strategy`):
 *
 * | metric                                   | type      | what                                                        |
 * |------------------------------------------|-----------|-------------------------------------------------------------|
 * | `planner_opportunities_found_total`      | counter   | opportunities published                                     |
 * | `planner_average_profit`                 | gauge     | mean expected profit (atoms of the profit mint) of the      |
 * |                                          |           | opportunities published in the last metrics interval        |
 * | `planner_event_to_opportunity_seconds`   | histogram | market event timestamp (a signal's createdAt) → opportunity |
 * |                                          |           | published                                                   |
 * | `planner_market_events_total`            | counter   | market events handled, label `outcome` (ok, failed)         |
 * | `planner_publish_errors_total`           | counter   | opportunities the bus did not store                         |
 * | `planner_signals_total`                  | counter   | trade signals handled, label `outcome` (ok, failed)         |
 * | `planner_signal_decisions_total`         | counter   | signal strategies' decisions, labels `action` (buy, sell,   |
 * |                                          |           | skip) and `reason` (signal or the skip reason)              |
 *
 * | `planner_route_templates_total`          | counter   | route templates on the planner's publishes, label `result`: |
 * |                                          |           | written, present (the executor's), unplanned, error         |
 * `PlannerMetrics.interval()` also gives what goes in the interval's `planner_metrics` row.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

import type { TradeOpportunity } from '../messages/index.js';

export const PLANNER_METRIC_NAMES = {
  found: 'planner_opportunities_found_total',
  averageProfit: 'planner_average_profit',
  latency: 'planner_event_to_opportunity_seconds',
  events: 'planner_market_events_total',
  publishErrors: 'planner_publish_errors_total',
  signals: 'planner_signals_total',
  signalDecisions: 'planner_signal_decisions_total',
  routeTemplates: 'planner_route_templates_total',
} as const;

const LATENCY_BUCKETS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

export class PlannerMetrics {
  private readonly found: Counter<'strategy'>;
  private readonly averageProfit: Gauge<'strategy'>;
  readonly latency: Histogram<'strategy'>;
  readonly events: Counter<'outcome'>;
  readonly publishErrors: Counter<'strategy'>;
  readonly signals: Counter<'outcome'>;
  readonly signalDecisions: Counter<'action' | 'reason'>;
  readonly routeTemplates: Counter<'result'>;
  private intervalCount = 0;
  private intervalProfit = 0;
  private readonly perStrategy = new Map<string, { count: number; profit: number }>();

  constructor(registry: Registry) {
    this.found = new Counter({ name: PLANNER_METRIC_NAMES.found, help: 'Trade opportunities published, per strategy.', labelNames: ['strategy'], registers: [registry] });
    this.averageProfit = new Gauge({ name: PLANNER_METRIC_NAMES.averageProfit, help: 'Mean expected profit (atoms of the profit mint) of the opportunities published in the last metrics interval, per strategy.', labelNames: ['strategy'], registers: [registry] });
    this.latency = new Histogram({ name: PLANNER_METRIC_NAMES.latency, help: 'Seconds from a market event (its timestamp) to the opportunity it led to being published, per strategy.', labelNames: ['strategy'], buckets: LATENCY_BUCKETS, registers: [registry] });
    this.events = new Counter({ name: PLANNER_METRIC_NAMES.events, help: 'Market events handled by the planner, by outcome.', labelNames: ['outcome'], registers: [registry] });
    this.publishErrors = new Counter({ name: PLANNER_METRIC_NAMES.publishErrors, help: 'Opportunities the bus did not store, per strategy.', labelNames: ['strategy'], registers: [registry] });
    this.signals = new Counter({ name: PLANNER_METRIC_NAMES.signals, help: 'Trade signals handled by the planner, by outcome.', labelNames: ['outcome'], registers: [registry] });
    this.routeTemplates = new Counter({ name: PLANNER_METRIC_NAMES.routeTemplates, help: 'Route templates the planner wrote when it first published an opportunity on a route (result: written, present, unplanned, error).', labelNames: ['result'], registers: [registry] });
    this.signalDecisions = new Counter({ name: PLANNER_METRIC_NAMES.signalDecisions, help: 'Decisions of the signal strategies: action (buy, sell, skip) and reason (signal, or why it was skipped).', labelNames: ['action', 'reason'], registers: [registry] });
  }

  published(op: TradeOpportunity, eventTimestamp: number | undefined, publishedAt: number): void {
    this.found.inc({ strategy: op.strategy });
    const profit = Number(op.expectedProfit);
    this.intervalCount++;
    this.intervalProfit += profit;
    const s = this.perStrategy.get(op.strategy) ?? { count: 0, profit: 0 };
    s.count++;
    s.profit += profit;
    this.perStrategy.set(op.strategy, s);
    if (eventTimestamp !== undefined) this.latency.observe({ strategy: op.strategy }, Math.max(0, publishedAt - eventTimestamp) / 1000);
  }

  /** Closes the interval: its count and mean profit (null without opportunities); sets the gauges. */
  interval(): { opportunitiesFound: number; avgProfit: number | null } {
    const out = { opportunitiesFound: this.intervalCount, avgProfit: this.intervalCount === 0 ? null : this.intervalProfit / this.intervalCount };
    for (const [strategy, s] of this.perStrategy) this.averageProfit.set({ strategy }, s.count === 0 ? 0 : s.profit / s.count);
    this.perStrategy.clear();
    this.intervalCount = 0;
    this.intervalProfit = 0;
    return out;
  }
}
