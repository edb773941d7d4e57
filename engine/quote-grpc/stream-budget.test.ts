import { describe, expect, it } from 'vitest';

import { ErrorCode } from '../errors.js';
import { QuoteBudget } from './stream-budget.js';

describe('QuoteBudget', () => {
  it('refills at its rate up to the burst', () => {
    let now = 0;
    const budget = new QuoteBudget(100, () => now, 5);
    expect(budget.available()).toBe(5);
    budget.spend(5);
    expect(budget.msUntil(2)).toBe(20);
    now = 1000;
    expect(budget.available()).toBe(5);
  });

  it('refuses a rate that is not a positive number, naming it', () => {
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new QuoteBudget(bad)).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'perSecond', value: bad } }));
    }
  });
});
