import { address, getAddressEncoder, getProgramDerivedAddress } from '@solana/kit';
import { describe, expect, it } from 'vitest';

import * as base58 from '../chain/base58.js';
import { associatedTokenAddress } from './associated-token.js';
import { SimRandom } from './prng.js';

const TOKEN = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const ATA = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';

describe('associated token accounts', () => {
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
});
