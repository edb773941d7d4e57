/**
 * The wallet service's Prometheus metrics, the names ops/prometheus/rules/wallets.yml alerts on:
 *
 * | metric                                  | type    | labels                  | what                                     |
 * |-----------------------------------------|---------|-------------------------|------------------------------------------|
 * | `wallet_balance_actual`                 | gauge   | tier, address, token    | atoms held at the last sync (`SOL`: lamports) |
 * | `wallet_balance_expected`               | gauge   | tier, address, token    | atoms the wallet should hold             |
 * | `wallet_rebalance_transfers_total`      | counter | reason, status          | transfers settled: top_up / return_excess; confirmed, failed, expired |
 * | `wallet_rebalance_skipped_total`        | counter | token                   | top-ups the treasure could not fund      |
 * | `wallet_runs_total`                     | counter | kind, outcome           | sync or rebalance runs, ok or failed     |
 * | `wallet_last_sync_timestamp_seconds`    | gauge   |                         | when balances were last read in full     |
 *
 * The balance gauges are rewritten from the wallets table after every run, so a wallet disabled
 * or removed drops out of them.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

import type { TransferOutcome } from './rebalancer.js';
import type { WalletRecord } from './wallet-repository.js';

export const WALLET_METRIC_NAMES = {
  actual: 'wallet_balance_actual',
  expected: 'wallet_balance_expected',
  transfers: 'wallet_rebalance_transfers_total',
  skipped: 'wallet_rebalance_skipped_total',
  runs: 'wallet_runs_total',
  lastSync: 'wallet_last_sync_timestamp_seconds',
} as const;

type BalanceLabels = 'tier' | 'address' | 'token';

export class WalletMetrics {
  private readonly actual: Gauge<BalanceLabels>;
  private readonly expected: Gauge<BalanceLabels>;
  private readonly transfers: Counter<'reason' | 'status'>;
  private readonly skipped: Counter<'token'>;
  readonly runs: Counter<'kind' | 'outcome'>;
  private readonly lastSync: Gauge;

  constructor(registry: Registry) {
    this.actual = new Gauge({ name: WALLET_METRIC_NAMES.actual, help: 'Atoms a wallet held at the last sync (token SOL: lamports).', labelNames: ['tier', 'address', 'token'], registers: [registry] });
    this.expected = new Gauge({ name: WALLET_METRIC_NAMES.expected, help: 'Atoms a wallet is expected to hold (token SOL: lamports).', labelNames: ['tier', 'address', 'token'], registers: [registry] });
    this.transfers = new Counter({ name: WALLET_METRIC_NAMES.transfers, help: 'Rebalancing transfers settled, by reason (top_up, return_excess) and status (confirmed, failed, expired).', labelNames: ['reason', 'status'], registers: [registry] });
    this.skipped = new Counter({ name: WALLET_METRIC_NAMES.skipped, help: 'Worker top-ups the treasure could not fund, by token.', labelNames: ['token'], registers: [registry] });
    this.runs = new Counter({ name: WALLET_METRIC_NAMES.runs, help: 'Wallet service runs, by kind (sync, rebalance) and outcome (ok, failed).', labelNames: ['kind', 'outcome'], registers: [registry] });
    this.lastSync = new Gauge({ name: WALLET_METRIC_NAMES.lastSync, help: 'Unix time (seconds) of the last complete balance sync.', registers: [registry] });
  }

  /** Rewrites the balance gauges from the wallets as stored after a sync. */
  balances(wallets: readonly WalletRecord[], syncedAt: number): void {
    this.actual.reset();
    this.expected.reset();
    for (const w of wallets) {
      const tokens = new Set([...w.actualBalance.keys(), ...w.expectedBalance.keys()]);
      for (const token of tokens) {
        const labels = { tier: w.tier, address: w.address, token };
        this.actual.set(labels, Number(w.actualBalance.get(token) ?? 0n));
        const expected = w.expectedBalance.get(token);
        if (expected !== undefined) this.expected.set(labels, Number(expected));
      }
    }
    this.lastSync.set(syncedAt / 1000);
  }

  transfer(outcome: TransferOutcome): void {
    if (outcome.status === 'signed') return;
    this.transfers.inc({ reason: outcome.transfer.reason, status: outcome.status });
  }

  skip(token: string): void {
    this.skipped.inc({ token });
  }
}
