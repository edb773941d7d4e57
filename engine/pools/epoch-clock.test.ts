import { describe, expect, it } from 'vitest';

import type { EpochInfo } from '../rpc/index.js';
import { ErrorCode } from '../errors.js';
import { EpochClock } from './epoch-clock.js';

/** getEpochInfo answers the test releases one by one. */
function pendingReads(): { read: () => Promise<EpochInfo>; answer(epoch: bigint): void; waiting(): number } {
  const queue: Array<(info: EpochInfo) => void> = [];
  return {
    read: () => new Promise<EpochInfo>((resolve) => queue.push(resolve)),
    answer(epoch) {
      queue.shift()!({ epoch, slotIndex: 0n, slotsInEpoch: 432_000n, absoluteSlot: 0n, blockHeight: 0n, transactionCount: null });
    },
    waiting: () => queue.length,
  };
}

describe('EpochClock', () => {
  it('answers at once near expiry and refreshes behind the answer', async () => {
    let now = 0;
    const reads = pendingReads();
    const clock = new EpochClock({ getEpochInfo: reads.read, maxAgeMs: 30, refreshAheadMs: 10, now: () => now });
    const first = clock.current();
    reads.answer(7n);
    expect(await first).toBe(7n);
    now = 15;
    expect(await clock.current()).toBe(7n);
    expect(clock.stats.calls).toBe(1);
    // Within 10 ms of expiry: the cached epoch at once, one refresh started and shared.
    now = 25;
    expect(await clock.current()).toBe(7n);
    expect(await clock.current()).toBe(7n);
    expect(clock.stats.calls).toBe(2);
    expect(reads.waiting()).toBe(1);
    reads.answer(8n);
    await expect.poll(() => clock.info?.epoch).toBe(8n);
    now = 40;
    expect(await clock.current()).toBe(8n);
    expect(clock.stats.calls).toBe(2);
  });

  it('waits for the read once the answer is past maxAgeMs', async () => {
    let now = 0;
    const reads = pendingReads();
    const clock = new EpochClock({ getEpochInfo: reads.read, maxAgeMs: 30, refreshAheadMs: 10, now: () => now });
    const first = clock.current();
    reads.answer(7n);
    await first;
    now = 31;
    let settled: bigint | undefined;
    const second = clock.current().then((e) => (settled = e));
    await Promise.resolve();
    expect(settled).toBeUndefined();
    reads.answer(9n);
    await second;
    expect(settled).toBe(9n);
  });

  it('with refreshAheadMs 0 never reads before expiry', async () => {
    let now = 0;
    const reads = pendingReads();
    const clock = new EpochClock({ getEpochInfo: reads.read, maxAgeMs: 30, refreshAheadMs: 0, now: () => now });
    const first = clock.current();
    reads.answer(7n);
    await first;
    now = 30;
    expect(await clock.current()).toBe(7n);
    expect(clock.stats.calls).toBe(1);
  });

  it('refuses a maxAgeMs above staleLimitMs, naming it', () => {
    expect(() => new EpochClock({ getEpochInfo: pendingReads().read, maxAgeMs: 1000, staleLimitMs: 10 })).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'maxAgeMs', value: 1000 } }));
  });
});
