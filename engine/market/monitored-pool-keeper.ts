/**
 * Pool discovery that keeps the monitored set current by itself (`pools.discoverMints`): every
 * `pools.discoverInterval` the pools trading the mints are found on chain (pool-discovery.ts:
 * getProgramAccounts with a size and a mint filter on each DEX program, read and ranked by
 * liquidity), and the set the scanner watches follows:
 *
 * - a pool of the monitored set whose account is gone (closed) leaves it;
 * - new pools join in the discovery's ranking while the set is below `pools.maxCount`;
 * - the pools it holds otherwise stay, configured ones included (the set never drops a pool that
 *   is still there to make room: a pool ranked higher joins once a place frees up).
 *
 * Each change is applied at once (the scanner's `setPools`, as `POST /config/pools` does), logged
 * with the pools that joined and left, and counted. A run that fails (RPC down) changes nothing
 * and is counted as failed; the next one tries again.
 *
 * Metrics: `pool_discovery_runs_total{outcome}`, `pool_discovery_pools_added_total`,
 * `pool_discovery_pools_removed_total`, `pool_discovery_monitored_pools`.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

import type { Logger } from '../obs/index.js';
import type { PoolLoader } from '../pools/index.js';
import type { DiscoveredPool } from './pool-discovery.js';

export const DEFAULT_DISCOVER_INTERVAL_MS = 60_000;
export const DEFAULT_MAX_MONITORED_POOLS = 50;

export interface MonitoredPoolKeeperOptions {
  /** The pools trading the discovery's mints, ranked (discoverPools with its mints bound). */
  discover: () => Promise<DiscoveredPool[]>;
  /** Reads pools (to tell a closed one: its account is missing). */
  loader: PoolLoader;
  /** The monitored set now in effect. */
  current: () => readonly string[];
  /** Replaces the monitored set. */
  apply: (pools: string[]) => void;
  maxCount?: number;
  intervalMs?: number;
  registry?: Registry;
  logger?: Logger;
}

export interface KeeperRun {
  added: string[];
  removed: string[];
  monitored: number;
}

export class MonitoredPoolKeeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<KeeperRun | undefined> | undefined;
  private readonly maxCount: number;
  private readonly metrics: { runs: Counter<'outcome'>; added: Counter; removed: Counter; monitored: Gauge } | undefined;

  constructor(private readonly options: MonitoredPoolKeeperOptions) {
    this.maxCount = options.maxCount ?? DEFAULT_MAX_MONITORED_POOLS;
    const registers = options.registry === undefined ? undefined : [options.registry];
    this.metrics =
      registers === undefined
        ? undefined
        : {
            runs: new Counter({ name: 'pool_discovery_runs_total', help: 'Pool discovery runs, by outcome (ok: the monitored set checked; failed: discovery could not run)', labelNames: ['outcome'], registers }),
            added: new Counter({ name: 'pool_discovery_pools_added_total', help: 'Pools pool discovery added to the monitored set', registers }),
            removed: new Counter({ name: 'pool_discovery_pools_removed_total', help: 'Pools pool discovery removed from the monitored set (closed)', registers }),
            monitored: new Gauge({ name: 'pool_discovery_monitored_pools', help: 'Pools in the monitored set after the last discovery run', registers }),
          };
  }

  /** Runs now, then every interval. */
  start(): void {
    const tick = (): void => {
      void this.runOnce();
    };
    tick();
    this.timer = setInterval(tick, this.options.intervalMs ?? DEFAULT_DISCOVER_INTERVAL_MS);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One run (one at a time: a run asked for while one is going joins it). Undefined when it failed. */
  runOnce(): Promise<KeeperRun | undefined> {
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async run(): Promise<KeeperRun | undefined> {
    const log = this.options.logger;
    let discovered: DiscoveredPool[];
    let gone: Set<string>;
    const current = [...this.options.current()];
    try {
      discovered = await this.options.discover();
      const reads = current.length === 0 ? [] : await this.options.loader.load(current);
      gone = new Set(reads.flatMap((r, i) => (!r.ok && r.error.reason === 'missing' ? [current[i]!] : [])));
    } catch (err) {
      this.metrics?.runs.inc({ outcome: 'failed' });
      log?.warn({ err }, 'pool discovery failed; the monitored set is unchanged');
      return undefined;
    }
    const next = current.filter((p) => !gone.has(p));
    const held = new Set(next);
    const added: string[] = [];
    for (const pool of discovered) {
      if (next.length >= this.maxCount) break;
      if (pool.liquidity === null || held.has(pool.address)) continue;
      next.push(pool.address);
      held.add(pool.address);
      added.push(pool.address);
    }
    const removed = [...gone];
    this.metrics?.runs.inc({ outcome: 'ok' });
    this.metrics?.monitored.set(next.length);
    if (added.length > 0 || removed.length > 0) {
      this.options.apply(next);
      this.metrics?.added.inc(added.length);
      this.metrics?.removed.inc(removed.length);
      log?.info({ added, removed, monitored: next.length, maxCount: this.maxCount }, 'pool discovery changed the monitored set');
    }
    return { added, removed, monitored: next.length };
  }
}
