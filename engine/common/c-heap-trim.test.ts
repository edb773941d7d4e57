import { afterEach, describe, expect, it, vi } from 'vitest';

import { cHeapTrimAvailable, trimCHeap } from '../chain/index.js';
import { nativeAddon } from '../chain/native-addon.js';
import { CHeapTrim } from './c-heap-trim.js';

describe('CHeapTrim', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('trims every interval once started, counts what gave memory back, and stops', () => {
    vi.useFakeTimers();
    const answers = [true, false, true];
    const trim = vi.fn(() => answers.shift() ?? false);
    const t = new CHeapTrim(1_000, trim);
    t.start();
    t.start(); // idempotent: one timer
    vi.advanceTimersByTime(999);
    expect(trim).not.toHaveBeenCalled();
    vi.advanceTimersByTime(2_001);
    expect(t).toMatchObject({ trims: 3, released: 2 });
    t.stop();
    vi.advanceTimersByTime(10_000);
    expect(trim).toHaveBeenCalledTimes(3);
  });

  it('calls the add-on\'s malloc_trim when it is loaded, and is a no-op without it', () => {
    if (nativeAddon === null) {
      expect(cHeapTrimAvailable).toBe(false);
      expect(trimCHeap()).toBe(false);
      return;
    }
    expect(cHeapTrimAvailable).toBe(true);
    const native = vi.spyOn(nativeAddon, 'trimMalloc');
    try {
      const released = trimCHeap();
      expect(native).toHaveBeenCalledTimes(1);
      expect(released).toBe(native.mock.results[0]!.value);
    } finally {
      native.mockRestore();
    }
  });
});
