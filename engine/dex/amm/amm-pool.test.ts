import { liquidityStateV4Layout } from '@raydium-io/raydium-sdk-v2';
import { describe, expect, it } from 'vitest';

import * as base58 from '../../chain/base58.js';
import { ErrorCode } from '../../errors.js';
import { thrownCode } from '../testing/errors.js';
import { AMM_ACCOUNT_SIZE, ammSwapEnabled, decodeSimplifiedAmmPool, encodeSimplifiedAmmPool } from './amm-pool.js';

const MINT_A = 'So11111111111111111111111111111111111111112';
const MINT_B = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';

describe('dexa_amm spec 02 simplified layout (an explicit registry setting, never the real program)', () => {
  it('reads the simplified layout of spec 02 at its exact offsets', () => {
    const data = new Uint8Array(AMM_ACCOUNT_SIZE);
    const view = new DataView(data.buffer);
    view.setBigUint64(0, 6n, true);
    view.setBigUint64(64, 1_234_567_890_123n, true);
    view.setBigUint64(72, 18_000_000_000_000_000_000n, true);
    data.set(base58.decodePubkey(MINT_A), 400);
    data.set(base58.decodePubkey(MINT_B), 432);
    const pool = decodeSimplifiedAmmPool(data, 'pool1');
    expect(pool).toEqual({
      dex: 'dexa_amm',
      address: 'pool1',
      tokenA: MINT_A,
      tokenB: MINT_B,
      status: 6n,
      reserveA: 1_234_567_890_123n,
      reserveB: 18_000_000_000_000_000_000n,
      feeNumerator: 25n,
      feeDenominator: 10_000n,
    });
  });

  it('writes what it reads, and matches the Raydium AMM v4 AmmInfo layout (status, mints)', () => {
    const fields = { status: 1n, reserveA: 5n, reserveB: (1n << 64n) - 1n, tokenA: MINT_A, tokenB: MINT_B };
    const bytes = encodeSimplifiedAmmPool(fields);
    expect(bytes.length).toBe(752);
    expect(decodeSimplifiedAmmPool(bytes)).toMatchObject(fields);
    // The same bytes through the SDK's AmmInfo layout: 752 bytes, status at 0, base/quote mint at
    // 400/432; the simplified reserves sit where AmmInfo has min_size / vol_max_cut_ratio.
    expect(liquidityStateV4Layout.span).toBe(752);
    const sdk = liquidityStateV4Layout.decode(Buffer.from(bytes));
    expect(sdk.status.toString()).toBe('1');
    expect(sdk.baseMint.toBase58()).toBe(MINT_A);
    expect(sdk.quoteMint.toBase58()).toBe(MINT_B);
    expect(sdk.minSize.toString()).toBe('5');
    expect(sdk.volMaxCutRatio.toString()).toBe(((1n << 64n) - 1n).toString());
  });

  it('reads accounts written by the SDK layout', () => {
    const buffer = Buffer.alloc(liquidityStateV4Layout.span);
    const decoded = liquidityStateV4Layout.decode(buffer);
    decoded.status = decoded.status.addn(7);
    decoded.minSize = decoded.minSize.addn(1_000_000);
    decoded.volMaxCutRatio = decoded.volMaxCutRatio.addn(2_000_000);
    // The SDK's PublicKey class, reached through a decoded key (it is not our dependency).
    const PublicKey = decoded.baseMint.constructor as new (key: string) => typeof decoded.baseMint;
    liquidityStateV4Layout.encode({ ...decoded, baseMint: new PublicKey(MINT_B), quoteMint: new PublicKey(MINT_A) }, buffer);
    const pool = decodeSimplifiedAmmPool(new Uint8Array(buffer));
    expect(pool.status).toBe(7n);
    expect(pool.reserveA).toBe(1_000_000n);
    expect(pool.reserveB).toBe(2_000_000n);
    expect(pool.tokenA).toBe(MINT_B);
    expect(pool.tokenB).toBe(MINT_A);
  });

  it('rejects accounts that are not exactly 752 bytes', () => {
    expect(thrownCode(() => decodeSimplifiedAmmPool(new Uint8Array(751)))).toBe(ErrorCode.AccountSize);
    expect(thrownCode(() => decodeSimplifiedAmmPool(new Uint8Array(753)))).toBe(ErrorCode.AccountSize);
    expect(thrownCode(() => decodeSimplifiedAmmPool(new Uint8Array(0)))).toBe(ErrorCode.AccountSize);
  });

  it('allows swaps only in the statuses Raydium AMM v4 allows them', () => {
    expect([0n, 1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n].map(ammSwapEnabled)).toEqual([
      false,
      true,
      false,
      false,
      false,
      false,
      true,
      true,
      false,
    ]);
  });
});
