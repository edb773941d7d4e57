/**
 * A running planner follows strategy_configs without a restart: every `intervalMs` the enabled rows
 * of its strategy types are read, and when the set changed (a row added, paused, resumed, removed,
 * or its parameters edited) the planner runs the new set from its next input on. Polling, not LISTEN/NOTIFY: it works the
 * same on the embedded PGlite and through a connection pooler, and a change is seen within one
 * interval (default 2 s).
 *
 * A poll that fails (database away) is logged and retried at the next interval; the planner keeps
 * running the strategies it has. A row `build` refuses (parameters that no longer pass their
 * checks, edited by SQL) holds the whole change back: logged, and retried at the next poll.
 */
import type { Logger } from '../obs/index.js';
import type { Strategy } from '../messages/index.js';
import type { PlannerStrategy } from './planner-service.js';
import type { StrategyConfigRow, StrategyStore } from './strategy-store.js';

/** A strategy with its own cancelOpen (grid): called when its row is paused or removed. */
interface Cancellable {
  cancelOpen(): Promise<number>;
}

function cancellable(s: PlannerStrategy): s is PlannerStrategy & Cancellable {
  return typeof (s as Partial<Cancellable>).cancelOpen === 'function';
}

export interface StrategyConfigWatcherOptions {
  store: StrategyStore;
  types: readonly Strategy[];
  /** The rows running now with their strategies (the planner's start). */
  initial: readonly { row: StrategyConfigRow; strategy: PlannerStrategy }[];
  /** Builds the strategy of a new or edited row (the planner's factories); throws to refuse it. */
  build: (row: StrategyConfigRow) => Promise<PlannerStrategy> | PlannerStrategy;
  /** Runs the new set (PlannerService.replaceStrategies). */
  apply: (strategies: PlannerStrategy[]) => void;
  intervalMs?: number;
  logger?: Logger;
}

/** What identifies a running strategy: its type and parameters. */
function fingerprint(row: StrategyConfigRow): string {
  return JSON.stringify([row.strategyType, row.parameters]);
}

/**
 * Unchanged rows keep their strategy object (and its in-memory state); new or edited rows get a new
 * one from `build`; a strategy whose row is gone (paused, removed) or edited has its open orders
 * cancelled (grid: cancelOpen; the row's own state in the key space is kept for a resume).
 */
export class StrategyConfigWatcher {
  private running: Map<string, { print: string; strategy: PlannerStrategy }>;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<unknown> | undefined;

  constructor(private readonly options: StrategyConfigWatcherOptions) {
    this.running = new Map(options.initial.map((s) => [s.row.id, { print: fingerprint(s.row), strategy: s.strategy }]));
  }

  start(): void {
    this.timer = setInterval(() => {
      if (this.polling === undefined) this.polling = this.poll().finally(() => (this.polling = undefined));
    }, this.options.intervalMs ?? 2_000);
    this.timer.unref();
  }

  /** One poll: resolves with true when a change was applied. */
  async poll(): Promise<boolean> {
    const { store, types, logger } = this.options;
    let rows: StrategyConfigRow[];
    try {
      rows = await store.enabled(types);
    } catch (err) {
      logger?.warn({ err }, 'strategy_configs not read; keeping the running strategies');
      return false;
    }
    const next = new Map<string, { print: string; strategy: PlannerStrategy }>();
    const added: StrategyConfigRow[] = [];
    try {
      for (const row of rows) {
        const print = fingerprint(row);
        const was = this.running.get(row.id);
        if (was !== undefined && was.print === print) next.set(row.id, was);
        else {
          next.set(row.id, { print, strategy: await this.options.build(row) });
          added.push(row);
        }
      }
    } catch (err) {
      logger?.error({ err }, 'strategy_configs change not applied; retrying at the next poll');
      return false;
    }
    const dropped = [...this.running].filter(([id, s]) => next.get(id)?.strategy !== s.strategy);
    if (added.length === 0 && dropped.length === 0) return false;
    this.options.apply([...next.values()].map((s) => s.strategy));
    this.running = next;
    for (const [id, s] of dropped) {
      if (!cancellable(s.strategy)) continue;
      try {
        const cancelled = await s.strategy.cancelOpen();
        if (cancelled > 0) logger?.info({ id, cancelled }, 'open orders of a stopped strategy cancelled');
      } catch (err) {
        logger?.warn({ err, id }, 'open orders of a stopped strategy not cancelled');
      }
    }
    logger?.info({ added: added.map((r) => ({ id: r.id, type: r.strategyType })), stopped: dropped.map(([id]) => id) }, 'strategies reloaded from strategy_configs');
    return true;
  }

  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.polling;
  }
}
