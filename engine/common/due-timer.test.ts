import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { DueTimer } from './due-timer.js';

describe('DueTimer', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('fires once at the earliest armed time; a later time changes nothing, an earlier one moves it', () => {
    const fired: number[] = [];
    const t = new DueTimer(() => Date.now(), () => fired.push(Date.now()));
    const start = Date.now();
    t.arm(start + 100);
    t.arm(start + 500); // later: ignored
    t.arm(start + 40); // earlier: moved
    vi.advanceTimersByTime(39);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual([start + 40]);
    vi.advanceTimersByTime(1_000);
    expect(fired).toHaveLength(1); // disarmed after firing
    t.arm(start + 2_000); // armable again
    vi.advanceTimersByTime(1_000);
    expect(fired).toHaveLength(2);
  });

  it('rounds a fractional delay up, and cancel disarms', () => {
    let now = 0;
    const fired: number[] = [];
    const t = new DueTimer(() => now, () => fired.push(1));
    t.arm(10.2);
    vi.advanceTimersByTime(10);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual([1]);
    now = 20;
    t.arm(30);
    t.cancel();
    vi.advanceTimersByTime(100);
    expect(fired).toEqual([1]);
  });
});
