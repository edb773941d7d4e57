import { describe, expect, it } from 'vitest';

import { ErrorCode, isTpError } from '../../errors.js';
import {
  DLMM_BIN_ARRAY_DISCRIMINATOR,
  DLMM_BIN_ARRAY_SIZE,
  binArrayIndexOf,
  binArrayLowerBinId,
  binArrayUpperBinId,
  decodeBinArray,
  encodeBinArray,
  type DlmmBin,
  type DlmmBinArray,
} from './bin-array.js';
import { big, bn, dlmmSdk, type Bn, type PublicKeyLike, type SdkRecord } from './testing/meteora-sdk.js';
import { emptyBinArray, Prng, randomPubkey } from './testing/random-pools.js';
import { sdkDecodeBinArray, sdkEncodeBinArray } from './testing/sdk-accounts.js';

function randomBinArray(seed: number): DlmmBinArray & { bins: DlmmBin[] } {
  const rng = new Prng(seed);
  const index = rng.int(-6_000, 6_000);
  const array = emptyBinArray(randomPubkey(rng), index, rng.int(1, 400)) as DlmmBinArray & { bins: DlmmBin[] };
  array.version = rng.int(0, 3);
  for (const bin of array.bins) {
    bin.amountX = rng.chance(0.3) ? 0n : rng.bits(64);
    bin.amountY = rng.chance(0.3) ? 0n : rng.bits(64);
    bin.price = rng.bits(128);
    bin.liquiditySupply = rng.bits(128);
    bin.openOrderAmount = rng.chance(0.7) ? 0n : rng.bits(64);
    bin.processedOrderRemainingAmount = rng.chance(0.7) ? 0n : rng.bits(64);
    bin.limitOrderAskSide = rng.chance(0.5);
  }
  return array;
}

function expectThrowsCode(fn: () => unknown, code: ErrorCode): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(isTpError(caught, code), `expected ${code}, got ${String(caught)}`).toBe(true);
}

describe('BinArray account', () => {
  it('has the size and discriminator of the IDL the SDK ships', () => {
    const idl = dlmmSdk().IDL.accounts.find((a) => a.name === 'BinArray');
    expect(Array.from(DLMM_BIN_ARRAY_DISCRIMINATOR)).toEqual(idl?.discriminator);
    expect(encodeBinArray(randomBinArray(1)).length).toBe(DLMM_BIN_ARRAY_SIZE);
  });

  it('decodes accounts built with the SDK Anchor coder IDL layout, and encodes them back byte for byte', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const array = randomBinArray(seed);
      const sdkBytes = sdkEncodeBinArray(array);
      expect(sdkBytes.length).toBe(DLMM_BIN_ARRAY_SIZE);
      const decoded = decodeBinArray(sdkBytes);
      expect(decoded).toEqual(array);
      expect(Buffer.from(encodeBinArray(decoded)).equals(Buffer.from(sdkBytes))).toBe(true);
    }
  });

  it('writes accounts the SDK Anchor coder reads back field for field', () => {
    for (let seed = 100; seed < 130; seed++) {
      const array = randomBinArray(seed);
      const sdk = sdkDecodeBinArray(encodeBinArray(array));
      expect(big(sdk.index as Bn)).toBe(array.index);
      expect(sdk.version).toBe(array.version);
      expect((sdk.lbPair as PublicKeyLike).toBase58()).toBe(array.pool);
      const bins = sdk.bins as SdkRecord[];
      expect(bins).toHaveLength(70);
      bins.forEach((b, i) => {
        const ours = array.bins[i]!;
        expect(big(b.amountX as Bn)).toBe(ours.amountX);
        expect(big(b.amountY as Bn)).toBe(ours.amountY);
        expect(big(b.price as Bn)).toBe(ours.price);
        expect(big(b.liquiditySupply as Bn)).toBe(ours.liquiditySupply);
        expect(big(b.openOrderAmount as Bn)).toBe(ours.openOrderAmount);
        expect(big(b.processedOrderRemainingAmount as Bn)).toBe(ours.processedOrderRemainingAmount);
        expect(b.limitOrderAskSide).toBe(ours.limitOrderAskSide ? 1 : 0);
      });
    }
  });

  it('numbers bins from index * 70, negative indexes included', () => {
    const array = decodeBinArray(encodeBinArray(emptyBinArray(randomPubkey(new Prng(2)), -3, 10)), 'addr');
    expect(array.index).toBe(-3n);
    expect(array.bins[0]!.id).toBe(-210);
    expect(array.bins[69]!.id).toBe(-141);
    expect(array.address).toBe('addr');
  });

  it('refuses an account of the wrong size with AccountSize', () => {
    const data = encodeBinArray(randomBinArray(3));
    expectThrowsCode(() => decodeBinArray(data.subarray(0, DLMM_BIN_ARRAY_SIZE - 1)), ErrorCode.AccountSize);
    expectThrowsCode(() => decodeBinArray(new Uint8Array(904)), ErrorCode.AccountSize);
  });

  it('refuses another account type with AccountDiscriminator', () => {
    const data = encodeBinArray(randomBinArray(4));
    data[7] = data[7]! ^ 1;
    expectThrowsCode(() => decodeBinArray(data), ErrorCode.AccountDiscriminator);
  });

  it('refuses an index beyond the program bin id range with AccountInvalid', () => {
    const data = encodeBinArray(randomBinArray(5));
    new DataView(data.buffer).setBigInt64(8, 6_338n, true);
    expectThrowsCode(() => decodeBinArray(data), ErrorCode.AccountInvalid);
    new DataView(data.buffer).setBigInt64(8, -6_339n, true);
    expectThrowsCode(() => decodeBinArray(data), ErrorCode.AccountInvalid);
    new DataView(data.buffer).setBigInt64(8, -6_338n, true);
    expect(decodeBinArray(data).index).toBe(-6_338n);
  });
});

describe('binArrayIndexOf', () => {
  it('floors towards negative infinity', () => {
    expect([0, 69, 70, 139, 140, -1, -69, -70, -71, -140, -141].map(binArrayIndexOf)).toEqual([0, 0, 1, 1, 2, -1, -1, -1, -2, -2, -3]);
    expect(binArrayLowerBinId(-2)).toBe(-140);
    expect(binArrayUpperBinId(-2)).toBe(-71);
  });

  it('agrees with the SDK binIdToBinArrayIndex', () => {
    const rng = new Prng(11);
    const sdk = dlmmSdk();
    for (let i = 0; i < 3_000; i++) {
      const id = rng.int(-443_636, 443_636);
      expect(binArrayIndexOf(id)).toBe(Number(sdk.binIdToBinArrayIndex(bn(id)).toString()));
    }
  });
});
