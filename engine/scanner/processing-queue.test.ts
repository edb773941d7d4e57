import { describe, expect, it } from 'vitest';

import { ProcessingQueue } from './processing-queue.js';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('ProcessingQueue', () => {
  it('processes in batches of at most batchSize with at most maxConcurrentProcessing in flight', async () => {
    const gates: ReturnType<typeof deferred>[] = [];
    const seen: number[][] = [];
    const q = new ProcessingQueue<number>({
      queueSizeLimit: 100,
      batchSize: 3,
      maxConcurrentProcessing: 2,
      process: (batch) => {
        seen.push(batch);
        const g = deferred();
        gates.push(g);
        return g.promise;
      },
    });
    for (let i = 0; i < 10; i++) q.push(i);
    // The first push starts a batch of one at once; the second fills the other slot.
    expect(seen).toEqual([[0], [1]]);
    expect(q.stats().inFlight).toBe(2);
    expect(q.size).toBe(8);
    gates[0]!.resolve();
    await gates[0]!.promise;
    await new Promise((r) => setImmediate(r));
    expect(seen[2]).toEqual([2, 3, 4]);
    for (let k = 1; k < 10; k++) {
      gates[k]?.resolve();
      await new Promise((r) => setImmediate(r));
    }
    await q.idle();
    expect(seen.flat()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(Math.max(...seen.map((b) => b.length))).toBe(3);
  });

  it('drops and counts what arrives when queueSizeLimit items wait, never buffering more', () => {
    const q = new ProcessingQueue<number>({ queueSizeLimit: 4, batchSize: 10, maxConcurrentProcessing: 1, process: () => new Promise(() => {}) });
    const accepted = Array.from({ length: 10 }, (_, i) => q.push(i));
    // One batch of one in flight, then four queued, then drops.
    expect(accepted).toEqual([true, true, true, true, true, false, false, false, false, false]);
    expect(q.stats()).toMatchObject({ queued: 4, inFlight: 1, accepted: 5, dropped: 5 });
  });

  it('keeps going after a batch fails', async () => {
    let calls = 0;
    const q = new ProcessingQueue<number>({
      queueSizeLimit: 10,
      batchSize: 1,
      maxConcurrentProcessing: 1,
      process: () => {
        calls++;
        if (calls === 1) throw new Error('boom');
        return Promise.resolve();
      },
    });
    q.push(1);
    q.push(2);
    await q.idle();
    expect(calls).toBe(2);
  });

  it('rejects nonsense limits', () => {
    expect(() => new ProcessingQueue({ queueSizeLimit: 0, batchSize: 1, maxConcurrentProcessing: 1, process: async () => {} })).toThrow(/queueSizeLimit/);
  });
});
