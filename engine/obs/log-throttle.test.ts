import { describe, expect, it } from 'vitest';

import { LogThrottle } from './log-throttle.js';

describe('LogThrottle', () => {
  it('allows one line per key per interval and reports how many it suppressed', () => {
    let t = 0;
    const throttle = new LogThrottle(1_000, () => t);
    expect(throttle.take('a')).toBe(0);
    expect(throttle.take('a')).toBe(-1);
    expect(throttle.take('a')).toBe(-1);
    expect(throttle.take('b')).toBe(0);
    t = 1_000;
    expect(throttle.take('a')).toBe(2);
    expect(throttle.take('a')).toBe(-1);
  });
});
