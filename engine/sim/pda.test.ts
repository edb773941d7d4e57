import { address, getAddressEncoder, getProgramDerivedAddress, isOffCurveAddress } from '@solana/kit';
import { describe, expect, it } from 'vitest';

import * as base58 from '../chain/base58.js';
import { associatedTokenAddress, findProgramAddress, isOnCurve } from './pda.js';
import { SimRandom } from './prng.js';

const TOKEN = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const ATA = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
const WHIRLPOOL = 'whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc';

describe('program derived addresses', () => {
  it('derive the addresses @solana/kit derives', async () => {
    const rng = new SimRandom(11);
    for (let i = 0; i < 12; i++) {
      const pool = rng.bytes(32);
      const start = String(rng.range(-50_000, 50_000));
      const ours = findProgramAddress(['tick_array', pool, start], WHIRLPOOL);
      const [kit, bump] = await getProgramDerivedAddress({ programAddress: address(WHIRLPOOL), seeds: ['tick_array', pool, start] });
      expect(ours).toEqual({ address: kit, bump });
    }
  });

  it('derive associated token accounts like the ATA program', async () => {
    const owner = base58.encode(new SimRandom(5).bytes(32));
    const mint = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
    const enc = getAddressEncoder();
    const [kit] = await getProgramDerivedAddress({
      programAddress: address(ATA),
      seeds: [enc.encode(address(owner)), enc.encode(address(TOKEN)), enc.encode(address(mint))],
    });
    expect(associatedTokenAddress(owner, mint)).toBe(kit);
  });

  it('tell curve points from other bytes as kit does', () => {
    const rng = new SimRandom(99);
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
