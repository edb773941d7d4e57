/**
 * The signal strategy (strategy type `signal`): TradeSignals in (engine/messages/trade-signal.ts,
 * from the bus or the planner's POST /signals), one-hop orders out, under risk limits.
 *
 * Parameters (strategy_configs.parameters): `token`, `quoteCurrency`, `pool` (where it trades,
 * a pool of token against quoteCurrency); `amountPerSignal` (u64, quoteCurrency atoms: a buy spends
 * it, a sell sells the tokens worth it at the pool's price, at most the position); `maxPosition`
 * (u64, token atoms); `minConfidence` (0 to 1, default 0.6); `cooldownMs` (default 60,000: the least
 * time between two orders); optional `sources` (the sources accepted, default every one);
 * `slippageBps` (50); `orderTtlMs` (60,000, cut to what is left of the signal's horizon).
 *
 * A signal is decided once (its id is remembered) and in this order, the first reason that holds
 * skipping it: `other_token` (not about this strategy's token, or measured in another quote mint;
 * not recorded), `source_not_accepted`, `stale` (received after createdAt + horizonMs), `from_future`
 * (createdAt more than MAX_CLOCK_SKEW_MS ahead), `low_confidence`, `cooldown`, then for a buy
 * `max_position` (the position plus this buy's expected tokens would pass maxPosition) and for a sell
 * `no_position`; `no_quote` when the pool refuses the swap. Every decision is kept in
 * `strategy:state:{id}` (`decisions`, the last 100) before the order is returned; the order's id
 * derives from (strategy, signal id). An order is kept in the state until the stream stored it
 * (`onPublished`): a signal redelivered after a failed publish publishes the same order again (the
 * stream drops a copy it already holds), so a signal is neither traded twice nor lost.
 *
 * The position counts what the orders are expected to fill, as DCA's does.
 */
import { ErrorCode, TpError } from '../errors.js';
import { decodeTradeOpportunity, deterministicUuid, encodeTradeOpportunity, Strategy, type MarketEvent, type TradeOpportunity, type TradeSignal } from '../messages/index.js';
import type { KeySpace } from '../state/index.js';
import type { PlannerPools } from '../trading/index.js';
import { MAX_CLOCK_SKEW_MS } from './market-event-checks.js';
import { orderOpportunity, priceOf } from './order-opportunity.js';
import type { PlannerStrategy } from './planner-service.js';
import { StrategyParams } from './strategy-params.js';

export interface SignalStrategyConfig {
  token: string;
  quoteCurrency: string;
  pool: string;
  amountPerSignal: bigint;
  maxPosition: bigint;
  minConfidence: number;
  cooldownMs: number;
  sources?: readonly string[];
  slippageBps: number;
  orderTtlMs: number;
}

export function signalConfigOf(params: Record<string, unknown>): SignalStrategyConfig {
  const p = new StrategyParams(params, 'signal');
  const c: SignalStrategyConfig = {
    token: p.address('token'),
    quoteCurrency: p.address('quoteCurrency'),
    pool: p.address('pool'),
    amountPerSignal: p.u64('amountPerSignal'),
    maxPosition: p.u64('maxPosition'),
    minConfidence: p.number('minConfidence', 0.6, 0),
    cooldownMs: p.number('cooldownMs', 60_000, 0),
    slippageBps: p.number('slippageBps', 50, 0),
    orderTtlMs: p.number('orderTtlMs', 60_000, 1),
  };
  if (c.minConfidence > 1) throw new TpError(ErrorCode.ConfigInvalid, 'strategy parameter minConfidence (signal) must be at most 1', { context: { setting: 'minConfidence' } });
  if (c.amountPerSignal === 0n) throw new TpError(ErrorCode.ConfigInvalid, 'strategy parameter amountPerSignal (signal) must be positive', { context: { setting: 'amountPerSignal' } });
  const sources = p.optionalStringList('sources', /^[A-Za-z0-9_-]{1,64}$/);
  if (sources !== undefined) c.sources = sources;
  return c;
}

export type SignalSkipReason = 'source_not_accepted' | 'stale' | 'from_future' | 'low_confidence' | 'cooldown' | 'max_position' | 'no_position' | 'no_quote';

export interface SignalDecision {
  signalId: string;
  source: string;
  at: number;
  action: 'buy' | 'sell' | 'skip';
  reason: SignalSkipReason | 'signal';
  confidence: number;
  price?: number;
  opportunityId?: string;
}

export interface SignalState {
  version: 1;
  /** Token atoms the orders are expected to hold, decimal string. */
  position: string;
  /** When the last order was taken (ms), for the cooldown. */
  lastOrderAt?: number;
  /** Ids of the signals decided, newest last (the last KEEP_SIGNAL_IDS). */
  seen: string[];
  /** Orders decided and not yet stored by the stream: signal id → the opportunity's JSON. */
  unpublished: Record<string, string>;
  decisions: SignalDecision[];
}

const KEEP_DECISIONS = 100;
const KEEP_SIGNAL_IDS = 1_000;

export class SignalStrategy implements PlannerStrategy {
  readonly type = Strategy.Signal;
  readonly config: SignalStrategyConfig;
  private state: SignalState | undefined;

  constructor(
    readonly id: string,
    params: Record<string, unknown>,
    private readonly deps: { pools: PlannerPools; keys: KeySpace; now: () => number; onDecision?: (d: SignalDecision) => void },
  ) {
    this.config = signalConfigOf(params);
  }

  /** Market events do not drive this strategy (signals do). */
  onMarketEvent(_event: MarketEvent): TradeOpportunity[] {
    return [];
  }

  async currentState(): Promise<SignalState> {
    this.state ??= (await this.deps.keys.getStrategyState<SignalState>(this.id)) ?? { version: 1, position: '0', seen: [], unpublished: {}, decisions: [] };
    return this.state;
  }

  async onSignal(signal: TradeSignal, receivedAt: number): Promise<TradeOpportunity[]> {
    const c = this.config;
    if (signal.token !== c.token || (signal.quoteMint !== undefined && signal.quoteMint !== c.quoteCurrency)) return [];
    const state = await this.currentState();
    if (state.seen.includes(signal.id)) return this.replayOf(signal);
    const now = this.deps.now();
    const ops: TradeOpportunity[] = [];
    const decide = (d: Omit<SignalDecision, 'signalId' | 'source' | 'at' | 'confidence'>): void => {
      state.decisions.push({ signalId: signal.id, source: signal.source, at: now, confidence: signal.confidence, ...d });
      if (state.decisions.length > KEEP_DECISIONS) state.decisions.splice(0, state.decisions.length - KEEP_DECISIONS);
    };
    const reason = this.gateOf(signal, state, now);
    if (reason !== undefined) decide({ action: 'skip', reason });
    else {
      const order = await this.orderOf(signal, state, now, receivedAt);
      if (typeof order === 'string') decide({ action: 'skip', reason: order });
      else {
        const tokens = signal.direction === 'buy' ? order.op.expectedOutput : order.op.inputAmount;
        state.position = (BigInt(state.position) + (signal.direction === 'buy' ? tokens : -tokens)).toString();
        state.lastOrderAt = now;
        decide({ action: signal.direction, reason: 'signal', price: order.price, opportunityId: order.op.id });
        state.unpublished[signal.id] = Buffer.from(encodeTradeOpportunity(order.op)).toString('utf8');
        ops.push(order.op);
      }
    }
    this.deps.onDecision?.(state.decisions[state.decisions.length - 1]!);
    state.seen.push(signal.id);
    if (state.seen.length > KEEP_SIGNAL_IDS) state.seen.splice(0, state.seen.length - KEEP_SIGNAL_IDS);
    await this.deps.keys.setStrategyState(this.id, state);
    return ops;
  }

  /** A signal seen before: its order again when the stream never stored it (same id: stored once). */
  private replayOf(signal: TradeSignal): TradeOpportunity[] {
    const json = this.state?.unpublished[signal.id];
    return json === undefined ? [] : [decodeTradeOpportunity(json)];
  }

  async onPublished(op: TradeOpportunity): Promise<void> {
    const state = await this.currentState();
    const signalId = op.sourceEvent?.id;
    if (signalId === undefined || state.unpublished[signalId] === undefined) return;
    delete state.unpublished[signalId];
    await this.deps.keys.setStrategyState(this.id, state);
  }

  /** The reason a signal is not traded, before any pool is read. */
  private gateOf(signal: TradeSignal, state: SignalState, now: number): SignalSkipReason | undefined {
    const c = this.config;
    if (c.sources !== undefined && !c.sources.includes(signal.source)) return 'source_not_accepted';
    if (now > signal.createdAt + signal.horizonMs) return 'stale';
    if (signal.createdAt > now + MAX_CLOCK_SKEW_MS) return 'from_future';
    if (signal.confidence < c.minConfidence) return 'low_confidence';
    if (state.lastOrderAt !== undefined && now < state.lastOrderAt + c.cooldownMs) return 'cooldown';
    if (signal.direction === 'sell' && BigInt(state.position) === 0n) return 'no_position';
    return undefined;
  }

  private async orderOf(signal: TradeSignal, state: SignalState, now: number, receivedAt: number): Promise<{ op: TradeOpportunity; price: number } | SignalSkipReason> {
    const c = this.config;
    const failed = await this.deps.pools.refresh([c.pool]);
    const why = failed.get(c.pool);
    if (why !== undefined) throw new TpError(ErrorCode.Unavailable, `signal ${this.id}: pool ${c.pool} could not be read: ${why}`, { context: { pool: c.pool } });
    const loaded = this.deps.pools.loaded(c.pool)!;
    const price = priceOf(loaded, c.token);
    if (price === undefined || priceOf(loaded, c.quoteCurrency) === undefined) throw new TpError(ErrorCode.ConfigInvalid, `signal ${this.id}: pool ${c.pool} does not trade ${c.token} for ${c.quoteCurrency}`, { context: { setting: 'pool' } });
    const position = BigInt(state.position);
    const buy = signal.direction === 'buy';
    // A sell sells the tokens worth amountPerSignal at the pool's raw price (quote atoms per token atom), at most the position.
    const amount = buy ? c.amountPerSignal : minBig(position, price > 0 ? BigInt(Math.floor(Number(c.amountPerSignal) / price)) : position);
    if (amount === 0n) return 'no_quote';
    const op = orderOpportunity({
      id: deterministicUuid(`signal:${this.id}:${signal.id}`),
      strategy: Strategy.Signal,
      strategyId: this.id,
      side: signal.direction,
      loaded,
      inputMint: buy ? c.quoteCurrency : c.token,
      amount,
      slippageBps: c.slippageBps,
      ttlMs: Math.max(1, Math.min(c.orderTtlMs, signal.createdAt + signal.horizonMs - now)),
      now,
      stateAgeMs: 0, // read from RPC just now
      sourceEvent: { id: signal.id, receivedAt },
      details: { signal: { id: signal.id, source: signal.source, direction: signal.direction, confidence: signal.confidence, horizonMs: signal.horizonMs }, price },
    });
    if (typeof op === 'string') return 'no_quote';
    if (buy && position + op.expectedOutput > c.maxPosition) return 'max_position';
    return { op, price };
  }
}

function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
