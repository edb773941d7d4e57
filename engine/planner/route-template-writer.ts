/**
 * The planner's part of the route templates (`route_template:{hash}`, engine/state/kv/route-template.ts):
 * when it publishes an opportunity on a route, it writes the route's template from what its own
 * pool loader planned for the route's pools (it has just read them), so an executor's first read of
 * the route is one getMultipleAccounts even when no executor traded the route before.
 *
 * - Cheap on the hot path: the hashes written (or found present) are remembered in an LRU for the
 *   template's TTL (12 h), so a route costs one Redis write per TTL, not one per opportunity; the
 *   write runs beside the publish, not before it.
 * - Only where the route has none (SET NX): a template an executor wrote after reading the route
 *   is what the route needed when it traded; the planner's would be no better.
 * - Never fails the publish: a Redis that refuses is logged and counted, and the route is tried
 *   again on its next opportunity. A route with a pool the loader has no plan for is left alone.
 *
 * Counted in `planner_route_templates_total{result}`: written, present, unplanned, error.
 */
import { LRUCache } from 'lru-cache';

import type { Logger } from '../obs/index.js';
import { KEY_TTL_MS, routeTemplateHash, routeTemplateOf, type KeySpace, type RouteTemplateHop, type RouteTemplatePlan } from '../state/index.js';
import type { PlannerMetrics } from './planner-metrics.js';

export type RouteTemplateWrite = 'written' | 'present' | 'unplanned' | 'known' | 'error';

export interface RouteTemplateWriterOptions {
  keys: Pick<KeySpace, 'setRouteTemplateIfAbsent'>;
  /** What the planner's pool loader planned to read beside a pool on its last load (RpcPoolLoader.plannedAccounts). */
  planned: (pool: string) => RouteTemplatePlan | undefined;
  metrics?: Pick<PlannerMetrics, 'routeTemplates'>;
  logger?: Logger;
  /** Routes remembered. Default 10,000. */
  maxRoutes?: number;
  /** How long a route is remembered. Default the template's TTL. */
  ttlMs?: number;
  now?: () => number;
}

export class RouteTemplateWriter {
  readonly stats: Record<RouteTemplateWrite, number> = { written: 0, present: 0, unplanned: 0, known: 0, error: 0 };
  private readonly known: LRUCache<string, true>;
  private readonly now: () => number;

  constructor(private readonly options: RouteTemplateWriterOptions) {
    this.now = options.now ?? Date.now;
    this.known = new LRUCache<string, true>({ max: options.maxRoutes ?? 10_000, ttl: options.ttlMs ?? KEY_TTL_MS.routeTemplate });
  }

  /** Writes the route's template unless it was written (or found) within the TTL. Never rejects. */
  async ensure(route: readonly RouteTemplateHop[]): Promise<RouteTemplateWrite> {
    const hash = routeTemplateHash(route);
    if (this.known.has(hash)) return this.count('known');
    const template = routeTemplateOf([...new Set(route.map((h) => h.pool))], this.options.planned, this.now());
    if (template === undefined) return this.count('unplanned');
    // Remembered before the write: the next opportunities on the route do not write it again meanwhile.
    this.known.set(hash, true);
    try {
      return this.count((await this.options.keys.setRouteTemplateIfAbsent(hash, template)) ? 'written' : 'present');
    } catch (err) {
      this.known.delete(hash);
      this.options.logger?.warn({ hash, err: err instanceof Error ? err.message : String(err) }, 'route template not written; the opportunity is published without it');
      return this.count('error');
    }
  }

  private count(result: RouteTemplateWrite): RouteTemplateWrite {
    this.stats[result]++;
    if (result !== 'known') this.options.metrics?.routeTemplates.inc({ result });
    return result;
  }
}
