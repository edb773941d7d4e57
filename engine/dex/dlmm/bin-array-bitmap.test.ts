import { describe, expect, it } from 'vitest';

import { ErrorCode } from '../../errors.js';
import { binArrayHasLiquidity, nextBinArrayWithLiquidity, withBinArrayBit } from './bin-array-bitmap.js';
import { BINS_PER_ARRAY } from './constants.js';
import { bn, dlmmSdk, type Bn } from './testing/meteora-sdk.js';
import { Prng } from './testing/random-pools.js';

const EMPTY: readonly bigint[] = new Array<bigint>(16).fill(0n);

type FindNext = (swapForY: boolean, activeId: Bn, lbPair: { binArrayBitmap: Bn[] }, extension: null) => Bn | null;

describe('bin array bitmap', () => {
  it('sets and reads the bit of an array index, -512 and 511 included', () => {
    let bitmap = withBinArrayBit(EMPTY, -512, true);
    bitmap = withBinArrayBit(bitmap, 511, true);
    bitmap = withBinArrayBit(bitmap, 0, true);
    expect(bitmap[0]).toBe(1n);
    expect(bitmap[15]).toBe(1n << 63n);
    expect(bitmap[8]).toBe(1n);
    expect([-512, 511, 0, 1, -1].map((i) => binArrayHasLiquidity(bitmap, i))).toEqual([true, true, true, false, false]);
    expect(binArrayHasLiquidity(withBinArrayBit(bitmap, 0, false), 0)).toBe(false);
    expect(() => withBinArrayBit(bitmap, 512, true)).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'index', value: 512 } }));
  });

  it('finds the nearest array with liquidity in the swap direction, the start included', () => {
    const bitmap = [-300, -2, 5, 64, 400].reduce<readonly bigint[]>((b, i) => withBinArrayBit(b, i, true), EMPTY);
    expect(nextBinArrayWithLiquidity(bitmap, true, 5)).toBe(5);
    expect(nextBinArrayWithLiquidity(bitmap, true, 4)).toBe(-2);
    expect(nextBinArrayWithLiquidity(bitmap, true, -3)).toBe(-300);
    expect(nextBinArrayWithLiquidity(bitmap, true, -301)).toBeUndefined();
    expect(nextBinArrayWithLiquidity(bitmap, false, 6)).toBe(64);
    expect(nextBinArrayWithLiquidity(bitmap, false, 65)).toBe(400);
    expect(nextBinArrayWithLiquidity(bitmap, false, 401)).toBeUndefined();
  });

  it('agrees with the SDK findNextBinArrayIndexWithLiquidity on random bitmaps', () => {
    const find = (dlmmSdk() as unknown as { findNextBinArrayIndexWithLiquidity: FindNext }).findNextBinArrayIndexWithLiquidity;
    const rng = new Prng(41);
    for (let i = 0; i < 400; i++) {
      let bitmap: readonly bigint[] = EMPTY;
      const count = rng.pick([0, 1, 2, 5, 40]);
      for (let k = 0; k < count; k++) bitmap = withBinArrayBit(bitmap, rng.int(-512, 511), true);
      const start = rng.int(-512, 511);
      const swapForY = rng.chance(0.5);
      const ref = find(swapForY, bn(start * BINS_PER_ARRAY + rng.int(0, BINS_PER_ARRAY - 1)), { binArrayBitmap: bitmap.map((w) => bn(w)) }, null);
      expect(nextBinArrayWithLiquidity(bitmap, swapForY, start), `case ${i}`).toBe(ref === null ? undefined : Number(ref.toString()));
    }
  });
});
