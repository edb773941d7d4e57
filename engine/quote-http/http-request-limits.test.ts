import { describe, expect, it } from 'vitest';

import { repeatedParameter } from './http-request-limits.js';

/** The rule written plainly: the first name seen a second time, in order, names compared as sent. */
function reference(query: string): string | undefined {
  const seen = new Set<string>();
  for (const segment of query.split('&')) {
    if (segment === '') continue;
    const eq = segment.indexOf('=');
    const name = eq === -1 ? segment : segment.slice(0, eq);
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return undefined;
}

describe('repeatedParameter', () => {
  it('names the first parameter given a second time', () => {
    expect(repeatedParameter('input=a&output=b&amount=1')).toBeUndefined();
    expect(repeatedParameter('a=1&b=2&b=3&a=4')).toBe('b');
    expect(repeatedParameter('a=1&&a')).toBe('a');
    expect(repeatedParameter('ab=1&a=2&b=3')).toBeUndefined();
    expect(repeatedParameter('=1&=2')).toBe('');
    expect(repeatedParameter('')).toBeUndefined();
    expect(repeatedParameter(undefined)).toBeUndefined();
  });

  it('agrees with the plain rule on random queries', () => {
    const parts = ['a', 'b', 'ab', 'a=1', 'b=', '=x', '', 'a=b=c', 'amount=5'];
    let seed = 7;
    const next = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % n;
    };
    for (let i = 0; i < 5_000; i++) {
      const query = Array.from({ length: next(6) }, () => parts[next(parts.length)]!).join('&');
      expect(repeatedParameter(query), query).toBe(reference(query));
    }
  });
});
