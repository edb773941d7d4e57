/**
 * The pools of a route as the executor reads them just before a trade: read again over RPC (the
 * planner's `PlannerPools`, an `RpcPoolLoader` underneath), so the pre-trade re-quote runs on the
 * current state, and turned into the `SwapPool`s the route's swap instructions are built from
 * (program id of the DEX, AmmInfo keys for Raydium AMM v4 from the pool account bytes, the mints'
 * token programs when the loader read them).
 *
 * Route templates (engine/state/kv/route-template.ts; the planner writes them too), with `loader` and `templates`: when the loader does not
 * remember every pool of the route yet (the executor's first read of them: just started, or the
 * route was traded by another executor), the route's `route_template:{hash}` is read first and
 * every account it names is read in the same getMultipleAccounts as the pools: one round instead of
 * two. Once the loader remembers the pools, it reads their accounts in one round by itself and the
 * template is not read. After the read, the template is written (12 h) when it was missing or
 * stale or when the read needed a second round (the price moved to other arrays), and deleted when
 * a pool of the route no longer loads; the write does not hold up the trade. Counted in
 * `stats` and `executor_route_templates_total{result}`; a template the store cannot give or take
 * (Redis down) is logged and the read goes on without it.
 */
import type { DecoderRegistry, SwapPool } from '../dex/index.js';
import { ErrorCode, TpError } from '../errors.js';
import type { Logger } from '../obs/index.js';
import { swapPoolOfLoaded, type PoolLoadResult, type RpcPoolLoader } from '../pools/index.js';
import { isRouteTemplate, prefetchOf, routeTemplateHash, routeTemplateOf, sameRouteTemplate, type KeySpace, type RouteTemplateHop, type RouteTemplateValue } from '../state/index.js';
import type { PlannerPools } from '../trading/index.js';
import type { ExecutorMetrics } from './executor-metrics.js';
import { plannerPoolsSource, type RouteStateSource } from './route-requote.js';

/**
 * Outcomes of a read that consulted the template: `hit` (the template named exactly what the pools
 * needed: one round), `miss` (no template: two rounds, the template written), `stale` (the template
 * differs from what the pools need now: the price moved to other tick or bin arrays, an owner
 * changed, a pool is gone; the accounts not named are read in a second round and the template is
 * written again, or deleted when a pool of the route no longer loads).
 */
export const RouteTemplateResult = { Hit: 'hit', Miss: 'miss', Stale: 'stale' } as const;
export type RouteTemplateResult = (typeof RouteTemplateResult)[keyof typeof RouteTemplateResult];

export interface RoutePoolsOptions {
  /** The loader under `pools` (the executor's RpcPoolLoader): with `templates`, reads go through it with the route's template. */
  loader?: RpcPoolLoader;
  /** The key space of the route templates (`route_template:{hash}`); none: no templates. */
  templates?: KeySpace;
  metrics?: Pick<ExecutorMetrics, 'routeTemplates'>;
  logger?: Logger;
  now?: () => number;
}

export interface RoutePoolsStats {
  /** refresh() calls. */
  reads: number;
  /** Reads that consulted the template, by result. */
  templates: Record<RouteTemplateResult, number>;
  /** Templates written, deleted. */
  written: number;
  deleted: number;
  /** Template reads or writes the store refused (the pool read went on without). */
  errors: number;
}

/** Failures that say the route's pool is not what the template described (not a passing RPC fault). */
const GONE: ReadonlySet<string> = new Set(['missing', 'unknown_owner', 'decode']);

export class RoutePools {
  readonly source: RouteStateSource;
  readonly stats: RoutePoolsStats = { reads: 0, templates: { hit: 0, miss: 0, stale: 0 }, written: 0, deleted: 0, errors: 0 };
  private readonly writes = new Set<Promise<void>>();

  constructor(
    readonly pools: PlannerPools,
    private readonly registry: DecoderRegistry,
    private readonly options: RoutePoolsOptions = {},
  ) {
    this.source = plannerPoolsSource(pools);
  }

  /** Reads the route's pools again; throws TP_ERR_UNAVAILABLE naming the first one that could not be read. */
  async refresh(route: readonly RouteTemplateHop[]): Promise<void> {
    this.stats.reads++;
    const addresses = [...new Set(route.map((h) => h.pool))];
    const { loader, templates } = this.options;
    if (loader === undefined || templates === undefined) {
      const failed = await this.pools.refresh(addresses);
      for (const [address, reason] of failed) throw unreadable(address, reason);
      return;
    }

    const consult = addresses.some((a) => !loader.knows(a));
    const hash = routeTemplateHash(route);
    const stored = consult ? await this.readTemplate(templates, hash) : undefined;
    const prefetch = isRouteTemplate(stored) ? prefetchOf(stored) : [];
    const { results, rounds } = await loader.loadWithRounds(addresses, prefetch.length === 0 ? {} : { prefetch });
    let failure: PoolLoadResult | undefined;
    for (const r of results) {
      if (r.ok) this.pools.store(r.value);
      else failure ??= r;
    }

    const current = routeTemplateOf(addresses, (a) => loader.plannedAccounts(a), (this.options.now ?? Date.now)());
    let result: RouteTemplateResult | undefined;
    if (stored !== undefined) {
      result = stored === null ? RouteTemplateResult.Miss : isRouteTemplate(stored) && current !== undefined && sameRouteTemplate(stored, current) ? RouteTemplateResult.Hit : RouteTemplateResult.Stale;
      this.stats.templates[result]++;
      this.options.metrics?.routeTemplates.inc({ result });
      this.options.logger?.debug({ routeTemplate: result, hash, rounds, pools: addresses }, 'route pools read with their template');
    }
    if (failure !== undefined && !failure.ok) {
      if (GONE.has(failure.error.reason)) this.background(templates.deleteRouteTemplate(hash).then((had) => void (had && this.stats.deleted++)));
      throw unreadable(failure.error.address, `${failure.error.reason}: ${failure.error.message}`);
    }
    if (current !== undefined && (rounds === 2 || (result !== undefined && result !== RouteTemplateResult.Hit))) this.background(this.writeTemplate(templates, hash, current));
  }

  /** Waits for the template writes under way (tests, close). */
  async settled(): Promise<void> {
    while (this.writes.size > 0) await Promise.all([...this.writes]);
  }

  /** The SwapPools of `addresses`, in order (after `refresh`). */
  swapPools(addresses: readonly string[]): SwapPool[] {
    return addresses.map((a) => {
      const loaded = this.pools.loaded(a);
      if (loaded === undefined) throw new TpError(ErrorCode.Unavailable, `pool ${a} has not been read`, { context: { pool: a } });
      return swapPoolOfLoaded(loaded, this.registry);
    });
  }

  /** The oldest slot the route's pools were read at. */
  oldestSlot(addresses: readonly string[]): bigint | undefined {
    let slot: bigint | undefined;
    for (const a of addresses) {
      const s = this.pools.loaded(a)?.slot;
      if (s !== undefined && (slot === undefined || s < slot)) slot = s;
    }
    return slot;
  }

  /** The stored template (null: none), or undefined when the store could not be read. */
  private async readTemplate(templates: KeySpace, hash: string): Promise<RouteTemplateValue | null | undefined> {
    try {
      return await templates.getRouteTemplate(hash);
    } catch (err) {
      this.stats.errors++;
      this.options.logger?.warn({ hash, err: err instanceof Error ? err.message : String(err) }, 'route template not read; the pools are read without it');
      return undefined;
    }
  }

  private async writeTemplate(templates: KeySpace, hash: string, template: RouteTemplateValue): Promise<void> {
    await templates.setRouteTemplate(hash, template);
    this.stats.written++;
  }

  /** Runs a template write or delete beside the trade; a failure is logged and counted. */
  private background(work: Promise<void>): void {
    const tracked = work.catch((err: unknown) => {
      this.stats.errors++;
      this.options.logger?.warn({ err: err instanceof Error ? err.message : String(err) }, 'route template not written');
    });
    this.writes.add(tracked);
    void tracked.finally(() => this.writes.delete(tracked));
  }
}

function unreadable(address: string, reason: string): TpError {
  return new TpError(ErrorCode.Unavailable, `pool ${address} could not be read: ${reason}`, { context: { pool: address } });
}
