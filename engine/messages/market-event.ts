/**
 * MarketEvent and PriceUpdate, version 1 (schemas/market-event.schema.json,
 * schemas/price-update.schema.json): what the market scanner publishes on the MARKET_EVENTS stream.
 *
 *   MarketEvent  → market.events.<protocol>.<type>   (spec 03, e.g. market.events.dexa_amm.pool_update)
 *   PriceUpdate  → market.events.prices.<token>
 *
 * Both are plain JSON objects already in their wire form (slots and amounts are decimal strings);
 * `encode*` validates and serializes, `decode*` parses and validates (TP_ERR_MESSAGE_INVALID).
 */
import { type Dex } from '../dex/index.js';
import { assertSchema, invalidMessage, parseMessageJson } from './message-schema.js';

export const MARKET_EVENT_SCHEMA = 'market-event.schema.json';
export const PRICE_UPDATE_SCHEMA = 'price-update.schema.json';
export const MARKET_EVENTS_SUBJECT_ROOT = 'market.events';
/** The `<protocol>` token PriceUpdates use in place of a DEX. */
export const PRICE_SUBJECT_TOKEN = 'prices';

export const MarketEventType = { PoolUpdate: 'pool_update', LargeSwap: 'large_swap', LiquidityChange: 'liquidity_change' } as const;
export type MarketEventType = (typeof MarketEventType)[keyof typeof MarketEventType];

export interface MarketEvent {
  version: 1;
  id: string;
  type: MarketEventType;
  protocol: Dex;
  poolAddress: string;
  tokenA: string;
  tokenB: string;
  timestamp: number;
  /** u64 decimal string. */
  slot: string;
  data: Record<string, unknown>;
}

export interface PriceSource {
  dex: Dex;
  pool: string;
  price: number;
  liquidity: number;
  volume24h: number;
}

export interface PriceUpdate {
  version: 1;
  token: string;
  quoteToken: string;
  sources: PriceSource[];
  bestBid: number;
  bestAsk: number;
  spread: number;
  timestamp: number;
  slot: string;
}

/** `market.events.<protocol>.<type>`, with an optional test prefix. */
export function marketEventSubject(protocol: string, type: MarketEventType, prefix = ''): string {
  return `${prefix}${MARKET_EVENTS_SUBJECT_ROOT}.${protocol}.${type}`;
}

/** `market.events.prices.<token>`, with an optional test prefix. */
export function priceUpdateSubject(token: string, prefix = ''): string {
  return `${prefix}${MARKET_EVENTS_SUBJECT_ROOT}.${PRICE_SUBJECT_TOKEN}.${token}`;
}

export function encodeMarketEvent(event: MarketEvent): Uint8Array {
  assertSchema(MARKET_EVENT_SCHEMA, 'MarketEvent', event);
  return Buffer.from(JSON.stringify(event), 'utf8');
}

export function decodeMarketEvent(bytes: Uint8Array | string): MarketEvent {
  const value = parseMessageJson('MarketEvent', bytes);
  assertSchema(MARKET_EVENT_SCHEMA, 'MarketEvent', value);
  return value as MarketEvent;
}

/** Beyond the schema: bestAsk/bestBid come from the sources, the spread from them. */
function priceRuleViolations(p: PriceUpdate): string[] {
  const v: string[] = [];
  if (p.token === p.quoteToken) v.push('/quoteToken: must differ from token');
  const mid = (p.bestAsk + p.bestBid) / 2;
  if (mid > 0 && Math.abs((p.bestAsk - p.bestBid) / mid - p.spread) > 1e-9 * Math.max(1, Math.abs(p.spread))) v.push('/spread: must be (bestAsk - bestBid) / mid');
  return v;
}

export function encodePriceUpdate(update: PriceUpdate): Uint8Array {
  assertSchema(PRICE_UPDATE_SCHEMA, 'PriceUpdate', update);
  const rules = priceRuleViolations(update);
  if (rules.length > 0) throw invalidMessage('PriceUpdate', rules);
  return Buffer.from(JSON.stringify(update), 'utf8');
}

export function decodePriceUpdate(bytes: Uint8Array | string): PriceUpdate {
  const value = parseMessageJson('PriceUpdate', bytes);
  assertSchema(PRICE_UPDATE_SCHEMA, 'PriceUpdate', value);
  const rules = priceRuleViolations(value as PriceUpdate);
  if (rules.length > 0) throw invalidMessage('PriceUpdate', rules);
  return value as PriceUpdate;
}
