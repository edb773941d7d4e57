import { describe, expect, it } from 'vitest';

import { CircuitBreakerStateValue } from '../obs/quote-metrics.js';
import { CircuitBreaker, CircuitState } from './circuit-breaker.js';
import { FakeClock } from '../quote/testing.js';

describe('CircuitBreaker', () => {
  it('opens after 5 consecutive failures, not before, and a success resets the count', () => {
    const clock = new FakeClock();
    const b = new CircuitBreaker({ now: clock.now });
    for (let i = 0; i < 4; i++) b.recordFailure();
    b.recordSuccess();
    for (let i = 0; i < 4; i++) b.recordFailure();
    expect(b.state).toBe(CircuitState.Closed);
    expect(b.allow()).toBe(true);
    b.recordFailure();
    expect(b.state).toBe(CircuitState.Open);
    expect(b.allow()).toBe(false);
    expect(b.gaugeValue).toBe(CircuitBreakerStateValue.open);
  });

  it('half-opens after the 30 s reset timeout and closes after 3 successes', () => {
    const clock = new FakeClock();
    const changes: string[] = [];
    const b = new CircuitBreaker({ now: clock.now, onStateChange: (s) => changes.push(s) });
    for (let i = 0; i < 5; i++) b.recordFailure();
    clock.advance(29_999);
    expect(b.state).toBe(CircuitState.Open);
    clock.advance(1);
    expect(b.state).toBe(CircuitState.HalfOpen);
    expect(b.allow()).toBe(true);
    expect(b.gaugeValue).toBe(CircuitBreakerStateValue.halfOpen);
    b.recordSuccess();
    b.recordSuccess();
    expect(b.state).toBe(CircuitState.HalfOpen);
    b.recordSuccess();
    expect(b.state).toBe(CircuitState.Closed);
    expect(b.gaugeValue).toBe(CircuitBreakerStateValue.closed);
    expect(changes).toEqual(['open', 'half-open', 'closed']);
  });

  it('goes back to open on a failure in half-open, with a new reset timeout', () => {
    const clock = new FakeClock();
    const b = new CircuitBreaker({ now: clock.now });
    for (let i = 0; i < 5; i++) b.recordFailure();
    clock.advance(30_000);
    b.recordSuccess();
    b.recordFailure();
    expect(b.state).toBe(CircuitState.Open);
    clock.advance(29_999);
    expect(b.state).toBe(CircuitState.Open);
    clock.advance(1);
    expect(b.state).toBe(CircuitState.HalfOpen);
  });
});
