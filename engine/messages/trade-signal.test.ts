import { describe, expect, it } from 'vitest';

import { ErrorCode, isTpError } from '../errors.js';
import { decodeTradeSignal, encodeTradeSignal, tradeSignalSubject, type TradeSignal } from './trade-signal.js';

const SOL = 'So11111111111111111111111111111111111111112';

const signal: TradeSignal = { version: 1, id: 'momentum:1', source: 'momentum', token: SOL, direction: 'buy', confidence: 0.72, horizonMs: 60_000, createdAt: 1_700_000_000_000 };

function violation(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (!isTpError(err) || err.code !== ErrorCode.MessageInvalid) return 'other';
    return (err.context as { path: string }).path;
  }
  return undefined;
}

describe('TradeSignal v1', () => {
  it('round-trips with its optional fields and names its subject', () => {
    const full: TradeSignal = { ...signal, quoteMint: SOL, pool: SOL, details: { p: 0.72 } };
    expect(decodeTradeSignal(encodeTradeSignal(signal))).toEqual(signal);
    expect(decodeTradeSignal(encodeTradeSignal(full))).toEqual(full);
    expect(tradeSignalSubject('momentum', 'T_')).toBe('T_signals.momentum');
  });

  it('names the field that breaks the schema', () => {
    expect(violation(() => encodeTradeSignal({ ...signal, confidence: 1.2 }))).toBe('/confidence');
    expect(violation(() => encodeTradeSignal({ ...signal, direction: 'long' as never }))).toBe('/direction');
    expect(violation(() => encodeTradeSignal({ ...signal, source: 'a.b' }))).toBe('/source');
    expect(violation(() => encodeTradeSignal({ ...signal, horizonMs: 0 }))).toBe('/horizonMs');
    expect(violation(() => encodeTradeSignal({ ...signal, token: 'nope' }))).toBe('/token');
    expect(violation(() => decodeTradeSignal(JSON.stringify({ ...signal, extra: 1 })))).toBe('/extra');
    expect(violation(() => decodeTradeSignal(JSON.stringify({ ...signal, version: 2 })))).toBe('/version');
    expect(violation(() => decodeTradeSignal('{'))).toBeDefined();
  });
});
