import { describe, expect, it } from 'vitest';

import { ErrorCode } from '../errors.js';
import { Semaphore } from './semaphore.js';

describe('Semaphore', () => {
  it('holds at most `permits` at once and hands permits over in arrival order', async () => {
    const s = new Semaphore(2);
    const a = await s.acquire();
    const b = await s.acquire();
    expect(s.inUse).toBe(2);
    const order: string[] = [];
    const c = s.acquire().then((r) => (order.push('c'), r));
    const d = s.acquire().then((r) => (order.push('d'), r));
    await Promise.resolve();
    expect(order).toEqual([]);
    a();
    a(); // a second release of the same permit is ignored
    const releaseC = await c;
    expect(order).toEqual(['c']);
    expect(s.inUse).toBe(2);
    b();
    const releaseD = await d;
    expect(order).toEqual(['c', 'd']);
    releaseC();
    releaseD();
    expect(s.inUse).toBe(0);
    expect(() => new Semaphore(0)).toThrow(expect.objectContaining({ code: ErrorCode.ConfigInvalid, context: { setting: 'executor.maxConcurrentTrades', value: 0 } }));
  });
});
