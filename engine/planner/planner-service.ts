/**
 * The planner service: market events in, trade opportunities out.
 *
 *   MARKET_EVENTS market.events.*.pool_update ──durable consumer, explicit ack (DeadLetterConsumer)──▶
 *     decode ─▶ re-read the pool (PlannerPools) ─▶ every strategy ─▶ publish each opportunity on
 *     trade.opportunities.<strategy> (TRADE_OPPORTUNITIES), its route's template written beside
 *     the first one on a route (route-template-writer.ts) ─▶ ack
 *
 * A message is acknowledged only after every opportunity it led to was stored by the stream. A
 * failure (pool unreadable, publish refused) is thrown: the consumer naks it and it comes back;
 * after 5 deliveries it goes to the dead-letter stream (engine/bus/dead-letter.ts). An event that
 * is not a valid MarketEvent, or disagrees with the pool it names as the planner read it
 * (market-event-checks.ts), is TP_ERR_MESSAGE_INVALID and goes to the dead letters at once.
 * Strategies run one event at a time, in order, so their state (grid levels, DCA intervals) is never
 * raced.
 */
import { ErrorCode, TpError } from '../errors.js';
import type { Logger } from '../obs/index.js';
import type { ExecutionResult, MarketEvent } from '../messages/index.js';
import { checkMarketEvent } from './market-event-checks.js';
import type { PlannerMetrics } from './planner-metrics.js';
import type { PlannerPools } from '../trading/index.js';
import type { RouteTemplateWriter } from './route-template-writer.js';
import type { StrategyStore } from './strategy-store.js';
import type { Strategy, TradeOpportunity, TradeSignal } from '../messages/index.js';

/** One configured strategy (one strategy_configs row). */
export interface PlannerStrategy {
  readonly id: string;
  readonly type: Strategy;
  /** The opportunities this event leads to (after the pool it names was refreshed). */
  onMarketEvent(event: MarketEvent, receivedAt: number): Promise<TradeOpportunity[]> | TradeOpportunity[];
  /** Called after an opportunity of this strategy was stored by the stream (grid/DCA record it). */
  onPublished?(op: TradeOpportunity): Promise<void> | void;
  /** Reconciles the outcome of one of its orders (grid, DCA: the actual fill). */
  onExecution?(result: ExecutionResult): Promise<unknown>;
  /** The opportunities a trade signal leads to (signal strategies; others leave it out). */
  onSignal?(signal: TradeSignal, receivedAt: number): Promise<TradeOpportunity[]> | TradeOpportunity[];
}

/** Where the opportunities go: the stream (OpportunityPublisher), or a backtest's collector. Rejects to fail the event. */
export interface OpportunitySink {
  publish(op: TradeOpportunity): Promise<unknown>;
}

export interface PlannerServiceOptions {
  plannerId: string;
  strategies: readonly PlannerStrategy[];
  pools: PlannerPools;
  publisher: OpportunitySink;
  metrics: PlannerMetrics;
  store?: StrategyStore;
  /** Writes a route's template when an opportunity on it is first published (route-template-writer.ts). */
  routeTemplates?: Pick<RouteTemplateWriter, 'ensure'>;
  logger?: Logger;
  now?: () => number;
}

export class PlannerService {
  private readonly now: () => number;
  private intervalTimer: NodeJS.Timeout | undefined;
  private running: readonly PlannerStrategy[];

  constructor(private readonly options: PlannerServiceOptions) {
    this.now = options.now ?? Date.now;
    this.running = options.strategies;
  }

  /** The strategies run now. */
  get strategies(): readonly PlannerStrategy[] {
    return this.running;
  }

  /**
   * Runs `next` from the next input on (StrategyConfigWatcher: strategy_configs changed). An input
   * being handled finishes with the strategies it started with.
   */
  replaceStrategies(next: readonly PlannerStrategy[]): void {
    this.running = next;
  }

  /** Handles one market event; resolves with the opportunities published. Throws to have it redelivered. */
  async handle(event: MarketEvent, receivedAt = this.now()): Promise<TradeOpportunity[]> {
    const { pools, metrics } = this.options;
    try {
      const failed = await pools.refresh([event.poolAddress]);
      const reason = failed.get(event.poolAddress);
      if (reason !== undefined) throw new TpError(ErrorCode.Unavailable, `pool ${event.poolAddress} could not be read: ${reason}`, { context: { pool: event.poolAddress } });
      checkMarketEvent(event, pools.loaded(event.poolAddress)!, this.now());
      const published = await this.run((s) => s.onMarketEvent(event, receivedAt), event.timestamp);
      metrics.events.inc({ outcome: 'ok' });
      return published;
    } catch (err) {
      metrics.events.inc({ outcome: 'failed' });
      throw err;
    }
  }

  /**
   * Handles one ExecutionResult (stream EXECUTION_ORDERS): the strategy that sent the order
   * reconciles it (grid_orders, DCA position). Throws to have it redelivered.
   */
  async handleExecution(result: ExecutionResult): Promise<void> {
    for (const s of this.running) if (s.id === result.strategyId) await s.onExecution?.(result);
  }

  /**
   * Handles one trade signal: every strategy that takes signals decides on it (reading its own
   * pool). Resolves with the opportunities published; throws to have it redelivered.
   */
  async handleSignal(signal: TradeSignal, receivedAt = this.now()): Promise<TradeOpportunity[]> {
    const { metrics } = this.options;
    try {
      const published = await this.run((s) => s.onSignal?.(signal, receivedAt) ?? [], signal.createdAt);
      metrics.signals.inc({ outcome: 'ok' });
      return published;
    } catch (err) {
      metrics.signals.inc({ outcome: 'failed' });
      throw err;
    }
  }

  /** Every strategy's opportunities for one input, each published (and recorded) before the next. */
  private async run(decide: (s: PlannerStrategy) => Promise<TradeOpportunity[]> | TradeOpportunity[], inputAt: number): Promise<TradeOpportunity[]> {
    const { publisher, metrics, logger } = this.options;
    const strategies = this.running;
    const published: TradeOpportunity[] = [];
    for (const strategy of strategies) {
      const ops = await decide(strategy);
      for (const op of ops) {
        // The route's template beside the publish (a Redis write the first time only), done before the ack.
        const template = this.options.routeTemplates?.ensure(op.route);
        try {
          await publisher.publish(op);
        } catch (err) {
          metrics.publishErrors.inc({ strategy: op.strategy });
          throw err;
        } finally {
          await template;
        }
        metrics.published(op, inputAt, this.now());
        await strategy.onPublished?.(op);
        published.push(op);
        logger?.info({ id: op.id, strategy: op.strategy, strategyId: op.strategyId, profit: op.expectedProfit.toString(), input: op.inputAmount.toString(), hops: op.route.length }, 'opportunity published');
      }
    }
    return published;
  }

  /** Writes a planner_metrics row and marks the strategies run, every `intervalMs`. */
  startMetricsRows(intervalMs: number): void {
    const store = this.options.store;
    if (store === undefined) return;
    const tick = async (): Promise<void> => {
      const at = new Date(this.now());
      const row = this.options.metrics.interval();
      try {
        await store.recordMetrics(this.options.plannerId, at, row.opportunitiesFound, row.avgProfit);
        for (const s of this.running) await store.markRun(s.id, at);
      } catch (err) {
        this.options.logger?.warn({ err }, 'planner_metrics row not written');
      }
    };
    this.intervalTimer = setInterval(() => void tick(), intervalMs);
    this.intervalTimer.unref();
    this.flushRow = tick;
  }

  private flushRow: (() => Promise<void>) | undefined;

  /** Stops the metrics rows, writing the last interval's. */
  async close(): Promise<void> {
    if (this.intervalTimer !== undefined) clearInterval(this.intervalTimer);
    this.intervalTimer = undefined;
    await this.flushRow?.();
    this.flushRow = undefined;
  }
}
