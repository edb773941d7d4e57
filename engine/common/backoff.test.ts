import { describe, expect, it } from 'vitest';

import { ErrorCode } from '../errors.js';
import { Backoff, Jitter } from './backoff.js';

/** The largest draw below 1, so jittered delays sit at their ceiling. */
const top = (): number => 1 - Number.EPSILON;

function delays(backoff: Backoff, n: number): number[] {
  return Array.from({ length: n }, () => backoff.next());
}

describe('Backoff', () => {
  it('grows by the factor from the base and stops at the cap (no jitter)', () => {
    const backoff = new Backoff({ baseMs: 100, factor: 2, capMs: 10_000, jitter: Jitter.None });
    expect(delays(backoff, 10)).toEqual([100, 200, 400, 800, 1600, 3200, 6400, 10_000, 10_000, 10_000]);
    expect(backoff.attempts).toBe(10);
  });

  it('full jitter draws between 0 and the capped exponential ceiling', () => {
    expect(delays(new Backoff({ jitter: Jitter.Full, random: top }), 9)).toEqual([100, 200, 400, 800, 1600, 3200, 6400, 10_000, 10_000]);
    expect(delays(new Backoff({ jitter: Jitter.Full, random: () => 0.5 }), 3)).toEqual([50, 100, 200]);
    expect(delays(new Backoff({ jitter: Jitter.Full, random: () => 0 }), 3)).toEqual([0, 0, 0]);
  });

  it('decorrelated jitter grows from the base, never below it, and is capped', () => {
    expect(delays(new Backoff({ jitter: Jitter.Decorrelated, random: top }), 9)).toEqual([
      200, 400, 800, 1600, 3200, 6400, 10_000, 10_000, 10_000,
    ]);
    expect(delays(new Backoff({ jitter: Jitter.Decorrelated, random: () => 0 }), 5)).toEqual([100, 100, 100, 100, 100]);
    let x = 7;
    const lcg = (): number => ((x = (x * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    for (const d of delays(new Backoff({ jitter: Jitter.Decorrelated, random: lcg }), 1000)) {
      expect(d).toBeGreaterThanOrEqual(100);
      expect(d).toBeLessThanOrEqual(10_000);
    }
  });

  it('stays at the cap through a long outage without overflowing', () => {
    const backoff = new Backoff({ jitter: Jitter.None, factor: 10 });
    const all = delays(backoff, 2000);
    expect(all.at(-1)).toBe(10_000);
    expect(all.every(Number.isFinite)).toBe(true);
  });

  it('starts again from the base after reset', () => {
    const backoff = new Backoff({ jitter: Jitter.Decorrelated, random: top });
    delays(backoff, 6);
    backoff.reset();
    expect(backoff.attempts).toBe(0);
    expect(delays(backoff, 2)).toEqual([200, 400]);
  });

  it('rejects a base, factor or cap that cannot back off', () => {
    expect(() => new Backoff({ baseMs: 0 })).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'baseMs', value: 0 } }));
    expect(() => new Backoff({ factor: 0.5 })).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'factor', value: 0.5 } }));
    expect(() => new Backoff({ baseMs: 100, capMs: 50 })).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'capMs', value: 50 } }));
  });
});

describe('Backoff.doubling (every retry loop of the engine)', () => {
  it('doubles from the base up to the cap, and starts again after reset', () => {
    const b = Backoff.doubling(100, 1_000);
    expect([b.next(), b.next(), b.next(), b.next(), b.next()]).toEqual([100, 200, 400, 800, 1_000]);
    b.reset();
    expect(b.next()).toBe(100);
  });
});
