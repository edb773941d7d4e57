import { describe, expect, it } from 'vitest';

import { ErrorCode } from '../errors.js';
import { RateLimiter } from './rate-limiter.js';
import { FakeClock } from '../quote/testing.js';

describe('RateLimiter', () => {
  it('allows a burst of 2 × rps, then answers the seconds to wait', () => {
    const clock = new FakeClock();
    const limiter = new RateLimiter({ rps: 20, now: clock.now });
    for (let i = 0; i < 40; i++) expect(limiter.take('a')).toBe(0);
    expect(limiter.take('a')).toBe(1);
    // Another client has its own bucket.
    expect(limiter.take('b')).toBe(0);
  });

  it('refills at rps tokens a second', () => {
    const clock = new FakeClock();
    const limiter = new RateLimiter({ rps: 2, now: clock.now });
    for (let i = 0; i < 4; i++) expect(limiter.take('a')).toBe(0);
    expect(limiter.take('a')).toBe(1);
    clock.advance(500);
    expect(limiter.take('a')).toBe(0);
    expect(limiter.take('a')).toBe(1);
    clock.advance(10_000);
    for (let i = 0; i < 4; i++) expect(limiter.take('a')).toBe(0);
    expect(limiter.take('a')).toBe(1);
  });

  it('answers a Retry-After of more than a second under a low rate', () => {
    const clock = new FakeClock();
    const limiter = new RateLimiter({ rps: 0.25, burst: 1, now: clock.now });
    expect(limiter.take('a')).toBe(0);
    expect(limiter.take('a')).toBe(4);
  });

  it('keeps at most maxClients buckets', () => {
    const limiter = new RateLimiter({ rps: 1, maxClients: 100 });
    for (let i = 0; i < 1000; i++) limiter.take(`client-${i}`);
    expect(limiter.clients).toBe(100);
  });

  it('refuses a rate that is not positive, naming it', () => {
    expect(() => new RateLimiter({ rps: 0 })).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'rps', value: 0 } }));
  });
});
