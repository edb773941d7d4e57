import { describe, expect, it } from 'vitest';

import { minOutputAmount } from '../quote/quote-wire.js';
import { aggregate, withSlippage } from './aggregate.js';
import { SOL, USDC, makeQuote } from './testing.js';
import { pairId } from './swap-route-event.js';
import type { PairKey } from './request-validation.js';

const PAIR_WIRE = { inputMint: SOL, outputMint: USDC, amount: '1000' };
const PAIR: PairKey = { pairId: pairId(SOL, USDC, 1000n), inputMint: SOL, outputMint: USDC, amount: 1000n };
const ON = { scoringEnabled: true, defaultProviderUptime: 0.95 };
const OFF = { scoringEnabled: false, defaultProviderUptime: 0.95 };
const q = (out: bigint, o: Parameters<typeof makeQuote>[2] = {}) => {
  const quote = makeQuote(PAIR_WIRE, out, { poolAgeSeconds: 7200, ...o });
  quote.routeHash = `hash-${out}`;
  return quote;
};

describe('aggregate', () => {
  it('a confidence-weighted tie goes to local', () => {
    const a = aggregate({ pair: PAIR, local: { quote: q(1000n) }, external: { quote: q(1000n) }, oracle: undefined, scoring: ON, now: 1 });
    expect(a.bestSource).toBe('QUOTE_SOURCE_LOCAL');
    expect(a.priceDifferencePct).toBe(0);
  });

  it('compares output × confidence', () => {
    // local 0.845 (age 0.3 + 1 hop 0.2 + no oracle 0.15 + uptime 0.095 + impact 0.1); external 3 hops: 0.765.
    // 1100 × 0.765 = 841.5 < 1000 × 0.845 = 845: local; 1200 × 0.765 = 918 > 845: external.
    const lose = aggregate({ pair: PAIR, local: { quote: q(1000n) }, external: { quote: q(1100n, { hops: 3 }) }, oracle: undefined, scoring: ON, now: 1 });
    expect(lose.bestSource).toBe('QUOTE_SOURCE_LOCAL');
    expect(lose.localConfidence!.score).toBe(0.845);
    expect(lose.externalConfidence!.score).toBe(0.765);
    const a = aggregate({ pair: PAIR, local: { quote: q(1000n) }, external: { quote: q(1200n, { hops: 3 }) }, oracle: undefined, scoring: ON, now: 1 });
    expect(a.bestSource).toBe('QUOTE_SOURCE_EXTERNAL');
    expect(a.confidence).toBe(a.externalConfidence!.score);
    expect(a.decision).toBe(a.externalConfidence!.decision);
    expect(a.priceDifferencePct).toBeCloseTo(20, 10);
    expect(a.routeHash).toBe('hash-1200');
    expect(a.route).toHaveLength(3);
  });

  it('compares output × confidence exactly above 2^53: one more atom at equal confidence wins', () => {
    const big = 1n << 60n;
    const a = aggregate({ pair: PAIR, local: { quote: q(big) }, external: { quote: q(big + 100n) }, oracle: undefined, scoring: ON, now: 1 });
    expect(a.localConfidence!.score).toBe(a.externalConfidence!.score);
    expect(a.bestSource).toBe('QUOTE_SOURCE_EXTERNAL');
    expect(a.outputAmount).toBe((big + 100n).toString());
  });

  it('scoring off: the larger output wins, confidence 0, decision Verify', () => {
    const a = aggregate({ pair: PAIR, local: { quote: q(1000n, { hops: 4 }) }, external: { quote: q(999n) }, oracle: undefined, scoring: OFF, now: 1 });
    expect(a.bestSource).toBe('QUOTE_SOURCE_LOCAL');
    expect(a.confidence).toBe(0);
    expect(a.decision).toBe('DECISION_VERIFY');
    expect(a.localConfidence?.scoringEnabled).toBe(false);
  });

  it('one source: its class, its errors kept for the other side, price difference 0', () => {
    const err = { code: 'TP_ERR_DEADLINE', grpcStatus: 4, message: 'late' };
    const a = aggregate({ pair: PAIR, local: { error: err }, external: { quote: q(990n) }, oracle: undefined, scoring: ON, now: 7 });
    expect(a).toMatchObject({ sourceClass: 'SOURCE_CLASS_EXTERNAL_ONLY', bestSource: 'QUOTE_SOURCE_EXTERNAL', localError: err, externalError: null, localQuote: null, localConfidence: null, priceDifferencePct: 0, aggregatedAtUnixMs: '7' });
  });

  it('no source: decision Skip, nothing best', () => {
    const a = aggregate({ pair: PAIR, local: {}, external: {}, oracle: undefined, scoring: ON, now: 1 });
    expect(a).toMatchObject({ sourceClass: 'SOURCE_CLASS_UNSPECIFIED', bestSource: 'QUOTE_SOURCE_UNSPECIFIED', decision: 'DECISION_SKIP', outputAmount: '0' });
  });

  it('applies the client slippage with floor(out × (10,000 − bps) / 10,000) to the best and both sides', () => {
    expect(minOutputAmount(18446744073709551615n, 50)).toBe((18446744073709551615n * 9950n) / 10000n);
    const a = withSlippage(aggregate({ pair: PAIR, local: { quote: q(1001n) }, external: { quote: q(999n) }, oracle: undefined, scoring: ON, now: 1 }), 100);
    expect(a.minOutputAmount).toBe('990');
    expect(a.localQuote).toMatchObject({ slippageBps: 100, minOutputAmount: '990' });
    expect(a.externalQuote).toMatchObject({ slippageBps: 100, minOutputAmount: '989' });
  });
});
