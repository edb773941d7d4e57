/**
 * The executor's Prometheus metrics, on the executor's registry. The first four names are the ones
 * ops/prometheus/rules/executors.yml and the Grafana dashboard select on; every metric also carries
 * the registry's default label `executor` (the executor id) that those rules group by.
 *
 * | metric                                     | type      | labels                   | what                                                  |
 * |--------------------------------------------|-----------|--------------------------|-------------------------------------------------------|
 * | `executor_transactions_submitted_total`    | counter   | path, strategy           | trades accepted by the RPC node or the block engine    |
 * | `executor_transactions_landed_total`       | counter   | path, strategy           | trades confirmed on chain without error               |
 * | `executor_transactions_failed_total`       | counter   | path, strategy, reason   | trades that ended `failed` or `expired` (reason)       |
 * | `executor_execution_duration_seconds`      | histogram | path, strategy           | opportunity received → final outcome recorded         |
 * | `executor_submit_latency_seconds`          | histogram | path, strategy           | opportunity received → transaction submitted          |
 * | `executor_opportunities_skipped_total`     | counter   | strategy, reason         | opportunities not traded (expired, stale_state, ...)  |
 * | `executor_paper_trades_total`              | counter   | path, strategy           | paper fills recorded                                  |
 * | `executor_success_rate`                    | gauge     | (none)                   | landed / trades finished in the last metrics interval |
 * | `executor_trades_in_flight`                | gauge     | (none)                   | trades between wallet lock and recorded outcome       |
 * | `executor_route_templates_total`           | counter   | result                   | pool re-reads that consulted the route's template:    |
 * |                                            |           |                          | hit, miss, stale (route-pools.ts)                     |
 *
 * `interval()` closes a metrics interval and gives its `executor_metrics` row: tx_submitted (trades
 * accepted in the interval) and success_rate (of the trades that reached their final status in the
 * interval, the share that landed; null when none did). A trade's submission and outcome may fall
 * in two intervals, so the rate is not taken over the submitted count of the same interval.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export const EXECUTOR_METRIC_NAMES = {
  submitted: 'executor_transactions_submitted_total',
  landed: 'executor_transactions_landed_total',
  failed: 'executor_transactions_failed_total',
  duration: 'executor_execution_duration_seconds',
  submitLatency: 'executor_submit_latency_seconds',
  skipped: 'executor_opportunities_skipped_total',
  paper: 'executor_paper_trades_total',
  successRate: 'executor_success_rate',
  inFlight: 'executor_trades_in_flight',
  routeTemplates: 'executor_route_templates_total',
} as const;

/** Why an opportunity was not traded (label `reason` of the skipped counter). */
export const SkipReason = {
  Expired: 'expired',
  StaleState: 'stale_state',
  Unprofitable: 'unprofitable',
  RequoteRefused: 'requote_refused',
  NoWallet: 'no_wallet',
  /** The opportunity borrows its input and no configured reserve (`flashLoan.reserves`) lends that mint. */
  NoFlashLoanReserve: 'no_flash_loan_reserve',
} as const;
export type SkipReason = (typeof SkipReason)[keyof typeof SkipReason];

const SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class ExecutorMetrics {
  readonly submitted: Counter<'path' | 'strategy'>;
  readonly landed: Counter<'path' | 'strategy'>;
  readonly failed: Counter<'path' | 'strategy' | 'reason'>;
  readonly duration: Histogram<'path' | 'strategy'>;
  readonly submitLatency: Histogram<'path' | 'strategy'>;
  readonly skipped: Counter<'strategy' | 'reason'>;
  readonly paper: Counter<'path' | 'strategy'>;
  readonly successRate: Gauge;
  readonly inFlight: Gauge;
  readonly routeTemplates: Counter<'result'>;
  private intervalSubmitted = 0;
  private intervalLanded = 0;
  private intervalFinished = 0;

  constructor(registry: Registry) {
    const registers = [registry];
    this.submitted = new Counter({ name: EXECUTOR_METRIC_NAMES.submitted, help: 'Trades accepted by the RPC node (direct) or the block engine (bundle).', labelNames: ['path', 'strategy'], registers });
    this.landed = new Counter({ name: EXECUTOR_METRIC_NAMES.landed, help: 'Trades confirmed on chain without error.', labelNames: ['path', 'strategy'], registers });
    this.failed = new Counter({ name: EXECUTOR_METRIC_NAMES.failed, help: 'Trades that ended failed or expired (label reason).', labelNames: ['path', 'strategy', 'reason'], registers });
    this.duration = new Histogram({ name: EXECUTOR_METRIC_NAMES.duration, help: 'Seconds from receiving an opportunity to its trade outcome recorded.', labelNames: ['path', 'strategy'], buckets: SECONDS_BUCKETS, registers });
    this.submitLatency = new Histogram({ name: EXECUTOR_METRIC_NAMES.submitLatency, help: 'Seconds from receiving an opportunity to its transaction submitted.', labelNames: ['path', 'strategy'], buckets: SECONDS_BUCKETS, registers });
    this.skipped = new Counter({ name: EXECUTOR_METRIC_NAMES.skipped, help: 'Opportunities not traded, by reason.', labelNames: ['strategy', 'reason'], registers });
    this.paper = new Counter({ name: EXECUTOR_METRIC_NAMES.paper, help: 'Paper trades recorded (nothing sent).', labelNames: ['path', 'strategy'], registers });
    this.successRate = new Gauge({ name: EXECUTOR_METRIC_NAMES.successRate, help: 'Landed / finished trades over the last metrics interval (0 when none finished).', registers });
    this.inFlight = new Gauge({ name: EXECUTOR_METRIC_NAMES.inFlight, help: 'Trades between wallet lock and recorded outcome.', registers });
    this.routeTemplates = new Counter({ name: EXECUTOR_METRIC_NAMES.routeTemplates, help: 'Route pool re-reads that consulted the route template (result: hit, miss, stale).', labelNames: ['result'], registers });
  }

  recordSubmitted(path: string, strategy: string, receivedToSubmittedMs: number): void {
    this.submitted.inc({ path, strategy });
    this.submitLatency.observe({ path, strategy }, Math.max(0, receivedToSubmittedMs) / 1000);
    this.intervalSubmitted++;
  }

  recordOutcome(path: string, strategy: string, status: 'confirmed' | 'failed' | 'expired', executionMs: number): void {
    this.intervalFinished++;
    if (status === 'confirmed') {
      this.landed.inc({ path, strategy });
      this.intervalLanded++;
    } else {
      this.failed.inc({ path, strategy, reason: status });
    }
    this.duration.observe({ path, strategy }, Math.max(0, executionMs) / 1000);
  }

  /** Closes the interval: its executor_metrics row; sets the success rate gauge. */
  interval(): { txSubmitted: number; successRate: number | null } {
    const rate = this.intervalFinished === 0 ? null : this.intervalLanded / this.intervalFinished;
    this.successRate.set(rate ?? 0);
    const out = { txSubmitted: this.intervalSubmitted, successRate: rate };
    this.intervalSubmitted = 0;
    this.intervalLanded = 0;
    this.intervalFinished = 0;
    return out;
  }
}
