import { describe, expect, it } from 'vitest';

import { eventually } from '../app/testing.js';
import { RecentBlockhash, type LatestBlockhash } from './recent-blockhash.js';

/** A chain whose blockhash changes at every read. */
function counting(): { read: () => Promise<LatestBlockhash>; calls: () => number } {
  let n = 0;
  return {
    read: () => {
      n++;
      return Promise.resolve({ blockhash: `hash-${n}`, lastValidBlockHeight: BigInt(100 + n) });
    },
    calls: () => n,
  };
}

describe('RecentBlockhash', () => {
  it('serves the blockhash read at start from memory, without a read per caller', async () => {
    const chain = counting();
    const kept = new RecentBlockhash({ read: chain.read, refreshMs: 60_000 });
    await kept.start();
    try {
      const answers = await Promise.all([kept.current(), kept.current(), kept.current()]);
      expect(answers.map((a) => a.blockhash)).toEqual(['hash-1', 'hash-1', 'hash-1']);
      expect(answers[0]!.lastValidBlockHeight).toBe(101n);
      expect(chain.calls()).toBe(1);
    } finally {
      kept.close();
    }
  });

  it('reads again in the background and serves the newer one', async () => {
    const chain = counting();
    const kept = new RecentBlockhash({ read: chain.read, refreshMs: 5 });
    await kept.start();
    try {
      await eventually(() => (chain.calls() >= 3 ? true : undefined), 5_000, 'two background reads');
      const { blockhash } = await kept.current();
      expect(Number(blockhash.slice(5))).toBeGreaterThanOrEqual(3);
    } finally {
      kept.close();
    }
  });

  it('does not serve one older than maxAgeMs: the callers wait for one read they share', async () => {
    const chain = counting();
    let clock = 0;
    const kept = new RecentBlockhash({ read: chain.read, maxAgeMs: 1_000, now: () => clock });
    expect((await kept.current()).blockhash).toBe('hash-1');
    clock = 999;
    expect((await kept.current()).blockhash).toBe('hash-1');
    clock = 1_001;
    const [a, b] = await Promise.all([kept.current(), kept.current()]);
    expect([a.blockhash, b.blockhash]).toEqual(['hash-2', 'hash-2']);
    expect(chain.calls()).toBe(2);
  });

  it('a failed read rejects its callers; the next caller reads again', async () => {
    let fail = true;
    const chain = counting();
    const kept = new RecentBlockhash({ read: () => (fail ? Promise.reject(new Error('node down')) : chain.read()) });
    await expect(kept.current()).rejects.toThrow('node down');
    fail = false;
    expect((await kept.current()).blockhash).toBe('hash-1');
    expect(kept.stats).toEqual({ reads: 2, failures: 1 });
  });
});
