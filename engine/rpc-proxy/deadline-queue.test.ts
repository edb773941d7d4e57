import { describe, expect, it } from 'vitest';

import { DeadlineQueue, type Deadline } from './deadline-queue.js';

function entry(name: string, expired: string[]): Deadline {
  return {
    deadlineAt: 0,
    prevDeadline: null,
    nextDeadline: null,
    expire: () => expired.push(name),
  };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((r) => setImmediate(r));
}

describe('DeadlineQueue', () => {
  it('expires the entries still queued, in order, and never one removed before its deadline', async () => {
    const q = new DeadlineQueue(5);
    const expired: string[] = [];
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((n) => entry(n, expired)) as [Deadline, Deadline, Deadline, Deadline];
    q.add(a);
    q.add(b);
    q.add(c);
    q.add(d);
    q.remove(b);
    q.remove(d);
    expect(q.pending).toBe(2);
    await until(() => q.pending === 0);
    expect(expired).toEqual(['a', 'c']);
  });

  it('arms its one timer again for entries added after it emptied, and ignores a second remove', async () => {
    const q = new DeadlineQueue(2);
    const expired: string[] = [];
    const a = entry('a', expired);
    q.add(a);
    q.remove(a);
    q.remove(a);
    expect(q.pending).toBe(0);
    const b = entry('b', expired);
    q.add(b);
    await until(() => expired.length === 1);
    const c = entry('c', expired);
    q.add(c);
    await until(() => expired.length === 2);
    expect(expired).toEqual(['b', 'c']);
    expect(q.pending).toBe(0);
  });
});
