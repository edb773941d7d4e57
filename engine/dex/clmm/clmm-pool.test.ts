import { PoolInfoLayout } from '@raydium-io/raydium-sdk-v2';
import { describe, expect, it } from 'vitest';

import { ErrorCode } from '../../errors.js';
import { thrownCode } from '../testing/errors.js';
import type { ClmmDynamicFee } from '../types.js';
import { CLMM_POOL_ACCOUNT_SIZE, decodeClmmPool, encodeClmmPool, setTickArrayBit } from './clmm-pool.js';

const CONFIG = '9iFER3bpjf1PTTCQCfTRu17EJgvsxo9pVyA9QWwEuX4x';
const MINT_A = 'So11111111111111111111111111111111111111112';
const MINT_B = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const VAULT_A = '4ct7br2vTPzfdmY3S5HLtTxcGSBfn6pnw98hsS6v359A';
const VAULT_B = '5it83u57VRrVgc51oNV19TTmAJuffPx5GtGwQr7gQNUo';

const DYNAMIC_FEE: ClmmDynamicFee = {
  filterPeriod: 10,
  decayPeriod: 600,
  reductionFactor: 5000,
  dynamicFeeControl: 80_000,
  maxVolatilityAccumulator: 350_000,
  tickSpacingIndexReference: -42,
  volatilityReference: 1234,
  volatilityAccumulator: 56_789,
  lastUpdateTimestamp: 1_700_000_123n,
};

function fields() {
  const bitmap = new Array<bigint>(16).fill(0n);
  setTickArrayBit(bitmap, -1200, 10, true); // array index -2
  setTickArrayBit(bitmap, 306_600, 10, true); // array index 511
  setTickArrayBit(bitmap, -307_200, 10, true); // array index -512
  return {
    tokenA: MINT_A,
    tokenB: MINT_B,
    vaultA: VAULT_A,
    vaultB: VAULT_B,
    ammConfig: CONFIG,
    sqrtPrice: 7_922_816_251_426_433_759n,
    tick: -16_095,
    tickSpacing: 10,
    liquidity: 123_456_789_012_345_678_901n,
    decimalsA: 9,
    decimalsB: 6,
    feeOn: 2,
    tickArrayBitmap: bitmap,
    dynamicFee: DYNAMIC_FEE,
  };
}

describe('Raydium CLMM PoolState', () => {
  it('writes accounts the Raydium SDK PoolInfoLayout reads field for field', () => {
    const f = fields();
    const bytes = encodeClmmPool({ ...f, status: 0b10000 });
    expect(bytes.length).toBe(PoolInfoLayout.span);
    const sdk = PoolInfoLayout.decode(Buffer.from(bytes));
    expect(sdk.configId.toBase58()).toBe(CONFIG);
    expect(sdk.mintA.toBase58()).toBe(MINT_A);
    expect(sdk.mintB.toBase58()).toBe(MINT_B);
    expect(sdk.vaultA.toBase58()).toBe(VAULT_A);
    expect(sdk.vaultB.toBase58()).toBe(VAULT_B);
    expect([sdk.mintDecimalsA, sdk.mintDecimalsB, sdk.tickSpacing]).toEqual([9, 6, 10]);
    expect(sdk.liquidity.toString()).toBe(f.liquidity.toString());
    expect(sdk.sqrtPriceX64.toString()).toBe(f.sqrtPrice.toString());
    expect(sdk.tickCurrent).toBe(-16_095);
    expect([sdk.status, sdk.feeOn]).toEqual([16, 2]);
    const sdkWords = Array.from({ length: 16 }, (_, i) => sdk.tickArrayBitmap.readBigUInt64LE(8 * i));
    expect(sdkWords).toEqual(f.tickArrayBitmap);
    const d = sdk.dynamicFeeInfo;
    expect({
      filterPeriod: d.filterPeriod,
      decayPeriod: d.decayPeriod,
      reductionFactor: d.reductionFactor,
      dynamicFeeControl: d.dynamicFeeControl,
      maxVolatilityAccumulator: d.maxVolatilityAccumulator,
      tickSpacingIndexReference: d.tickSpacingIndexReference,
      volatilityReference: d.volatilityReference,
      volatilityAccumulator: d.volatilityAccumulator,
      lastUpdateTimestamp: BigInt(d.lastUpdateTimestamp.toString()),
    }).toEqual(DYNAMIC_FEE);
  });

  it('reads accounts written by the Raydium SDK PoolInfoLayout', () => {
    const f = fields();
    const bytes = encodeClmmPool(f);
    const sdk = PoolInfoLayout.decode(Buffer.from(bytes));
    // Round trip through the SDK's own encoder, with a few fields changed on its side.
    sdk.tickCurrent = 77;
    sdk.status = 0;
    sdk.feeOn = 1;
    const buffer = Buffer.alloc(PoolInfoLayout.span);
    PoolInfoLayout.encode(sdk, buffer);
    buffer.set([0xf7, 0xed, 0xe3, 0xf5, 0xd7, 0xc3, 0xde, 0x46], 0); // blob(8): the SDK leaves it to us
    const pool = decodeClmmPool(new Uint8Array(buffer), 'pool');
    expect(pool).toEqual({
      dex: 'dexa_clmm',
      address: 'pool',
      tokenA: MINT_A,
      tokenB: MINT_B,
      sqrtPrice: f.sqrtPrice,
      tick: 77,
      tickSpacing: 10,
      liquidity: f.liquidity,
      feeRate: undefined,
      vaultA: VAULT_A,
      vaultB: VAULT_B,
      ammConfig: CONFIG,
      observationKey: sdk.observationId.toBase58(),
      decimalsA: 9,
      decimalsB: 6,
      swapDisabled: false,
      feeOn: 1,
      tickArrayBitmap: f.tickArrayBitmap,
      dynamicFee: DYNAMIC_FEE,
    });
  });

  it('reports swaps disabled from status bit 4 and no dynamic fee when its bytes are zero', () => {
    const { dynamicFee: _unused, ...rest } = fields();
    const pool = decodeClmmPool(encodeClmmPool({ ...rest, status: 0b10011 }));
    expect(pool.swapDisabled).toBe(true);
    expect(pool.dynamicFee).toBeUndefined();
    expect(decodeClmmPool(encodeClmmPool({ ...rest, status: 0b01111 })).swapDisabled).toBe(false);
  });

  it('rejects wrong sizes, discriminators and impossible values with the right codes', () => {
    const bytes = encodeClmmPool(fields());
    expect(thrownCode(() => decodeClmmPool(bytes.subarray(0, CLMM_POOL_ACCOUNT_SIZE - 1)))).toBe(ErrorCode.AccountSize);
    const wrong = bytes.slice();
    wrong[3] = 0;
    expect(thrownCode(() => decodeClmmPool(wrong))).toBe(ErrorCode.AccountDiscriminator);
    expect(thrownCode(() => decodeClmmPool(encodeClmmPool({ ...fields(), tickSpacing: 0 })))).toBe(ErrorCode.AccountInvalid);
    expect(thrownCode(() => decodeClmmPool(encodeClmmPool({ ...fields(), sqrtPrice: 1n })))).toBe(ErrorCode.AccountInvalid);
  });
});
