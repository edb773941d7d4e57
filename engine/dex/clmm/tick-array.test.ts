import { TickArrayLayout } from '@raydium-io/raydium-sdk-v2';
import { describe, expect, it } from 'vitest';

import { ErrorCode } from '../../errors.js';
import { thrownCode } from '../testing/errors.js';
import { CLMM_TICK_ARRAY_ACCOUNT_SIZE, decodeClmmTickArray, encodeClmmTickArray } from './tick-array.js';

const POOL = '3ucNos4NbumPLZNWztqGHNFFgkHeRMBQAVemeeomsUxv';

function ticks() {
  return Array.from({ length: 60 }, (_, slot) => {
    if (slot === 59) return { initialized: true, liquidityNet: 0n, liquidityGross: 0n, limitOrderAmount: 5_000n };
    return slot % 9 === 2
      ? { initialized: true, liquidityNet: slot % 2 === 0 ? -(10n ** 24n) : 10n ** 24n, liquidityGross: 10n ** 24n + BigInt(slot) }
      : { initialized: false, liquidityNet: 0n, liquidityGross: 0n };
  });
}

describe('Raydium CLMM TickArrayState', () => {
  it('writes what the Raydium SDK TickArrayLayout reads', () => {
    const bytes = encodeClmmTickArray({ pool: POOL, startTickIndex: -3600, tickSpacing: 60, ticks: ticks() });
    expect(bytes.length).toBe(TickArrayLayout.span);
    expect(bytes.length).toBe(CLMM_TICK_ARRAY_ACCOUNT_SIZE);
    const sdk = TickArrayLayout.decode(Buffer.from(bytes));
    expect(sdk.poolId.toBase58()).toBe(POOL);
    expect(sdk.startTickIndex).toBe(-3600);
    expect(sdk.initializedTickCount).toBe(ticks().filter((t) => t.initialized).length);
    ticks().forEach((t, slot) => {
      const s = sdk.ticks[slot]!;
      expect(s.liquidityNet.toString()).toBe(t.liquidityNet.toString());
      expect(s.liquidityGross.toString()).toBe(t.liquidityGross.toString());
      expect(s.ordersAmount.toString()).toBe((t.limitOrderAmount ?? 0n).toString());
      if (t.initialized) expect(s.tick).toBe(-3600 + slot * 60);
    });
  });

  it('reads what the Raydium SDK TickArrayLayout writes, limit orders included', () => {
    const bytes = encodeClmmTickArray({ pool: POOL, startTickIndex: 7200, tickSpacing: 10, ticks: ticks() });
    const sdk = TickArrayLayout.decode(Buffer.from(bytes));
    const BN = sdk.ticks[0]!.liquidityNet.constructor as new (v: string) => typeof sdk.ticks[0]['liquidityNet'];
    sdk.ticks[10]!.tick = 7300;
    sdk.ticks[10]!.liquidityNet = new BN('-77');
    sdk.ticks[10]!.liquidityGross = new BN('77');
    sdk.ticks[13]!.tick = 7330;
    sdk.ticks[13]!.partFilledOrdersRemaining = new BN('9');
    const buffer = Buffer.alloc(TickArrayLayout.span);
    TickArrayLayout.encode(sdk, buffer);
    buffer.set(bytes.subarray(0, 8), 0);
    const array = decodeClmmTickArray(new Uint8Array(buffer), 'ta', 10);
    expect(array.pool).toBe(POOL);
    expect(array.startTickIndex).toBe(7200);
    expect(array.ticks[10]).toEqual({ index: 7300, initialized: true, liquidityNet: -77n, liquidityGross: 77n });
    expect(array.ticks[13]).toEqual({ index: 7330, initialized: true, liquidityNet: 0n, liquidityGross: 0n, limitOrderAmount: 9n });
    expect(array.ticks[59]).toMatchObject({ initialized: true, limitOrderAmount: 5_000n });
    expect(array.ticks[14]).toEqual({ index: 7340, initialized: false, liquidityNet: 0n, liquidityGross: 0n });
  });

  it('takes tick indexes from the ticks when the spacing is not given', () => {
    const array = decodeClmmTickArray(encodeClmmTickArray({ pool: POOL, startTickIndex: 600, tickSpacing: 10, ticks: ticks() }));
    expect(array.ticks[2]!.index).toBe(620);
    expect(Number.isNaN(array.ticks[3]!.index)).toBe(true);
  });

  it('rejects wrong sizes, discriminators and ticks stored at the wrong index', () => {
    const bytes = encodeClmmTickArray({ pool: POOL, startTickIndex: 0, tickSpacing: 10, ticks: ticks() });
    expect(thrownCode(() => decodeClmmTickArray(bytes.subarray(0, 10_239)))).toBe(ErrorCode.AccountSize);
    const wrong = bytes.slice();
    wrong[1] = 0;
    expect(thrownCode(() => decodeClmmTickArray(wrong))).toBe(ErrorCode.AccountDiscriminator);
    expect(thrownCode(() => decodeClmmTickArray(bytes, undefined, 20))).toBe(ErrorCode.AccountInvalid);
  });
});
