/**
 * TradeSignal, version 1 (schemas/trade-signal.schema.json): a view on a token's price, published
 * on `signals.<source>` (stream SIGNALS) by a signal source, or POSTed to the planner's /signals,
 * and turned into orders by the signal strategy (engine/planner/signal-strategy.ts).
 *
 *   encodeTradeSignal(signal)    → JSON bytes, after the schema check
 *   decodeTradeSignal(bytes)     → TradeSignal, or TP_ERR_MESSAGE_INVALID naming the field
 */
import { assertSchema, parseMessageJson } from './message-schema.js';

export const TRADE_SIGNAL_SCHEMA = 'trade-signal.schema.json';
export const TRADE_SIGNAL_VERSION = 1;
export const SIGNALS_SUBJECT_ROOT = 'signals';

export type SignalDirection = 'buy' | 'sell';

export interface TradeSignal {
  version: typeof TRADE_SIGNAL_VERSION;
  id: string;
  /** Who produced it: `[A-Za-z0-9_-]{1,64}`, the last token of its subject. */
  source: string;
  token: string;
  quoteMint?: string;
  direction: SignalDirection;
  /** Probability, 0 to 1, that the direction is right. */
  confidence: number;
  horizonMs: number;
  createdAt: number;
  pool?: string;
  details?: Record<string, unknown>;
}

/** `signals.<source>`, with an optional test prefix. */
export function tradeSignalSubject(source: string, prefix = ''): string {
  return `${prefix}${SIGNALS_SUBJECT_ROOT}.${source}`;
}

/** Throws TP_ERR_MESSAGE_INVALID unless `value` is a TradeSignal v1. */
export function validateTradeSignal(value: unknown): asserts value is TradeSignal {
  assertSchema(TRADE_SIGNAL_SCHEMA, 'TradeSignal', value);
}

export function encodeTradeSignal(signal: TradeSignal): Uint8Array {
  validateTradeSignal(signal);
  return Buffer.from(JSON.stringify(signal), 'utf8');
}

export function decodeTradeSignal(bytes: Uint8Array | string): TradeSignal {
  const value = parseMessageJson('TradeSignal', bytes);
  validateTradeSignal(value);
  return value;
}
