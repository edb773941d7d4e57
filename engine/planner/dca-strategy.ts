/**
 * Dollar-cost averaging (spec 03 DCAConfig): one buy of `amountPerOrder` every `intervalMinutes`
 * unless a bound says no, and exits at the stop loss or take profit.
 *
 * Parameters (strategy_configs.parameters), DCAConfig's fields: `token`, `quoteCurrency`,
 * `intervalMinutes`, `amountPerOrder` (quoteCurrency atoms spent per buy, decimal string), optional
 * `maxPrice` (do not buy above), `minPrice` (do not sell below), `stopLoss`, `takeProfit`, and
 * `maxPosition` (token atoms, decimal string); plus ours: `pool` (where it trades), `slippageBps`
 * (default 50), `orderTtlMs` (default 60,000). Prices raw: quoteCurrency atoms per token atom.
 *
 * On each market event for `pool` (events drive it; an interval without events decides at the next):
 * 1. exits, while the position is not empty: price ≤ stopLoss → sell it all (`stop_loss`); price ≥
 *    takeProfit → sell it all (`take_profit`); either is refused when price < minPrice
 *    (`below_min_price`);
 * 2. the interval k = ⌊(now − startAt) / interval⌋, when no decision was taken for it yet: buy,
 *    or skip with the reason: `above_max_price` (price > maxPrice), `max_position` (the position plus
 *    this buy's expected tokens would pass maxPosition), `no_quote` (the pool refused the swap).
 * Every decision (buy, sell, skip with its reason) is kept in `strategy:state:{id}` (`decisions`, the
 * last 100) and logged by the planner. The position and its average fill price come from the
 * executions' actual fills (`onExecution`); maxPosition counts the position plus the expected
 * tokens of buys not reconciled yet, so it stops buying once reached; an exit sells the actual
 * position and records its average fill price, and no second exit starts while one is pending. State is written before the opportunity is returned
 * and ids derive from (strategy, interval) or (strategy, exit, k), so a restart neither buys twice in
 * an interval nor repeats an exit.
 */
import type { KeySpace } from '../state/index.js';
import type { ExecutionResult, MarketEvent } from '../messages/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { deterministicUuid, Strategy, type TradeOpportunity } from '../messages/index.js';
import { orderOpportunity, priceOf } from './order-opportunity.js';
import type { PlannerPools } from '../trading/index.js';
import type { PlannerStrategy } from './planner-service.js';
import { StrategyParams } from './strategy-params.js';


export interface DcaConfig {
  token: string;
  quoteCurrency: string;
  intervalMinutes: number;
  amountPerOrder: bigint;
  maxPrice?: number;
  minPrice?: number;
  stopLoss?: number;
  takeProfit?: number;
  maxPosition: bigint;
  pool: string;
  slippageBps: number;
  orderTtlMs: number;
}

export function dcaConfigOf(params: Record<string, unknown>): DcaConfig {
  const p = new StrategyParams(params, 'dca');
  const c: DcaConfig = {
    token: p.address('token'),
    quoteCurrency: p.address('quoteCurrency'),
    intervalMinutes: p.number('intervalMinutes', undefined, 0),
    amountPerOrder: p.u64('amountPerOrder'),
    maxPosition: p.u64('maxPosition'),
    pool: p.address('pool'),
    slippageBps: p.number('slippageBps', 50, 0),
    orderTtlMs: p.number('orderTtlMs', 60_000, 1),
  };
  if (!(c.intervalMinutes > 0)) throw new TpError(ErrorCode.ConfigInvalid, 'strategy parameter intervalMinutes (dca) must be positive', { context: { setting: 'intervalMinutes' } });
  for (const k of ['maxPrice', 'minPrice', 'stopLoss', 'takeProfit'] as const) {
    const v = p.optionalNumber(k);
    if (v !== undefined) c[k] = v;
  }
  return c;
}

export type DcaAction = 'buy' | 'sell' | 'skip';

export interface DcaDecision {
  interval: number;
  at: number;
  action: DcaAction;
  reason: string;
  price: number;
  opportunityId?: string;
  /** Exits: the position's average fill price (quote atoms per token atom) when the exit was decided. */
  averageFillPrice?: number;
}

export interface DcaState {
  version: 1;
  startAt: number;
  /** Last interval a buy decision was taken for; -1 before the first. */
  lastInterval: number;
  /** Token atoms actually held: the sum of the executions' fills (buys received, sells spent). */
  position: string;
  /** Quote atoms actually spent on `position` (its average fill price is cost / position). */
  cost?: string;
  /** Orders sent and not reconciled yet: a buy's expected tokens count toward maxPosition. */
  pending?: Record<string, { side: 'buy' | 'sell'; expected: string }>;
  exits: number;
  decisions: DcaDecision[];
}

const KEEP_DECISIONS = 100;

export class DcaStrategy implements PlannerStrategy {
  readonly type = Strategy.Dca;
  readonly config: DcaConfig;
  private state: DcaState | undefined;

  constructor(
    readonly id: string,
    params: Record<string, unknown>,
    private readonly deps: { pools: PlannerPools; keys: KeySpace; now: () => number },
  ) {
    this.config = dcaConfigOf(params);
  }

  async currentState(): Promise<DcaState> {
    if (this.state !== undefined) return this.state;
    this.state = (await this.deps.keys.getStrategyState<DcaState>(this.id)) ?? { version: 1, startAt: this.deps.now(), lastInterval: -1, position: '0', exits: 0, decisions: [] };
    return this.state;
  }

  async onMarketEvent(event: MarketEvent, receivedAt: number): Promise<TradeOpportunity[]> {
    const c = this.config;
    if (event.poolAddress !== c.pool) return [];
    const loaded = this.deps.pools.loaded(c.pool);
    if (loaded === undefined) return [];
    const price = priceOf(loaded, c.token);
    if (price === undefined || priceOf(loaded, c.quoteCurrency) === undefined) throw new TpError(ErrorCode.ConfigInvalid, `dca ${this.id}: pool ${c.pool} does not trade ${c.token} for ${c.quoteCurrency}`, { context: { setting: 'pool' } });
    const state = await this.currentState();
    const now = this.deps.now();
    const interval = Math.floor((now - state.startAt) / (c.intervalMinutes * 60_000));
    const ops: TradeOpportunity[] = [];
    const decide = (d: Omit<DcaDecision, 'at' | 'price'>): void => {
      state.decisions.push({ ...d, at: now, price });
      if (state.decisions.length > KEEP_DECISIONS) state.decisions.splice(0, state.decisions.length - KEEP_DECISIONS);
    };
    const common = { strategy: Strategy.Dca, strategyId: this.id, loaded, slippageBps: c.slippageBps, ttlMs: c.orderTtlMs, now, stateAgeMs: Math.max(0, now - event.timestamp), sourceEvent: { id: event.id, receivedAt } };
    let changed = false;

    // 1. exits
    const pending = (state.pending ??= {});
    const position = BigInt(state.position);
    const selling = Object.values(pending).some((o) => o.side === 'sell');
    const exit = position > 0n && !selling ? (c.stopLoss !== undefined && price <= c.stopLoss ? 'stop_loss' : c.takeProfit !== undefined && price >= c.takeProfit ? 'take_profit' : undefined) : undefined;
    if (exit !== undefined) {
      if (c.minPrice !== undefined && price < c.minPrice) {
        const last = state.decisions[state.decisions.length - 1];
        if (last?.reason !== 'below_min_price' || last.interval !== interval) {
          decide({ interval, action: 'skip', reason: 'below_min_price' });
          changed = true;
        }
      } else {
        const id = deterministicUuid(`dca:${this.id}:exit:${state.exits}`);
        const op = orderOpportunity({ ...common, id, side: 'sell', inputMint: c.token, amount: position, details: { reason: exit, interval, price } });
        if (typeof op !== 'string') {
          state.exits++;
          pending[id] = { side: 'sell', expected: op.expectedOutput.toString() };
          decide({ interval, action: 'sell', reason: exit, opportunityId: id, averageFillPrice: averageFillPrice(state) });
          ops.push(op);
          changed = true;
        }
      }
    }

    // 2. this interval's buy
    if (interval > state.lastInterval) {
      state.lastInterval = interval;
      changed = true;
      const id = deterministicUuid(`dca:${this.id}:interval:${interval}`);
      if (c.maxPrice !== undefined && price > c.maxPrice) decide({ interval, action: 'skip', reason: 'above_max_price' });
      else {
        const op = orderOpportunity({ ...common, id, side: 'buy', inputMint: c.quoteCurrency, amount: c.amountPerOrder, details: { reason: 'interval', interval, price } });
        if (typeof op === 'string') decide({ interval, action: 'skip', reason: 'no_quote' });
        else if (BigInt(state.position) + pendingBuys(state) + op.expectedOutput > c.maxPosition) decide({ interval, action: 'skip', reason: 'max_position' });
        else {
          pending[id] = { side: 'buy', expected: op.expectedOutput.toString() };
          decide({ interval, action: 'buy', reason: 'interval', opportunityId: id });
          ops.push(op);
        }
      }
    }
    if (changed) await this.deps.keys.setStrategyState(this.id, state);
    return ops;
  }

  /**
   * Reconciles an ExecutionResult of one of this run's orders: the position moves by the wallet's
   * actual fill (tokens received by a buy, spent by a sell), and the cost by the quote actually
   * spent (a sell takes its share of the cost away, keeping the average fill price). A failed or
   * expired order fills nothing and only stops counting toward maxPosition. Returns false when the
   * result is not one of its pending orders.
   */
  async onExecution(result: ExecutionResult): Promise<boolean> {
    if (result.strategyId !== this.id) return false;
    const state = await this.currentState();
    const order = state.pending?.[result.opportunityId];
    if (order === undefined) return false;
    delete state.pending![result.opportunityId];
    const position = BigInt(state.position);
    const cost = BigInt(state.cost ?? '0');
    if (order.side === 'buy') {
      state.position = (position + (result.filledOutput ?? 0n)).toString();
      state.cost = (cost + (result.filledInput ?? 0n)).toString();
    } else {
      const sold = (result.filledInput ?? 0n) > position ? position : (result.filledInput ?? 0n);
      state.position = (position - sold).toString();
      state.cost = (position === 0n ? 0n : cost - (cost * sold) / position).toString();
    }
    await this.deps.keys.setStrategyState(this.id, state);
    return true;
  }
}

/** Expected tokens of the buys sent and not reconciled yet. */
function pendingBuys(state: DcaState): bigint {
  return Object.values(state.pending ?? {}).reduce((sum, o) => (o.side === 'buy' ? sum + BigInt(o.expected) : sum), 0n);
}

/** The position's average fill price (quote atoms per token atom), or undefined with no position. */
export function averageFillPrice(state: DcaState): number | undefined {
  const position = BigInt(state.position);
  return position > 0n ? Number(BigInt(state.cost ?? '0')) / Number(position) : undefined;
}
