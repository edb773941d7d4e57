import { describe, expect, it } from 'vitest';

import * as base58 from '../../chain/base58.js';
import { ErrorCode } from '../../errors.js';
import { thrownCode } from '../testing/errors.js';
import {
  WHIRLPOOL_DYNAMIC_TICK_ARRAY_MAX_SIZE,
  WHIRLPOOL_DYNAMIC_TICK_ARRAY_MIN_SIZE,
  WHIRLPOOL_FIXED_TICK_ARRAY_ACCOUNT_SIZE,
  decodeWhirlpoolTickArray,
  encodeWhirlpoolDynamicTickArray,
  encodeWhirlpoolTickArray,
} from './tick-array.js';

const POOL = 'HJPjoWUrhoZzkNfRpHuieeFk9WcZWjwy6PBjZ81ngndJ';

function sampleTicks(): Array<{ initialized: boolean; liquidityNet: bigint; liquidityGross: bigint }> {
  return Array.from({ length: 88 }, (_, slot) =>
    slot % 7 === 3
      ? { initialized: true, liquidityNet: slot % 2 === 0 ? 10n ** 20n + BigInt(slot) : -(1n << 100n), liquidityGross: 1n << 101n }
      : { initialized: false, liquidityNet: 0n, liquidityGross: 0n },
  );
}

describe('Whirlpool tick arrays', () => {
  it('reads a fixed TickArray at the offsets of the program layout', () => {
    const data = new Uint8Array(9988);
    const view = new DataView(data.buffer);
    data.set([0x45, 0x61, 0xbd, 0xbe, 0x6e, 0x07, 0x42, 0xbb], 0);
    view.setInt32(8, -11264, true);
    const slot = 5;
    const at = 12 + slot * 113;
    view.setUint8(at, 1);
    view.setBigUint64(at + 1, (1n << 64n) - 3n, true); // liquidity_net = -3 (i128 two's complement)
    view.setBigUint64(at + 9, (1n << 64n) - 1n, true);
    view.setBigUint64(at + 17, 7n, true); // liquidity_gross
    data.set(base58.decodePubkey(POOL), 9956);
    const array = decodeWhirlpoolTickArray(data, undefined, 128);
    expect(array.pool).toBe(POOL);
    expect(array.startTickIndex).toBe(-11264);
    expect(array.ticks).toHaveLength(88);
    expect(array.ticks[5]).toEqual({ index: -11264 + 5 * 128, initialized: true, liquidityNet: -3n, liquidityGross: 7n });
    expect(array.ticks[6]).toEqual({ index: -11264 + 6 * 128, initialized: false, liquidityNet: 0n, liquidityGross: 0n });
  });

  it('writes fixed and dynamic arrays that read back to the same ticks', () => {
    const fields = { pool: POOL, startTickIndex: 5632, ticks: sampleTicks() };
    const fixed = encodeWhirlpoolTickArray(fields);
    const dynamic = encodeWhirlpoolDynamicTickArray(fields);
    expect(fixed.length).toBe(WHIRLPOOL_FIXED_TICK_ARRAY_ACCOUNT_SIZE);
    const initialized = fields.ticks.filter((t) => t.initialized).length;
    expect(dynamic.length).toBe(WHIRLPOOL_DYNAMIC_TICK_ARRAY_MIN_SIZE + 112 * initialized);
    const a = decodeWhirlpoolTickArray(fixed, undefined, 64);
    const b = decodeWhirlpoolTickArray(dynamic, undefined, 64);
    expect(b).toEqual(a);
    expect(a.ticks.map((t) => ({ initialized: t.initialized, liquidityNet: t.liquidityNet, liquidityGross: t.liquidityGross }))).toEqual(
      fields.ticks,
    );
    expect(a.ticks[3]!.index).toBe(5632 + 3 * 64);
  });

  it('leaves tick indexes NaN when the tick spacing is not given', () => {
    const array = decodeWhirlpoolTickArray(encodeWhirlpoolTickArray({ pool: POOL, startTickIndex: 0, ticks: sampleTicks() }));
    expect(array.ticks.every((t) => Number.isNaN(t.index))).toBe(true);
  });

  it('rejects wrong sizes, discriminators and inconsistent dynamic arrays', () => {
    const fields = { pool: POOL, startTickIndex: 0, ticks: sampleTicks() };
    const fixed = encodeWhirlpoolTickArray(fields);
    expect(thrownCode(() => decodeWhirlpoolTickArray(fixed.subarray(0, 9987)))).toBe(ErrorCode.AccountSize);
    const wrongDisc = fixed.slice();
    wrongDisc[7] = 0;
    expect(thrownCode(() => decodeWhirlpoolTickArray(wrongDisc))).toBe(ErrorCode.AccountDiscriminator);

    const dynamic = encodeWhirlpoolDynamicTickArray(fields);
    expect(thrownCode(() => decodeWhirlpoolTickArray(dynamic.subarray(0, WHIRLPOOL_DYNAMIC_TICK_ARRAY_MIN_SIZE - 1)))).toBe(
      ErrorCode.AccountSize,
    );
    const tooBig = new Uint8Array(WHIRLPOOL_DYNAMIC_TICK_ARRAY_MAX_SIZE + 1);
    tooBig.set(dynamic.subarray(0, 8));
    expect(thrownCode(() => decodeWhirlpoolTickArray(tooBig))).toBe(ErrorCode.AccountSize);
    // Tag of tick 0 set while its bitmap bit is clear.
    const badTag = dynamic.slice();
    badTag[60] = 1;
    expect(thrownCode(() => decodeWhirlpoolTickArray(badTag))).toBe(ErrorCode.AccountInvalid);
    // Truncated tick data.
    expect(thrownCode(() => decodeWhirlpoolTickArray(dynamic.subarray(0, dynamic.length - 50)))).toBe(ErrorCode.AccountInvalid);
  });
});
