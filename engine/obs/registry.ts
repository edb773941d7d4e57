import { collectDefaultMetrics, Registry } from 'prom-client';

/** Options shared by the metric-set factories. */
export interface MetricsRegistryOptions {
  /**
   * Also collect prom-client's default Node process metrics (CPU, memory, event-loop lag, GC) into
   * this registry. Default false, so tests and several services in one process stay independent.
   */
  defaultMetrics?: boolean;
  /** Labels added to every series of the registry (e.g. `{ region: 'fra' }`). */
  defaultLabels?: Record<string, string>;
}

/**
 * prom-client's default metrics that `promtool check metrics` rejects: gauges ending in `_total`.
 * Each is the sum of a by-type gauge that stays (`nodejs_active_handles{type=...}` and so on), so
 * `sum(nodejs_active_handles)` gives the same number.
 */
export const DEFAULT_METRICS_DROPPED: readonly string[] = Object.freeze([
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
]);

/** A fresh registry, never prom-client's global one: two services in one process must not collide. */
export function createMetricsRegistry(options: MetricsRegistryOptions = {}): Registry {
  const registry = new Registry();
  if (options.defaultLabels) registry.setDefaultLabels(options.defaultLabels);
  if (options.defaultMetrics) {
    collectDefaultMetrics({ register: registry });
    for (const name of DEFAULT_METRICS_DROPPED) registry.removeSingleMetric(name);
  }
  return registry;
}
