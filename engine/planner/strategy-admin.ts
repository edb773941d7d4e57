/**
 * Managing strategy_configs rows (the `tidepool strategies` command; a running planner picks the
 * changes up through StrategyConfigWatcher): add, list, show, pause, resume, remove.
 *
 * Parameters are checked before a row is written, by the parser the strategy itself runs
 * (gridParametersOf, dcaConfigOf, signalConfigOf, arbitrageSettingsOf), and a key the strategy does
 * not read is refused, so a typo never becomes a silently ignored setting. Each refusal is
 * TP_ERR_CONFIG_INVALID naming the field.
 *
 * `key=value` pairs are typed by the strategy's key table (PARAMETER_KINDS): u64 amounts stay decimal
 * strings, prices and counts become numbers, lists are comma-separated.
 *
 * Pausing or removing a grid cancels its open orders (grid_orders pending | partial → cancelled);
 * removing deletes the row and, by the foreign key, its grid_orders. `update` edits the parameters
 * (merged over the row's, checked the same way); a running planner rebuilds the strategy from them.
 *
 * `overview` / `show` add what the strategy itself keeps in `strategy:state:{id}` (given a key
 * space): DCA its position and what it cost (actual fills), grid the token it holds (levels bought
 * and not sold yet, × amountPerLevel, at the levels' buy prices). Given the pool's current price
 * (a running planner's pool cache), the position is also valued and its unrealized P&L given, in
 * quote atoms. Every summary also carries the realized P&L, position, fills and fees computed from
 * the strategy's trades (strategy-pnl.ts), kept per strategy between calls and brought up to date
 * from the trades changed since (StrategyPnlBooks), so a long-lived admin (the planner's API) reads
 * O(new trades) per call. The planner's HTTP API (engine/app/planner-strategy-routes.ts) and the console read
 * strategies only through this class.
 */
import { ErrorCode, TpError } from '../errors.js';
import { STRATEGIES, type Strategy } from '../messages/index.js';
import type { KeySpace, SqlQueryable } from '../state/index.js';
import { checkArbitrageSettings } from './arbitrage-planner.js';
import { arbitrageSettingsOf } from './arbitrage-strategy.js';
import { dcaConfigOf, type DcaState } from './dca-strategy.js';
import { gridLevels, gridParametersOf, type GridState } from './grid-strategy.js';
import { signalConfigOf } from './signal-strategy.js';
import { StrategyPnlBooks, emptyPnl, type PnlReadStats, type StrategyPnl } from './strategy-pnl.js';
import { StrategyStore, type StrategyConfigRow } from './strategy-store.js';

export type ParameterKind = 'address' | 'u64' | 'number' | 'list';

/** Every parameter each strategy reads, with its JSON type. */
export const PARAMETER_KINDS: Readonly<Record<Strategy, Readonly<Record<string, ParameterKind>>>> = {
  arbitrage: { baseMints: 'list', minProfitThreshold: 'u64', tip: 'u64', computeUnitPrice: 'u64', screenAmount: 'u64', maxInput: 'u64', maxLegs: 'number', opportunityTtlMs: 'number', maxStateAgeMs: 'number' },
  grid: { pool: 'address', token: 'address', lowerPrice: 'number', upperPrice: 'number', levels: 'number', amountPerLevel: 'u64', orderTtlMs: 'number', slippageBps: 'number' },
  dca: {
    token: 'address', quoteCurrency: 'address', pool: 'address', intervalMinutes: 'number', amountPerOrder: 'u64', maxPosition: 'u64',
    maxPrice: 'number', minPrice: 'number', stopLoss: 'number', takeProfit: 'number', slippageBps: 'number', orderTtlMs: 'number',
  },
  signal: {
    token: 'address', quoteCurrency: 'address', pool: 'address', amountPerSignal: 'u64', maxPosition: 'u64', minConfidence: 'number',
    cooldownMs: 'number', slippageBps: 'number', orderTtlMs: 'number', sources: 'list',
  },
};

function invalid(setting: string, message: string): TpError {
  return new TpError(ErrorCode.ConfigInvalid, message, { context: { setting } });
}

export function parseStrategyType(text: string | undefined): Strategy {
  if (text === undefined || !(STRATEGIES as readonly string[]).includes(text)) throw new TpError(ErrorCode.Usage, `strategy type must be one of ${STRATEGIES.join(', ')}, got ${JSON.stringify(text)}`);
  return text as Strategy;
}

/** `key=value` pairs typed by the strategy's key table. */
export function parametersFromPairs(type: Strategy, pairs: readonly string[]): Record<string, unknown> {
  const kinds = PARAMETER_KINDS[type];
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new TpError(ErrorCode.Usage, `parameter ${JSON.stringify(pair)} is not key=value`);
    const key = pair.slice(0, at);
    const value = pair.slice(at + 1);
    const kind = kinds[key];
    if (kind === undefined) throw unknownKey(type, key);
    if (kind === 'number') {
      const n = value.trim() === '' ? Number.NaN : Number(value);
      if (!Number.isFinite(n)) throw invalid(key, `strategy parameter ${key} (${type}) must be a number, got ${JSON.stringify(value)}`);
      out[key] = n;
    } else if (kind === 'list') {
      out[key] = value.split(',').map((s) => s.trim()).filter((s) => s !== '');
    } else {
      out[key] = value;
    }
  }
  return out;
}

function unknownKey(type: Strategy, key: string): TpError {
  return invalid(key, `strategy parameter ${key} is not read by ${type} strategies (they read: ${Object.keys(PARAMETER_KINDS[type]).join(', ')})`);
}

/** Checks parameters as the strategy will read them; throws TP_ERR_CONFIG_INVALID naming the field. */
export function validateStrategyParameters(type: Strategy, params: Record<string, unknown>): void {
  for (const key of Object.keys(params)) if (PARAMETER_KINDS[type][key] === undefined) throw unknownKey(type, key);
  switch (type) {
    case 'arbitrage':
      // The range checks (tip 5,000 to 6,000, maxLegs 2 or 3, ...) are the planner's: without them a
      // refused value was written and then held back by every running planner.
      checkArbitrageSettings(arbitrageSettingsOf('validation', params));
      return;
    case 'grid':
      gridParametersOf(params);
      return;
    case 'dca':
      dcaConfigOf(params);
      return;
    case 'signal':
      signalConfigOf(params);
      return;
  }
}

export interface StrategySummary extends StrategyConfigRow {
  /** grid_orders per status (grid strategies; empty for the others). */
  orders: Record<string, number>;
  /** Realized P&L, position, fills and fees from the strategy's trades (strategy-pnl.ts). */
  pnl: StrategyPnl;
}

export interface GridOrderRow {
  id: string;
  /** buy | sell; null for an order written before migration 006. */
  side: string | null;
  priceLevel: number;
  amount: bigint;
  filled: bigint;
  status: string;
}

export interface StrategyDetail extends StrategySummary {
  recentOrders: GridOrderRow[];
  position: StrategyPosition | null;
}

/**
 * What a strategy holds, from its own state: `held` token atoms; DCA also `cost` (quote atoms
 * actually spent on `held`) and the average fill price. null: the strategy keeps no position
 * (arbitrage, or nothing stored yet).
 */
export interface StrategyPosition {
  token: string;
  held: bigint;
  /** Quote atoms paid for `held`: DCA the actual fills, grid the held levels' buy prices. */
  cost: bigint;
  averageFillPrice?: number;
  /** Grid: levels bought and not sold yet. */
  levelsHeld?: number;
  /** The pool's price now (quote atoms per token atom), when the planner has the pool. */
  markPrice?: number;
  /** held × markPrice, quote atoms (rounded down). */
  value?: bigint;
  /** value − cost, quote atoms. */
  unrealizedPnl?: bigint;
}

export interface StrategyAdminOptions {
  /** The key space the planners keep their state in (positions); without it no position is shown. */
  keys?: KeySpace;
  /** The price of `token` in `pool` now (quote atoms per token atom), undefined when unknown. */
  price?: (pool: string, token: string) => number | undefined;
}

/** A strategy with its open grid orders and position (GET /strategies, the console). */
export interface StrategyView extends StrategySummary {
  openOrders: GridOrderRow[];
  position: StrategyPosition | null;
}

/** Open grid orders listed per strategy by `overview`. */
export const OPEN_ORDERS_SHOWN = 100;

interface RawOrder {
  id: string;
  side: string | null;
  price_level: number;
  amount: string;
  filled: string;
  status: string;
}

function orderOf(o: RawOrder): GridOrderRow {
  return { id: o.id, side: o.side, priceLevel: Number(o.price_level), amount: BigInt(o.amount), filled: BigInt(o.filled), status: o.status };
}

/** Quote atoms of a computed amount, rounded down. */
function atomsOf(amount: number): bigint {
  return Number.isFinite(amount) && amount > 0 ? BigInt(Math.floor(amount)) : 0n;
}

const UUID_PREFIX = /^[0-9a-f-]{4,36}$/i;

export class StrategyAdmin {
  private readonly store: StrategyStore;

  private readonly keys: KeySpace | undefined;
  /** The strategies' P&L books, kept between calls: each reads only the trades changed since the last. */
  private readonly pnl = new StrategyPnlBooks();

  constructor(
    private readonly db: SqlQueryable,
    private readonly options: StrategyAdminOptions = {},
  ) {
    this.store = new StrategyStore(db);
    this.keys = options.keys;
  }

  /** How the P&L books were read (rows fetched by the last call, strategies read in full). */
  get pnlStats(): Readonly<PnlReadStats> {
    return this.pnl.stats;
  }

  async add(type: Strategy, params: Record<string, unknown>, enabled = true): Promise<StrategyConfigRow> {
    validateStrategyParameters(type, params);
    return this.store.insert(type, params, enabled);
  }

  async list(): Promise<StrategySummary[]> {
    const rows = await this.store.all();
    const counts = await this.orderCounts(null);
    const pnl = await this.pnl.read(this.db, rows);
    await this.pnl.retain(rows.map((r) => r.id));
    return rows.map((r) => ({ ...r, orders: counts.get(r.id) ?? {}, pnl: pnl.get(r.id) ?? emptyPnl() }));
  }

  /** Every strategy with its order counts, open grid orders (up to OPEN_ORDERS_SHOWN each) and position. */
  async overview(): Promise<StrategyView[]> {
    const summaries = await this.list();
    const open = await this.db.query<RawOrder & { strategy_id: string }>(
      "SELECT strategy_id, id, side, price_level, amount::text AS amount, filled::text AS filled, status FROM grid_orders WHERE status IN ('pending', 'partial') ORDER BY strategy_id, price_level, id",
    );
    const byStrategy = new Map<string, GridOrderRow[]>();
    for (const o of open) {
      const list = byStrategy.get(o.strategy_id) ?? [];
      if (list.length < OPEN_ORDERS_SHOWN) list.push(orderOf(o));
      byStrategy.set(o.strategy_id, list);
    }
    return Promise.all(summaries.map(async (s) => ({ ...s, openOrders: byStrategy.get(s.id) ?? [], position: await this.positionOf(s) })));
  }

  /** The row whose id is `idOrPrefix` or the only one starting with it. */
  async resolve(idOrPrefix: string): Promise<StrategyConfigRow> {
    if (!UUID_PREFIX.test(idOrPrefix)) throw new TpError(ErrorCode.Usage, `strategy id ${JSON.stringify(idOrPrefix)} is not a uuid or a prefix of one (at least 4 characters)`);
    const rows = (await this.store.all()).filter((r) => r.id.startsWith(idOrPrefix.toLowerCase()));
    if (rows.length === 0) throw new TpError(ErrorCode.NotFound, `no strategy ${idOrPrefix} in strategy_configs (tidepool strategies list)`, { context: { strategy: idOrPrefix } });
    if (rows.length > 1) throw new TpError(ErrorCode.Usage, `strategy id prefix ${idOrPrefix} matches ${rows.length} strategies: give more of it`);
    return rows[0]!;
  }

  async show(idOrPrefix: string, recent = 20): Promise<StrategyDetail> {
    const row = await this.resolve(idOrPrefix);
    const counts = await this.orderCounts(row.id);
    const orders = await this.db.query<RawOrder>(
      'SELECT id, side, price_level, amount::text AS amount, filled::text AS filled, status FROM grid_orders WHERE strategy_id = $1 ORDER BY status, price_level, id LIMIT $2',
      [row.id, recent],
    );
    const pnl = await this.pnl.read(this.db, [row]);
    return {
      ...row,
      orders: counts.get(row.id) ?? {},
      pnl: pnl.get(row.id) ?? emptyPnl(),
      recentOrders: orders.map(orderOf),
      position: await this.positionOf(row),
    };
  }

  /**
   * Edits the parameters: `changes` merged over the row's (a key set to null is dropped), checked as
   * the strategy reads them before anything is written. Throws TP_ERR_CONFIG_INVALID naming the field.
   */
  async update(idOrPrefix: string, changes: Record<string, unknown>): Promise<StrategyConfigRow> {
    const row = await this.resolve(idOrPrefix);
    const parameters: Record<string, unknown> = { ...row.parameters };
    for (const [key, value] of Object.entries(changes)) {
      if (value === null) delete parameters[key];
      else parameters[key] = value;
    }
    validateStrategyParameters(row.strategyType, parameters);
    await this.store.setParameters(row.id, parameters);
    return { ...row, parameters };
  }

  /** The strategy's position from its own state (null without a key space, or for arbitrage / signal). */
  async positionOf(row: StrategyConfigRow): Promise<StrategyPosition | null> {
    if (this.keys === undefined) return null;
    try {
      if (row.strategyType === 'dca') {
        const state = await this.keys.getStrategyState<DcaState>(row.id);
        if (state === null || state === undefined) return null;
        const c = dcaConfigOf(row.parameters);
        const held = BigInt(state.position);
        const cost = BigInt(state.cost ?? '0');
        return this.marked({ token: c.token, held, cost, ...(held > 0n ? { averageFillPrice: Number(cost) / Number(held) } : {}) }, c.pool);
      }
      if (row.strategyType === 'grid') {
        const state = await this.keys.getStrategyState<GridState>(row.id);
        if (state === null || state === undefined) return null;
        const g = gridParametersOf(row.parameters);
        const levels = gridLevels(g);
        // A state of another number of levels (the grid was edited) holds nothing of these levels.
        const held = state.levels.length === levels.length ? levels.filter((_l, i) => state.levels[i]!.buyFilled && !state.levels[i]!.sellFilled) : [];
        const cost = held.reduce((sum, l) => sum + atomsOf(Number(g.amountPerLevel) * l.buyPrice), 0n);
        return this.marked({ token: g.token, held: BigInt(held.length) * g.amountPerLevel, cost, levelsHeld: held.length }, g.pool);
      }
    } catch {
      // Parameters edited by SQL into something the strategy refuses, or a state of another shape: no position shown.
      return null;
    }
    return null;
  }

  /** Disables the row; a grid's open orders are cancelled. Resolves with the orders cancelled. */
  async pause(idOrPrefix: string): Promise<{ row: StrategyConfigRow; cancelled: number }> {
    const row = await this.resolve(idOrPrefix);
    await this.store.setEnabled(row.id, false);
    const cancelled = await this.cancelOpenOrders(row.id);
    return { row: { ...row, enabled: false }, cancelled };
  }

  /** Enables the row again, once its parameters still pass the strategy's checks. */
  async resume(idOrPrefix: string): Promise<StrategyConfigRow> {
    const row = await this.resolve(idOrPrefix);
    validateStrategyParameters(row.strategyType, row.parameters);
    await this.store.setEnabled(row.id, true);
    return { ...row, enabled: true };
  }

  /** Deletes the row (its grid_orders go with it); open orders are cancelled first. */
  async remove(idOrPrefix: string): Promise<{ row: StrategyConfigRow; cancelled: number }> {
    const row = await this.resolve(idOrPrefix);
    const cancelled = await this.cancelOpenOrders(row.id);
    await this.store.delete(row.id);
    return { row, cancelled };
  }

  private marked(position: StrategyPosition, pool: string): StrategyPosition {
    const price = this.options.price?.(pool, position.token);
    if (price === undefined || !Number.isFinite(price)) return position;
    const value = atomsOf(Number(position.held) * price);
    return { ...position, markPrice: price, value, unrealizedPnl: value - position.cost };
  }

  private async cancelOpenOrders(id: string): Promise<number> {
    const rows = await this.db.query("UPDATE grid_orders SET status = 'cancelled' WHERE strategy_id = $1 AND status IN ('pending', 'partial') RETURNING id", [id]);
    return rows.length;
  }

  private async orderCounts(id: string | null): Promise<Map<string, Record<string, number>>> {
    const rows = await this.db.query<{ strategy_id: string; status: string; n: string }>(
      'SELECT strategy_id, status, count(*)::text AS n FROM grid_orders WHERE ($1::uuid IS NULL OR strategy_id = $1::uuid) GROUP BY strategy_id, status',
      [id],
    );
    const out = new Map<string, Record<string, number>>();
    for (const r of rows) {
      const m = out.get(r.strategy_id) ?? {};
      m[r.status] = Number(r.n);
      out.set(r.strategy_id, m);
    }
    return out;
  }
}
