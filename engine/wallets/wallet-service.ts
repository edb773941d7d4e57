/**
 * The wallet service (`tidepool wallets serve`): the fleet's balances kept in sync with the chain
 * and the workers kept within spec 03's thresholds, without a person at the keyboard.
 *
 *   every syncInterval:       sync every enabled wallet (WalletManager.sync: the wallets table and
 *                             the `wallet:balance:` keys)
 *   every rebalanceInterval:  instead, a rebalancing run (Rebalancer.run: settle open transfers,
 *                             sync, plan, transfer, sync again), unless rebalancing is off
 *   after each run:           the balance gauges from the wallets table; outcomes counted
 *
 * Runs never overlap: the next is scheduled when one ends. A run that fails (RPC, database, a
 * transfer not confirmed in time: it stays journaled and the next run settles it) is logged and
 * counted, and the service goes on. `ready()` is true while the last complete sync is younger
 * than three sync intervals.
 */
import type { Logger } from '../obs/index.js';
import type { Rebalancer, RebalanceResult } from './rebalancer.js';
import type { WalletManager } from './wallet-manager.js';
import type { WalletMetrics } from './wallet-metrics.js';

export interface WalletServiceOptions {
  manager: WalletManager;
  /** Absent: balances are synced, nothing is moved. */
  rebalancer?: Rebalancer;
  syncIntervalMs: number;
  rebalanceIntervalMs: number;
  metrics: WalletMetrics;
  logger?: Logger;
  now?: () => number;
}

export interface WalletServiceStatus {
  rebalancing: boolean;
  lastSyncAt: number | null;
  lastRebalanceAt: number | null;
  lastError: string | null;
  runs: number;
  lastRebalance: { transfers: number; skipped: number; settled: number } | null;
}

export class WalletService {
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private nextRebalanceAt = 0;
  private readonly state: WalletServiceStatus;

  constructor(private readonly options: WalletServiceOptions) {
    this.now = options.now ?? Date.now;
    this.state = { rebalancing: options.rebalancer !== undefined, lastSyncAt: null, lastRebalanceAt: null, lastError: null, runs: 0, lastRebalance: null };
  }

  /** Starts the loop with a run now. */
  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  status(): WalletServiceStatus {
    return { ...this.state };
  }

  ready(): boolean {
    return this.state.lastSyncAt !== null && this.now() - this.state.lastSyncAt <= 3 * this.options.syncIntervalMs;
  }

  /** One run: a rebalance when one is due (and on), else a sync. Never throws; the outcome is in status(). */
  async runOnce(): Promise<void> {
    const { manager, rebalancer, metrics, logger } = this.options;
    const rebalance = rebalancer !== undefined && this.now() >= this.nextRebalanceAt;
    const kind = rebalance ? 'rebalance' : 'sync';
    try {
      if (rebalance) {
        this.nextRebalanceAt = this.now() + this.options.rebalanceIntervalMs;
        this.rebalanced(await rebalancer.run());
      } else {
        await manager.sync();
      }
      const at = this.now();
      metrics.balances(await manager.repo.list({ enabled: true }), at);
      this.state.lastSyncAt = at;
      this.state.lastError = null;
      metrics.runs.inc({ kind, outcome: 'ok' });
    } catch (err) {
      this.state.lastError = (err as Error).message;
      metrics.runs.inc({ kind, outcome: 'failed' });
      logger?.warn({ err, kind }, 'wallet run failed; the next one tries again');
    } finally {
      this.state.runs++;
    }
  }

  private rebalanced(result: RebalanceResult): void {
    const { metrics, logger } = this.options;
    for (const o of [...result.settled, ...result.executed]) metrics.transfer(o);
    for (const s of result.plan.skipped) metrics.skip(s.token);
    this.state.lastRebalanceAt = this.now();
    this.state.lastRebalance = { transfers: result.executed.length, skipped: result.plan.skipped.length, settled: result.settled.length };
    for (const o of result.executed) logger?.info({ signature: o.transfer.signature, reason: o.transfer.reason, token: o.transfer.token, amount: o.transfer.amount.toString(), status: o.status, error: o.error }, 'rebalancing transfer');
    for (const s of result.plan.skipped) logger?.warn({ worker: s.worker, token: s.token, why: s.why }, 'top-up skipped');
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.runOnce().finally(() => {
        this.running = undefined;
        this.schedule(this.options.syncIntervalMs);
      });
    }, delayMs);
  }

  /** Stops the loop; waits for a run in progress to end. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
