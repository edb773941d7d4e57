import { describe, expect, it } from 'vitest';

import { formatFraction } from './swap-api-response.js';

describe('formatFraction', () => {
  it('writes fractions as plain decimals, never in exponent notation', () => {
    expect(formatFraction(0)).toBe('0');
    expect(formatFraction(0.0012)).toBe('0.0012');
    expect(formatFraction(0.000001)).toBe('0.000001');
    expect(formatFraction(1.2e-7)).toBe('0.00000012');
    expect(formatFraction(3e-21)).toBe('0');
  });

  it('clamps to [0, 1] and treats non-finite values as 0', () => {
    expect(formatFraction(-0.5)).toBe('0');
    expect(formatFraction(2)).toBe('1');
    expect(formatFraction(Number.NaN)).toBe('0');
  });
});
