/**
 * The arbitrage strategy of one strategy_configs row: its parameters (JSON, u64 as decimal
 * strings) read into ArbitrageSettings, and the planner run on the pool each market event names.
 *
 * Parameters (all optional): `baseMints` (string[], default wrapped SOL), `minProfitThreshold`,
 * `tip` (5,000 to 6,000), `computeUnitPrice` (micro-lamports), `screenAmount`, `maxInput` (decimal
 * strings), `maxLegs` (2 or 3), `opportunityTtlMs`, `maxStateAgeMs` (numbers).
 */
import { ErrorCode, TpError } from '../errors.js';
import type { MarketEvent } from '../messages/index.js';
import { ArbitragePlanner, DEFAULT_ARBITRAGE_SETTINGS, type ArbitrageSettings } from './arbitrage-planner.js';
import type { PlannerPools } from '../trading/index.js';
import type { ArbitrageFunding } from './arbitrage-funding.js';
import type { PlannerStrategy } from './planner-service.js';
import { Strategy, type TradeOpportunity } from '../messages/index.js';

const U64 = /^(0|[1-9][0-9]{0,19})$/;

function u64(params: Record<string, unknown>, key: string, fallback: bigint): bigint {
  const v = params[key];
  if (v === undefined) return fallback;
  if (typeof v !== 'string' || !U64.test(v)) throw new TpError(ErrorCode.ConfigInvalid, `strategy parameter ${key} must be a u64 decimal string, got ${JSON.stringify(v)}`, { context: { setting: key } });
  return BigInt(v);
}

function number(params: Record<string, unknown>, key: string, fallback: number): number {
  const v = params[key];
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new TpError(ErrorCode.ConfigInvalid, `strategy parameter ${key} must be a number, got ${JSON.stringify(v)}`, { context: { setting: key } });
  return v;
}

export function arbitrageSettingsOf(id: string, params: Record<string, unknown>): ArbitrageSettings {
  const d = DEFAULT_ARBITRAGE_SETTINGS;
  const baseMints = params['baseMints'] ?? d.baseMints;
  if (!Array.isArray(baseMints) || !baseMints.every((m) => typeof m === 'string')) throw new TpError(ErrorCode.ConfigInvalid, 'strategy parameter baseMints must be an array of mint addresses', { context: { setting: 'baseMints' } });
  const maxLegs = number(params, 'maxLegs', d.maxLegs);
  return {
    strategyId: id,
    baseMints: baseMints as string[],
    minProfitThreshold: u64(params, 'minProfitThreshold', d.minProfitThreshold),
    tip: u64(params, 'tip', d.tip),
    computeUnitPriceMicroLamports: u64(params, 'computeUnitPrice', d.computeUnitPriceMicroLamports),
    screenAmount: u64(params, 'screenAmount', d.screenAmount),
    maxInput: u64(params, 'maxInput', d.maxInput),
    maxLegs: maxLegs === 2 ? 2 : maxLegs === 3 ? 3 : (maxLegs as 2),
    opportunityTtlMs: number(params, 'opportunityTtlMs', d.opportunityTtlMs),
    maxStateAgeMs: number(params, 'maxStateAgeMs', d.maxStateAgeMs),
  };
}

/** The default parameters written to strategy_configs when no arbitrage row exists. */
export function defaultArbitrageParameters(): Record<string, unknown> {
  const d = DEFAULT_ARBITRAGE_SETTINGS;
  return { baseMints: [...d.baseMints], minProfitThreshold: d.minProfitThreshold.toString(), tip: d.tip.toString(), maxLegs: d.maxLegs, opportunityTtlMs: d.opportunityTtlMs };
}

export class ArbitrageStrategy implements PlannerStrategy {
  readonly type = Strategy.Arbitrage;
  readonly planner: ArbitragePlanner;

  constructor(
    readonly id: string,
    params: Record<string, unknown>,
    pools: PlannerPools,
    now: () => number = Date.now,
    funding?: ArbitrageFunding,
  ) {
    this.planner = new ArbitragePlanner(pools.cache, arbitrageSettingsOf(id, params), now, funding);
    pools.join(this.planner);
  }

  onMarketEvent(event: MarketEvent, receivedAt: number): TradeOpportunity[] {
    return this.planner.evaluatePool(event.poolAddress, { id: event.id, receivedAt });
  }
}
