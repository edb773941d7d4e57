import { describe, expect, it } from 'vitest';

import {
  CONFIDENCE_WEIGHTS,
  decisionFor,
  oracleFactor,
  poolAgeFactor,
  providerFactor,
  routeFactor,
  scoreQuote,
  slippageFactor,
  youngestPoolAge,
} from './confidence.js';
import type { PairOraclePrice } from './contracts.js';
import { SOL, USDC, makeQuote } from './testing.js';

const oracle = (atomPrice: number): PairOraclePrice => ({ price: atomPrice, atomPrice, inputDecimals: 9, outputDecimals: 9, updatedAtMs: 0 });
const PAIR = { inputMint: SOL, outputMint: USDC, amount: '1000' };
const ON = { scoringEnabled: true, defaultProviderUptime: 0.95 };

describe('decision thresholds (docs/architecture.md §3)', () => {
  it.each([
    [1, 'DECISION_EXECUTE'],
    [0.8, 'DECISION_EXECUTE'],
    [0.7999999, 'DECISION_VERIFY'],
    [0.6, 'DECISION_VERIFY'],
    [0.5999999, 'DECISION_CAUTIOUS'],
    [0.4, 'DECISION_CAUTIOUS'],
    [0.3999999, 'DECISION_SKIP'],
    [0, 'DECISION_SKIP'],
  ])('score %s decides %s', (score, decision) => {
    expect(decisionFor(score)).toBe(decision);
  });
});

describe('confidence factors', () => {
  it('weights are spec 01 and sum to 1', () => {
    expect(CONFIDENCE_WEIGHTS).toEqual({ poolAge: 0.3, route: 0.2, oracle: 0.3, provider: 0.1, slippage: 0.1 });
    expect(Object.values(CONFIDENCE_WEIGHTS).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
  });

  it('pool age: 0.2 for a brand-new pool, rising linearly to 1 at one hour, capped there; unknown scores 0.5', () => {
    expect(poolAgeFactor(0).score).toBe(0.2);
    expect(poolAgeFactor(1800).score).toBeCloseTo(0.6, 12);
    expect(poolAgeFactor(3600).score).toBe(1);
    expect(poolAgeFactor(86_400).score).toBe(1);
    const unknown = poolAgeFactor(undefined);
    expect(unknown).toMatchObject({ inputKnown: false, score: 0.5, weight: 0.3, contribution: 0.15, inputUnit: 'seconds' });
  });

  it('pool age uses the youngest hop and is unknown when any hop does not report it', () => {
    const q = makeQuote(PAIR, 10n, { hops: 2, poolAgeSeconds: 100 });
    q.route[1]!.poolAgeSeconds = 50;
    expect(youngestPoolAge(q.route)).toBe(50);
    delete q.route[0]!.poolAgeSeconds;
    expect(youngestPoolAge(q.route)).toBeUndefined();
  });

  it('route: 1 hop 1.0, 2 hops 0.8, 3 hops 0.6, 4 or more 0.4; no hops unknown', () => {
    expect([1, 2, 3, 4, 7].map((h) => routeFactor(h).score)).toEqual([1, 0.8, 0.6, 0.4, 0.4]);
    expect(routeFactor(0)).toMatchObject({ inputKnown: false, score: 0.5 });
    expect(routeFactor(2)).toMatchObject({ input: 2, inputUnit: 'hops', contribution: 0.16 });
  });

  it('oracle: deviation 0 scores 1, 2.5% scores 0.5, 5% or more scores 0; no oracle price is unknown', () => {
    expect(oracleFactor(100, oracle(100)).score).toBe(1);
    expect(oracleFactor(102.5, oracle(100))).toMatchObject({ input: 0.025, score: 0.5, inputKnown: true });
    expect(oracleFactor(97.5, oracle(100)).score).toBe(0.5);
    expect(oracleFactor(105, oracle(100)).score).toBe(0);
    expect(oracleFactor(150, oracle(100)).score).toBe(0);
    expect(oracleFactor(100, undefined)).toMatchObject({ inputKnown: false, score: 0.5, contribution: 0.15 });
    expect(oracleFactor(Number.NaN, oracle(100)).inputKnown).toBe(false);
    expect(oracleFactor(100, oracle(0)).inputKnown).toBe(false);
  });

  it('provider: the reported uptime, else the default', () => {
    expect(providerFactor(0.99, 0.95)).toMatchObject({ input: 0.99, score: 0.99, inputKnown: true });
    expect(providerFactor(undefined, 0.95)).toMatchObject({ input: 0.95, score: 0.95 });
    expect(providerFactor(1.5, 0.95).score).toBe(1);
  });

  it('slippage: impact 0 scores 1, 1% scores 0.5, 2% or more scores 0', () => {
    expect(slippageFactor(0).score).toBe(1);
    expect(slippageFactor(0.01).score).toBe(0.5);
    expect(slippageFactor(0.02).score).toBe(0);
    expect(slippageFactor(0.5).score).toBe(0);
    expect(slippageFactor(Number.NaN).inputKnown).toBe(false);
  });
});

describe('scoreQuote', () => {
  it('a perfect quote scores exactly 1 and decides Execute', () => {
    const q = makeQuote(PAIR, 1000n, { poolAgeSeconds: 3600, providerUptime: 1, priceImpact: 0 });
    const s = scoreQuote(q, oracle(1), ON);
    expect(s.score).toBe(1);
    expect(s.decision).toBe('DECISION_EXECUTE');
    expect(s.factors.map((f) => f.kind)).toEqual([
      'CONFIDENCE_FACTOR_KIND_POOL_AGE',
      'CONFIDENCE_FACTOR_KIND_ROUTE',
      'CONFIDENCE_FACTOR_KIND_ORACLE',
      'CONFIDENCE_FACTOR_KIND_PROVIDER',
      'CONFIDENCE_FACTOR_KIND_SLIPPAGE',
    ]);
  });

  it('a score that is 0.8 on paper decides Execute, and just under decides Verify', () => {
    // pool age unknown (0.5 × 0.3 = 0.15) + route 1 (0.2) + oracle 1 (0.3) + provider 0.5 (0.05) + slippage 1 (0.1) = 0.8
    const q = makeQuote(PAIR, 1000n, { poolAgeSeconds: undefined, providerUptime: 0.5, priceImpact: 0 });
    const s = scoreQuote(q, oracle(1), ON);
    expect(s.score).toBe(0.8);
    expect(s.decision).toBe('DECISION_EXECUTE');
    const under = scoreQuote({ ...q, providerUptime: 0.49 }, oracle(1), ON);
    expect(under.score).toBeLessThan(0.8);
    expect(under.decision).toBe('DECISION_VERIFY');
  });

  it('unknown inputs score neutral: everything unknown but route and provider', () => {
    const q = makeQuote(PAIR, 1000n, { providerUptime: 0, priceImpact: 0.02 });
    // 0.15 (age unknown) + 0.2 (1 hop) + 0.15 (no oracle) + 0 + 0 = 0.5
    expect(scoreQuote(q, undefined, ON)).toMatchObject({ score: 0.5, decision: 'DECISION_CAUTIOUS' });
  });

  it('contributions sum to the score', () => {
    const q = makeQuote(PAIR, 1010n, { hops: 2, poolAgeSeconds: 600, providerUptime: 0.9, priceImpact: 0.003 });
    const s = scoreQuote(q, oracle(1), ON);
    expect(s.factors.reduce((a, f) => a + f.contribution, 0)).toBeCloseTo(s.score, 10);
    for (const f of s.factors) expect(f.contribution).toBeCloseTo(f.score * f.weight, 12);
  });

  it('scoring off: score 0, no factors, decision unspecified', () => {
    const s = scoreQuote(makeQuote(PAIR, 1000n), oracle(1), { scoringEnabled: false, defaultProviderUptime: 0.95 });
    expect(s).toEqual({ score: 0, decision: 'DECISION_UNSPECIFIED', factors: [], scoringEnabled: false });
  });
});
