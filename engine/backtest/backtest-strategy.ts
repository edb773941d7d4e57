/**
 * The strategy a backtest replays (`tidepool backtest --strategy`), built as the planner builds it,
 * on state of its own that nothing else sees:
 *
 * - arbitrage: ArbitrageStrategy on the replay's pools;
 * - grid: GridStrategy with its `strategy:state:{id}` in an in-process key space and its grid_orders
 *   in an embedded, in-memory PostgreSQL (PGlite, migrated like the platform's); a paper fill marks
 *   its order `filled` there, so the level is known filled as a live fill would make it (an order
 *   not filled expires after orderTtlMs and the level may trigger again);
 * - dca: DcaStrategy with its state in an in-process key space;
 * - signal: SignalStrategy with its state in an in-process key space, fed by a signal model
 *   replayed over the same events (the built-in TrendModel unless one is given).
 *
 * Parameters are checked by the strategy's own rules (`validateStrategyParameters`): an unknown key
 * or a bad value is TP_ERR_CONFIG_INVALID naming the field. Nothing of a live deployment is read or
 * written.
 */
import { ErrorCode, TpError } from '../errors.js';
import { deterministicUuid, Strategy, type ExecutionResult, type MarketEvent, type TradeOpportunity } from '../messages/index.js';
import { ArbitrageStrategy, DcaStrategy, GridStrategy, SignalStrategy, validateStrategyParameters, type PlannerStrategy } from '../planner/index.js';
import { TrendModel, type SignalModel } from '../signals/index.js';
import { KeySpace, MemoryStore, openMigratedDatabase, type SqlClient } from '../state/index.js';
import type { PlannerPools } from '../trading/index.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A strategy run under an id of its own (the grid's row UUID), its opportunities reported under `id`. */
class ReportedUnder implements PlannerStrategy {
  readonly type: Strategy;

  constructor(
    readonly id: string,
    private readonly inner: PlannerStrategy,
  ) {
    this.type = inner.type;
  }

  async onMarketEvent(event: MarketEvent, receivedAt: number): Promise<TradeOpportunity[]> {
    return (await this.inner.onMarketEvent(event, receivedAt)).map((op) => ({ ...op, strategyId: this.id }));
  }

  /** A result of an opportunity reported under this id goes back to the strategy under its own. */
  async onExecution(result: ExecutionResult): Promise<unknown> {
    return this.inner.onExecution?.({ ...result, strategyId: this.inner.id });
  }
}

export const BACKTEST_STRATEGIES = [Strategy.Arbitrage, Strategy.Grid, Strategy.Dca, Strategy.Signal] as const;

export interface BacktestStrategy {
  type: Strategy;
  strategies: (pools: PlannerPools, now: () => number) => PlannerStrategy[];
  /** The signal model replayed (signal strategies). */
  signals?: SignalModel;
  /** Releases the strategy's state (the embedded database). */
  close(): Promise<void>;
}

export interface BacktestStrategyOptions {
  /** The signal model of a signal strategy; default `new TrendModel()`. */
  signalModel?: SignalModel;
}

/** Reads `--strategy`: one of BACKTEST_STRATEGIES, else TP_ERR_USAGE. */
export function backtestStrategyType(text: string): Strategy {
  if (!(BACKTEST_STRATEGIES as readonly string[]).includes(text)) {
    throw new TpError(ErrorCode.Usage, `--strategy: unknown strategy ${JSON.stringify(text)}; expected one of ${BACKTEST_STRATEGIES.join(', ')}`, { context: { setting: 'strategy' } });
  }
  return text as Strategy;
}

/** The strategy `type` with `params` (checked first: TP_ERR_CONFIG_INVALID naming the field). */
export async function backtestStrategy(type: Strategy, id: string, params: Record<string, unknown>, options: BacktestStrategyOptions = {}): Promise<BacktestStrategy> {
  validateStrategyParameters(type, params);
  const store = new MemoryStore();
  const keys = new KeySpace(store, 'backtest:');
  let db: SqlClient | undefined;
  const close = async (): Promise<void> => {
    await db?.close();
    await store.close();
  };
  switch (type) {
    case Strategy.Arbitrage:
      return { type, strategies: (pools, now) => [new ArbitrageStrategy(id, params, pools, now)], close };
    case Strategy.Grid: {
      const grid = (await openMigratedDatabase({ dataDir: 'memory' })).db;
      db = grid;
      // grid_orders rows name a strategy_configs row by UUID: the grid runs under one derived from the id.
      const rowId = UUID.test(id) ? id : deterministicUuid(`backtest:grid:${id}`);
      await grid.query('INSERT INTO strategy_configs (id, strategy_type, parameters) VALUES ($1, $2, $3::jsonb)', [rowId, type, JSON.stringify(params)]);
      return {
        type,
        strategies: (pools, now) => [new ReportedUnder(id, new GridStrategy(rowId, params, { pools, keys, db: grid, now }))],
        close,
      };
    }
    case Strategy.Dca:
      return { type, strategies: (pools, now) => [new DcaStrategy(id, params, { pools, keys, now })], close };
    case Strategy.Signal:
      return { type, strategies: (pools, now) => [new SignalStrategy(id, params, { pools, keys, now })], signals: options.signalModel ?? new TrendModel(), close };
  }
}
