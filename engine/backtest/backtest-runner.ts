/**
 * A backtest: pool_update MarketEvents replayed, in stream order, through the planner's own
 * per-event logic (`PlannerService.handle`) and the paper executor's fill, into a report.
 *
 *   each message ─▶ its state applied (EventStateReplay) ─▶ warm-up (stored before `from`)? the pool is stored, the signal model reads it, nothing else
 *                                                          └▶ PlannerService.handle(event) with
 *                                                             PlannerPools over the replay (no RPC),
 *                                                             the clock at the event's timestamp,
 *                                                             a collector for a publisher
 *                                                          └▶ the signal model (if any) reads the event ─▶
 *                                                             PlannerService.handleSignal(each signal)
 *                                                          ─▶ each opportunity: a deterministic id,
 *                                                             the fill on the same pool states ─▶ report
 *                                                             (arbitrage: by profit mint; grid, DCA,
 *                                                             signal: the position of the token)
 *                                                          ─▶ the fill moves the pools it traded (FillImpact)
 *
 * Rules:
 * - The state of a pool is only ever the one its events carried: an event without state (an older
 *   publisher), a delta with no full state before it, or after a gap, is counted as skipped and
 *   the pool is not quoted on a guess (a pool not usable is left out of the strategies' cycles:
 *   PlannerPools holds only the states applied).
 * - The clock every component reads (`now`: pool ages, opportunity times) is the timestamp of the
 *   event being replayed, so nothing depends on when the backtest runs.
 * - Opportunity ids: arbitrage ids are random UUIDs in the live planner; here every opportunity's id
 *   is `deterministicUuid(backtest:<event id>:<strategy id>:<rank>)`.
 * - Fills move the pools they traded (fill-impact.ts, `movePools`, default on): each hop's pool takes
 *   the state its program's math leaves after the swap, until a market event of that pool brings a
 *   changed recorded state (one that re-announces the state the fill traded on leaves the move
 *   standing). A gap lasting over several events is thus traded once. With
 *   `movePools: false` fills leave the pools as recorded (each event trades the gap again).
 * - Signals (`signals`, a SignalModel such as the built-in TrendModel): the model reads every
 *   applied event, warm-up included, in stream order, and its signals go to the signal strategies
 *   at the event's time; the model depends on the events alone, so the replay is deterministic.
 * - Order strategies (grid, DCA, signal) keep their own ids (deterministic already), and each of
 *   their fills comes back to them as the executor's would: an ExecutionResult (`paper`, the fill's
 *   amounts as filledInput / filledOutput) through PlannerService.handleExecution, so the grid
 *   reconciles grid_orders and re-arms, and DCA counts its position, exactly as they do live.
 */
import { Registry } from 'prom-client';

import { isTpError } from '../errors.js';
import { EventStateReplay } from '../market/index.js';
import { type MarketEvent } from '../messages/index.js';
import { PlannerMetrics, PlannerService, priceOf, type PlannerStrategy } from '../planner/index.js';
import type { SignalModel } from '../signals/index.js';
import { PlannerPools } from '../trading/index.js';
import { deterministicUuid, ExecutionPath, Strategy, type ExecutionResult, type RouteHop, type TradeOpportunity } from '../messages/index.js';
import { BacktestReport, POSITION_STRATEGIES, type BacktestRange } from './backtest-report.js';
import { FillImpact } from './fill-impact.js';
import type { RangeMessage } from './market-event-range.js';

/** The paper fill of one opportunity on the pools as they are at that moment, or why it did not fill. */
export type FillOutcome =
  | { ok: true; path: string; input: bigint; output: bigint; fees: bigint; tip: bigint; net: bigint; meetsMinimum: boolean; hops?: RouteHop[] }
  | { ok: false; reason: string };

export type BacktestFill = (op: TradeOpportunity, pools: PlannerPools) => FillOutcome;

export interface BacktestOptions {
  range: BacktestRange;
  /** The strategies, built on the replay's pools and clock. */
  strategies: (pools: PlannerPools, now: () => number) => PlannerStrategy[];
  fill: BacktestFill;
  /** PoolCache staleness threshold of the replay's pools, ms; default PlannerPools'. */
  stalenessThresholdMs?: number;
  /** Fills move the pools they traded until the pool's next event (default true). */
  movePools?: boolean;
  /** A signal model replayed over the events; its signals go to the signal strategies. */
  signals?: SignalModel;
}

/** Collects what the planner would have published. */
class CollectingPublisher {
  readonly collected: TradeOpportunity[] = [];
  publish(op: TradeOpportunity): Promise<void> {
    this.collected.push(op);
    return Promise.resolve();
  }
}

export class Backtest {
  readonly report: BacktestReport;
  private readonly replay = new EventStateReplay();
  private readonly impact = new FillImpact(this.replay);
  private readonly pools: PlannerPools;
  private readonly service: PlannerService;
  private readonly strategies: PlannerStrategy[];
  private clock = 0;

  constructor(private readonly options: BacktestOptions) {
    this.report = new BacktestReport(options.range);
    const now = (): number => this.clock;
    this.pools = new PlannerPools(this.impact, { now, ...(options.stalenessThresholdMs === undefined ? {} : { stalenessThresholdMs: options.stalenessThresholdMs }) });
    this.strategies = options.strategies(this.pools, now);
    for (const s of this.strategies) this.report.strategy(s.type, s.id);
    this.service = new PlannerService({ plannerId: 'backtest', strategies: this.strategies, pools: this.pools, publisher: new CollectingPublisher(), metrics: new PlannerMetrics(new Registry()), now });
  }

  /** Replays every message of `messages` (in stream order); resolves with the report. */
  async run(messages: AsyncIterable<RangeMessage>): Promise<BacktestReport> {
    for await (const m of messages) await this.step(m);
    return this.report;
  }

  async step(m: RangeMessage): Promise<void> {
    const report = this.report;
    report.events.read++;
    if (!('type' in m.event)) {
      report.skip('invalid');
      return;
    }
    const event: MarketEvent = m.event;
    const outcome = this.replay.apply(event);
    if (outcome !== 'applied') {
      report.skip(outcome);
      return;
    }
    this.clock = event.timestamp;
    const signals = this.options.signals?.observe(event) ?? [];
    if (m.storedAt < this.options.range.from) {
      report.events.warmup++;
      const failed = await this.pools.refresh([event.poolAddress]);
      if (failed.size > 0) report.skip('load_failed');
      return;
    }
    let ops: TradeOpportunity[];
    try {
      ops = await this.service.handle(event, event.timestamp);
      for (const signal of signals) ops.push(...(await this.service.handleSignal(signal, event.timestamp)));
    } catch (err) {
      if (!isTpError(err)) throw err;
      report.skip('load_failed');
      return;
    }
    report.events.replayed++;
    const rank = new Map<string, number>();
    for (const op of ops) {
      const n = rank.get(op.strategyId) ?? 0;
      rank.set(op.strategyId, n + 1);
      // Arbitrage ids are random in the live planner; the order strategies' derive from their state already.
      if (op.strategy === Strategy.Arbitrage) op.id = deterministicUuid(`backtest:${event.id}:${op.strategyId}:${n}`);
      report.opportunity(op.strategy, op.strategyId);
      const fill = this.options.fill(op, this.pools);
      if (!fill.ok) {
        report.notFilled(op.strategy, op.strategyId, fill.reason);
        continue;
      }
      if (!fill.meetsMinimum) {
        report.notFilled(op.strategy, op.strategyId, 'below_minimum');
        continue;
      }
      const trade = {
        id: op.id,
        strategy: op.strategy,
        strategyId: op.strategyId,
        sourceEvent: event.id,
        slot: op.slot,
        timestamp: event.timestamp,
        path: fill.path,
        profitMint: op.profitMint,
        inputMint: op.inputMint,
        input: fill.input,
        output: fill.output,
        expectedProfit: op.expectedProfit,
        gross: op.inputMint === op.profitMint ? fill.output - fill.input : fill.output,
        fees: fill.fees,
        tip: fill.tip,
        net: fill.net,
        route: op.route.map((h) => h.pool),
      };
      const hop = op.route[0]!;
      if (POSITION_STRATEGIES.has(op.strategy) && op.side !== undefined && op.route.length === 1) {
        const buy = op.side === 'buy';
        report.orderTrade({ ...trade, side: op.side }, { strategy: op.strategy, strategyId: op.strategyId, pool: hop.pool, token: buy ? op.outputMint : op.inputMint, quoteMint: buy ? op.inputMint : op.outputMint });
        await this.service.handleExecution(paperResultOf(op, fill, event.timestamp));
      } else report.trade(trade);
      if (this.options.movePools !== false) this.impact.apply(fill.hops ?? op.route, this.pools);
    }
    this.markPositions();
  }

  /** Marks every position at its pool's price as the replay holds it now. */
  private markPositions(): void {
    for (const pool of this.report.positions.pools()) {
      const loaded = this.pools.loaded(pool);
      if (loaded !== undefined) this.report.positions.mark(pool, (token) => priceOf(loaded, token));
    }
  }
}

/** What the paper executor would publish for `op` filled as `fill` at `at`: a `paper` ExecutionResult with the fill's amounts. */
function paperResultOf(op: TradeOpportunity, fill: Extract<FillOutcome, { ok: true }>, at: number): ExecutionResult {
  return {
    version: 1,
    tradeId: op.id,
    opportunityId: op.id,
    strategy: op.strategy,
    strategyId: op.strategyId,
    executorId: 'backtest',
    path: fill.path === ExecutionPath.Bundle ? ExecutionPath.Bundle : ExecutionPath.Direct,
    status: 'paper',
    profitMint: op.profitMint,
    expectedProfit: op.expectedProfit,
    actualProfit: fill.net,
    filledInput: fill.input,
    filledOutput: fill.output,
    fees: fill.fees,
    tip: fill.tip,
    latency: { receivedAt: at, executionMs: 0 },
    completedAt: at,
  };
}
