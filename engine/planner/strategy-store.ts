/**
 * The planners' rows: `strategy_configs` (which strategies run, with what parameters) and
 * `planner_metrics` (one row per planner per interval).
 *
 * strategy_configs.parameters is the strategy's settings as JSON, u64 amounts as decimal strings:
 * arbitrage → ArbitrageParameters, grid → GridParameters, dca → DcaParameters (each strategy's module
 * reads and checks its own). A planner started for a strategy that has no enabled row gets a default
 * arbitrage row (arbitrage needs no operator input); grid and DCA need their token and bounds, so a
 * planner started for one without a row fails at start naming the table.
 */
import type { SqlQueryable } from '../state/index.js';
import { ErrorCode, TpError } from '../errors.js';
import type { Strategy } from '../messages/index.js';

export interface StrategyConfigRow {
  id: string;
  strategyType: Strategy;
  parameters: Record<string, unknown>;
  enabled: boolean;
  lastRun: Date | null;
}

interface RawRow {
  id: string;
  strategy_type: string;
  parameters: Record<string, unknown> | string;
  enabled: boolean;
  last_run: Date | null;
}

function rowOf(r: RawRow): StrategyConfigRow {
  return {
    id: r.id,
    strategyType: r.strategy_type as Strategy,
    parameters: typeof r.parameters === 'string' ? (JSON.parse(r.parameters) as Record<string, unknown>) : r.parameters,
    enabled: r.enabled,
    lastRun: r.last_run,
  };
}

export class StrategyStore {
  constructor(private readonly db: SqlQueryable) {}

  async insert(strategyType: Strategy, parameters: Record<string, unknown>, enabled = true): Promise<StrategyConfigRow> {
    const rows = await this.db.query<RawRow>(
      'INSERT INTO strategy_configs (strategy_type, parameters, enabled) VALUES ($1, $2::jsonb, $3) RETURNING id, strategy_type, parameters, enabled, last_run',
      [strategyType, JSON.stringify(parameters), enabled],
    );
    return rowOf(rows[0]!);
  }

  /** Enabled rows of the given types, oldest id order (stable). */
  async enabled(types: readonly Strategy[]): Promise<StrategyConfigRow[]> {
    const rows = await this.db.query<RawRow>(
      'SELECT id, strategy_type, parameters, enabled, last_run FROM strategy_configs WHERE enabled AND strategy_type = ANY($1::text[]) ORDER BY strategy_type, id',
      [[...types]],
    );
    return rows.map(rowOf);
  }

  /** The enabled rows the planner runs: every requested type must have one (arbitrage gets a default). */
  async forPlanner(types: readonly Strategy[], defaultArbitrage: () => Record<string, unknown>): Promise<StrategyConfigRow[]> {
    let rows = await this.enabled(types);
    if (types.includes('arbitrage') && !rows.some((r) => r.strategyType === 'arbitrage')) {
      await this.insert('arbitrage', defaultArbitrage());
      rows = await this.enabled(types);
    }
    for (const t of types) {
      if (!rows.some((r) => r.strategyType === t)) {
        throw new TpError(ErrorCode.ConfigInvalid, `no enabled strategy_configs row of strategy_type ${t}: insert one with its parameters (engine/planner/README.md)`, { context: { setting: 'strategy_configs', strategy: t } });
      }
    }
    return rows;
  }

  /** Every row, enabled or not, by type then id. */
  async all(): Promise<StrategyConfigRow[]> {
    const rows = await this.db.query<RawRow>('SELECT id, strategy_type, parameters, enabled, last_run FROM strategy_configs ORDER BY strategy_type, id');
    return rows.map(rowOf);
  }

  async setEnabled(id: string, enabled: boolean): Promise<void> {
    await this.db.query('UPDATE strategy_configs SET enabled = $2 WHERE id = $1', [id, enabled]);
  }

  async setParameters(id: string, parameters: Record<string, unknown>): Promise<void> {
    await this.db.query('UPDATE strategy_configs SET parameters = $2::jsonb WHERE id = $1', [id, JSON.stringify(parameters)]);
  }

  /** Deletes the row (grid_orders rows go with it, ON DELETE CASCADE). */
  async delete(id: string): Promise<void> {
    await this.db.query('DELETE FROM strategy_configs WHERE id = $1', [id]);
  }

  async markRun(id: string, at: Date): Promise<void> {
    await this.db.query('UPDATE strategy_configs SET last_run = $2 WHERE id = $1', [id, at]);
  }

  async recordMetrics(plannerId: string, at: Date, opportunitiesFound: number, avgProfit: number | null): Promise<void> {
    await this.db.query('INSERT INTO planner_metrics ("timestamp", planner_id, opportunities_found, avg_profit) VALUES ($1, $2, $3, $4) ON CONFLICT (planner_id, "timestamp") DO NOTHING', [at, plannerId, opportunitiesFound, avgProfit]);
  }
}
