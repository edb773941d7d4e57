/**
 * Grid trading (spec 03): levels between a lower and an upper price, and spec 03's trigger rule.
 *
 * Parameters (strategy_configs.parameters): `pool` (the pool traded), `token` (the mint traded; the
 * pool's other mint is the quote), `lowerPrice`, `upperPrice` (raw: quote atoms per token atom),
 * `levels` (price points, ≥ 2), `amountPerLevel` (token atoms, decimal string), `orderTtlMs`
 * (default 60,000), `slippageBps` (default 50).
 *
 * Levels: points p_k = lower + k·(upper − lower)/(levels − 1); level i (0 ≤ i < levels − 1) buys at
 * p_i and sells at p_(i+1).
 *
 * Trigger rule (spec 03, exactly): at price P, level i triggers a buy when P ≤ its buy price and it
 * is not buy-filled, and a sell when P ≥ its sell price and it is not sell-filled. Flag transitions
 * (ours): a triggered buy sets buy-filled, and its fill (onExecution) clears sell-filled; a triggered
 * sell sets sell-filled and its fill clears buy-filled — so a level alternates buy, sell, buy… and
 * never repeats a side at a price that stays put. A buy spends ⌈amountPerLevel × buy price⌉ quote atoms; a sell sells amountPerLevel tokens.
 *
 * grid_orders rows (one per triggered order, id = the opportunity id) and their statuses, by the
 * table in grid-order-lifecycle.ts:
 *   pending  → partial → filled     (ExecutionResults' actual fills: `filled` grows to `amount`)
 *   pending | partial → cancelled   (the strategy is disabled: `cancelOpen`; or its execution
 *                                    failed or expired without a fill: the side is armed again)
 *   pending | partial → expired     (orderTtlMs passed without a fill: swept at the next event; the
 *                                    level's flag for that side is cleared so it may trigger again)
 * The expiry time lives in the strategy state (grid_orders has no column for it).
 *
 * Restart: the flags, round counters and open orders are in `strategy:state:{id}` and written before
 * the opportunities are returned; opportunity ids derive from (strategy, level, side, round), so a
 * publish repeated after a crash is dropped by the stream's duplicate window, and a restarted planner
 * never triggers a level twice.
 */
import type { SqlQueryable, KeySpace } from '../state/index.js';
import type { ExecutionResult, MarketEvent } from '../messages/index.js';
import { deterministicUuid, Strategy, type TradeOpportunity } from '../messages/index.js';
import { orderOpportunity, priceOf } from './order-opportunity.js';
import type { PlannerPools } from '../trading/index.js';
import type { PlannerStrategy } from './planner-service.js';
import { StrategyParams } from './strategy-params.js';

import { ErrorCode, TpError } from '../errors.js';

import { afterFill, assertTransition, GridOrderStatus, OPEN_GRID_ORDER_STATUSES } from './grid-order-lifecycle.js';

export { GridOrderStatus } from './grid-order-lifecycle.js';

export interface GridParameters {
  pool: string;
  token: string;
  lowerPrice: number;
  upperPrice: number;
  levels: number;
  amountPerLevel: bigint;
  orderTtlMs: number;
  slippageBps: number;
}

export function gridParametersOf(params: Record<string, unknown>): GridParameters {
  const p = new StrategyParams(params, 'grid');
  const g: GridParameters = {
    pool: p.address('pool'),
    token: p.address('token'),
    lowerPrice: p.number('lowerPrice', undefined, 0),
    upperPrice: p.number('upperPrice', undefined, 0),
    levels: p.number('levels', undefined, 2),
    amountPerLevel: p.u64('amountPerLevel'),
    orderTtlMs: p.number('orderTtlMs', 60_000, 1),
    slippageBps: p.number('slippageBps', 50, 0),
  };
  if (!(g.upperPrice > g.lowerPrice)) throw new TpError(ErrorCode.ConfigInvalid, 'strategy parameter upperPrice (grid) must be above lowerPrice', { context: { setting: 'upperPrice' } });
  if (!Number.isInteger(g.levels)) throw new TpError(ErrorCode.ConfigInvalid, 'strategy parameter levels (grid) must be an integer', { context: { setting: 'levels' } });
  return g;
}

interface LevelState {
  buyFilled: boolean;
  sellFilled: boolean;
  round: number;
}

export interface GridState {
  version: 1;
  levels: LevelState[];
  open: Record<string, { level: number; side: 'buy' | 'sell'; expiresAt: number }>;
}

export interface GridLevel {
  index: number;
  buyPrice: number;
  sellPrice: number;
}

export function gridLevels(g: GridParameters): GridLevel[] {
  const step = (g.upperPrice - g.lowerPrice) / (g.levels - 1);
  const out: GridLevel[] = [];
  for (let i = 0; i < g.levels - 1; i++) out.push({ index: i, buyPrice: g.lowerPrice + i * step, sellPrice: g.lowerPrice + (i + 1) * step });
  return out;
}

export class GridStrategy implements PlannerStrategy {
  readonly type = Strategy.Grid;
  readonly params: GridParameters;
  readonly levels: GridLevel[];
  private state: GridState | undefined;

  constructor(
    readonly id: string,
    params: Record<string, unknown>,
    private readonly deps: { pools: PlannerPools; keys: KeySpace; db: SqlQueryable; now: () => number },
  ) {
    this.params = gridParametersOf(params);
    this.levels = gridLevels(this.params);
  }

  private async load(): Promise<GridState> {
    if (this.state !== undefined) return this.state;
    const saved = await this.deps.keys.getStrategyState<GridState>(this.id);
    const fresh = (round: number): LevelState[] => this.levels.map(() => ({ buyFilled: false, sellFilled: false, round }));
    if (saved === undefined || saved === null) this.state = { version: 1, levels: fresh(0), open: {} };
    else if (saved.levels.length === this.levels.length) this.state = saved;
    // A grid edited to another number of levels (tidepool strategies): the old flags mean nothing for
    // the new levels; rounds continue past the old ones so no order id is reused.
    else this.state = { ...saved, levels: fresh(Math.max(0, ...saved.levels.map((l) => l.round)) + 1) };
    return this.state;
  }

  async onMarketEvent(event: MarketEvent, receivedAt: number): Promise<TradeOpportunity[]> {
    if (event.poolAddress !== this.params.pool) return [];
    const loaded = this.deps.pools.loaded(this.params.pool);
    if (loaded === undefined) return [];
    const price = priceOf(loaded, this.params.token);
    if (price === undefined) throw new TpError(ErrorCode.ConfigInvalid, `grid ${this.id}: pool ${this.params.pool} does not trade ${this.params.token}`, { context: { setting: 'token' } });
    const state = await this.load();
    const now = this.deps.now();
    await this.expire(state, now);
    const quote = loaded.pool.tokenA === this.params.token ? loaded.pool.tokenB : loaded.pool.tokenA;
    const ops: TradeOpportunity[] = [];
    const rows: { id: string; side: 'buy' | 'sell'; price: number; amount: bigint }[] = [];
    for (const level of this.levels) {
      const ls = state.levels[level.index]!;
      for (const side of ['buy', 'sell'] as const) {
        const triggers = side === 'buy' ? price <= level.buyPrice && !ls.buyFilled : price >= level.sellPrice && !ls.sellFilled;
        if (!triggers) continue;
        const levelPrice = side === 'buy' ? level.buyPrice : level.sellPrice;
        const id = deterministicUuid(`grid:${this.id}:${level.index}:${side}:${ls.round}`);
        const amount = side === 'buy' ? BigInt(Math.ceil(Number(this.params.amountPerLevel) * levelPrice)) : this.params.amountPerLevel;
        const op = orderOpportunity({
          id, strategy: Strategy.Grid, strategyId: this.id, side, loaded, inputMint: side === 'buy' ? quote : this.params.token, amount,
          slippageBps: this.params.slippageBps, ttlMs: this.params.orderTtlMs, now, stateAgeMs: Math.max(0, now - event.timestamp),
          sourceEvent: { id: event.id, receivedAt }, details: { gridOrderId: id, level: level.index, price: levelPrice, marketPrice: price },
        });
        if (typeof op === 'string') continue; // the pool cannot fill it now: the level stays armed
        // The opposite side is re-armed by this order's fill (onExecution), not by its trigger.
        if (side === 'buy') ls.buyFilled = true;
        else ls.sellFilled = true;
        ls.round++;
        state.open[id] = { level: level.index, side, expiresAt: op.expiresAt };
        rows.push({ id, side, price: levelPrice, amount: side === 'buy' ? this.params.amountPerLevel : amount });
        ops.push(op);
      }
    }
    if (ops.length > 0) {
      // State first: a restart after this point never triggers these levels again.
      await this.deps.keys.setStrategyState(this.id, state);
      for (const r of rows) {
        await this.deps.db.query('INSERT INTO grid_orders (id, strategy_id, side, price_level, amount, filled, status) VALUES ($1, $2, $3, $4, $5, 0, $6) ON CONFLICT (id) DO NOTHING', [r.id, this.id, r.side, r.price, r.amount.toString(), GridOrderStatus.Pending]);
      }
    }
    return ops;
  }

  /** Open orders past their expiry: `expired` in grid_orders, their level's flag cleared. */
  private async expire(state: GridState, now: number): Promise<void> {
    let changed = false;
    for (const [id, o] of Object.entries(state.open)) {
      if (o.expiresAt > now) continue;
      const rows = await this.deps.db.query<{ status: string }>("UPDATE grid_orders SET status = 'expired' WHERE id = $1 AND status IN ('pending', 'partial') RETURNING status", [id]);
      if (rows.length > 0) {
        const ls = state.levels[o.level]!;
        if (o.side === 'buy') ls.buyFilled = false;
        else ls.sellFilled = false;
      }
      delete state.open[id];
      changed = true;
    }
    if (changed) await this.deps.keys.setStrategyState(this.id, state);
  }

  /**
   * Reconciles an ExecutionResult of one of this grid's orders (its opportunity id is the
   * grid_orders id): the wallet's actual fill (tokens received for a buy, spent for a sell) moves
   * the row by the lifecycle table; a filled buy re-arms the level's sell (one price point above)
   * and a filled sell its buy. A failed or expired execution that filled nothing cancels the order
   * and re-arms its own side. Returns the new status, or undefined when the result is not ours or
   * the order is already final.
   */
  async onExecution(result: ExecutionResult): Promise<GridOrderStatus | undefined> {
    if (result.strategyId !== this.id) return undefined;
    const rows = await this.deps.db.query<{ status: GridOrderStatus; amount: string; filled: string }>('SELECT status, amount::text, filled::text FROM grid_orders WHERE id = $1 AND strategy_id = $2', [result.opportunityId, this.id]);
    const row = rows[0];
    if (row === undefined || !OPEN_GRID_ORDER_STATUSES.includes(row.status)) return undefined;
    const state = await this.load();
    const open = state.open[result.opportunityId];
    if (open === undefined) return undefined;
    const side = open.side;
    const order = { id: result.opportunityId, status: row.status, amount: BigInt(row.amount), filled: BigInt(row.filled) };
    const fill = (side === 'buy' ? result.filledOutput : result.filledInput) ?? 0n;
    const ls = state.levels[open.level]!;
    let next: { filled: bigint; status: GridOrderStatus };
    if (fill > 0n) next = afterFill(order, fill);
    else if (result.status === 'failed' || result.status === 'expired') {
      assertTransition(order.status, GridOrderStatus.Cancelled, order.id);
      next = { filled: order.filled, status: GridOrderStatus.Cancelled };
      if (side === 'buy') ls.buyFilled = false;
      else ls.sellFilled = false;
    } else return order.status;
    if (next.status === GridOrderStatus.Filled) {
      if (side === 'buy') ls.sellFilled = false;
      else ls.buyFilled = false;
    }
    if (next.status !== GridOrderStatus.Partial) delete state.open[order.id];
    await this.deps.keys.setStrategyState(this.id, state);
    await this.deps.db.query('UPDATE grid_orders SET filled = $2, status = $3 WHERE id = $1 AND status = $4 AND filled = $5', [order.id, next.filled.toString(), next.status, order.status, order.filled.toString()]);
    return next.status;
  }

  /** pending | partial → cancelled for every open order of this strategy (disabling it). */
  async cancelOpen(): Promise<number> {
    const rows = await this.deps.db.query("UPDATE grid_orders SET status = 'cancelled' WHERE strategy_id = $1 AND status IN ('pending', 'partial') RETURNING id", [this.id]);
    const state = await this.load();
    state.open = {};
    await this.deps.keys.setStrategyState(this.id, state);
    return rows.length;
  }
}
