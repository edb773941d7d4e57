import { describe, expect, it } from 'vitest';

import * as base58 from '../../chain/base58.js';
import { ErrorCode } from '../../errors.js';
import { thrownCode } from '../testing/errors.js';
import { SwapFailure, SwapMode } from '../types.js';
import { WHIRLPOOL_ACCOUNT_SIZE, decodeWhirlpool, encodeWhirlpool, readWhirlpoolExtras } from './whirlpool-account.js';
import { quoteWhirlpool } from './whirlpool-swap.js';

const CONFIG = '2LecshUwdy9xi7meFgHtFJQNSKk4KdTrcpvaB56dP2NQ';
const MINT_A = 'So11111111111111111111111111111111111111112';
const MINT_B = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const VAULT_A = '3YQm7ujtXWJU2e9jhp2QGHpnn1ShXn12QjvzMvDgabpX';
const VAULT_B = '2JTw1fE2wz1SymWUQ7UqpVtrTuKjcd6mWwYwUJUCh2rq';

function le(view: DataView, offset: number, value: bigint, bytes: number): void {
  for (let i = 0; i < bytes; i++) view.setUint8(offset + i, Number((value >> BigInt(8 * i)) & 0xffn));
}

/** An account written field by field at the offsets of docs/wire-formats.md §4.1. */
function referenceAccount(): Uint8Array {
  const data = new Uint8Array(653);
  const view = new DataView(data.buffer);
  data.set([0x3f, 0x95, 0xd1, 0x0c, 0xe1, 0x80, 0x63, 0x09], 0);
  data.set(base58.decodePubkey(CONFIG), 8);
  view.setUint8(40, 254);
  view.setUint16(41, 64, true); // tick_spacing
  view.setUint16(43, 64, true); // fee_tier_index_seed
  view.setUint16(45, 2000, true); // fee_rate
  view.setUint16(47, 300, true); // protocol_fee_rate
  le(view, 49, 462271585695307n, 16); // liquidity
  le(view, 65, 58410682143245572n, 16); // sqrt_price
  view.setInt32(81, -115109, true); // tick_current_index
  le(view, 85, 44782342942237n, 8);
  le(view, 93, 447915233n, 8);
  data.set(base58.decodePubkey(MINT_A), 101);
  data.set(base58.decodePubkey(VAULT_A), 133);
  le(view, 165, 58012550787034697697n, 16);
  data.set(base58.decodePubkey(MINT_B), 181);
  data.set(base58.decodePubkey(VAULT_B), 213);
  le(view, 245, 580254477281516n, 16);
  le(view, 261, 1748874550n, 8);
  return data;
}

describe('Whirlpool account', () => {
  it('reads the fields at the offsets of the reference layout', () => {
    // Values of the reference's verified dump (tick -115109 matching sqrt_price), at its offsets.
    expect(decodeWhirlpool(referenceAccount(), 'pool')).toEqual({
      dex: 'dexc_whirlpool',
      address: 'pool',
      tokenA: MINT_A,
      tokenB: MINT_B,
      sqrtPrice: 58410682143245572n,
      tick: -115109,
      tickSpacing: 64,
      liquidity: 462271585695307n,
      feeRate: 2000,
      vaultA: VAULT_A,
      vaultB: VAULT_B,
    });
    expect(readWhirlpoolExtras(referenceAccount())).toEqual({
      whirlpoolsConfig: CONFIG,
      bump: 254,
      feeTierIndex: 64,
      protocolFeeRate: 300,
      protocolFeeOwedA: 44782342942237n,
      protocolFeeOwedB: 447915233n,
      feeGrowthGlobalA: 58012550787034697697n,
      feeGrowthGlobalB: 580254477281516n,
      rewardLastUpdatedTimestamp: 1748874550n,
    });
  });

  it('writes the same bytes as the reference layout', () => {
    const pool = decodeWhirlpool(referenceAccount());
    const extras = readWhirlpoolExtras(referenceAccount());
    expect(encodeWhirlpool({ ...pool, ...extras })).toEqual(referenceAccount());
    const out = new Uint8Array(WHIRLPOOL_ACCOUNT_SIZE).fill(7);
    expect(encodeWhirlpool({ ...pool, ...extras }, out)).toEqual(referenceAccount());
  });

  it('rejects wrong sizes, discriminators and impossible values with the right codes', () => {
    const good = referenceAccount();
    expect(thrownCode(() => decodeWhirlpool(good.subarray(0, 652)))).toBe(ErrorCode.AccountSize);
    expect(thrownCode(() => decodeWhirlpool(new Uint8Array(654)))).toBe(ErrorCode.AccountSize);
    const badDisc = good.slice();
    badDisc[0] = 0;
    expect(thrownCode(() => decodeWhirlpool(badDisc))).toBe(ErrorCode.AccountDiscriminator);
    const zeroSpacing = good.slice();
    zeroSpacing[41] = 0;
    zeroSpacing[42] = 0;
    expect(thrownCode(() => decodeWhirlpool(zeroSpacing))).toBe(ErrorCode.AccountInvalid);
    const zeroPrice = good.slice();
    zeroPrice.fill(0, 65, 81);
    expect(thrownCode(() => decodeWhirlpool(zeroPrice))).toBe(ErrorCode.AccountInvalid);
  });

  it('flags pools of adaptive fee tiers and refuses to quote them without their oracle', () => {
    const pool = decodeWhirlpool(referenceAccount());
    const adaptive = decodeWhirlpool(encodeWhirlpool({ ...pool, feeTierIndex: 1025 }));
    expect(adaptive.adaptiveFee).toBe(true);
    expect(pool.adaptiveFee).toBeUndefined();
    expect(quoteWhirlpool(adaptive, { aToB: true, mode: SwapMode.ExactIn, amount: 10n })).toMatchObject({
      ok: false,
      reason: SwapFailure.MissingFeeRate,
    });
  });
});
