import { address, getProgramDerivedAddress, isOffCurveAddress } from '@solana/kit';
import { describe, expect, it } from 'vitest';

import { Prng } from '../prng.js';
import * as base58 from './base58.js';
import { findProgramAddress, isOnCurve } from './pda.js';

const WHIRLPOOL = 'whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc';

describe('program derived addresses', () => {
  it('derive the addresses @solana/kit derives', async () => {
    const rng = new Prng(11);
    for (let i = 0; i < 12; i++) {
      const pool = rng.bytes(32);
      const start = String(rng.range(-50_000, 50_000));
      const ours = findProgramAddress(['tick_array', pool, start], WHIRLPOOL);
      const [kit, bump] = await getProgramDerivedAddress({ programAddress: address(WHIRLPOOL), seeds: ['tick_array', pool, start] });
      expect(ours).toEqual({ address: kit, bump });
    }
  });

  it('tell curve points from other bytes as kit does', () => {
    const rng = new Prng(99);
    let on = 0;
    for (let i = 0; i < 200; i++) {
      const bytes = rng.bytes(32);
      const expected = !isOffCurveAddress(address(base58.encode(bytes)));
      expect(isOnCurve(bytes)).toBe(expected);
      if (expected) on++;
    }
    // About half of random 32-byte strings are points.
    expect(on).toBeGreaterThan(60);
    expect(on).toBeLessThan(140);
  });
});
