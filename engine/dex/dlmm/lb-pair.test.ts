import { describe, expect, it } from 'vitest';

import { ErrorCode, isTpError } from '../../errors.js';
import { DEFAULT_PUBKEY, FunctionType } from './constants.js';
import { DLMM_LB_PAIR_DISCRIMINATOR, DLMM_LB_PAIR_SIZE, decodeLbPair, encodeLbPair, supportsLimitOrders, type DlmmLbPair } from './lb-pair.js';
import { big, dlmmSdk, type Bn, type PublicKeyLike, type SdkRecord } from './testing/meteora-sdk.js';
import { Prng, randomScenario, randomPubkey } from './testing/random-pools.js';
import { sdkDecodeLbPair, sdkEncodeLbPair, sdkLbPairObject } from './testing/sdk-accounts.js';

function randomPool(seed: number): DlmmLbPair & { address: string } {
  const rng = new Prng(seed);
  const { pool } = randomScenario(rng);
  // Exercise the fields a swap does not read too.
  pool.status = rng.int(0, 1);
  pool.pairType = rng.int(0, 3);
  pool.activationType = rng.int(0, 1);
  pool.activationPoint = rng.bits(64);
  pool.protocolFeeX = rng.bits(64);
  pool.protocolFeeY = rng.bits(64);
  pool.lastUpdatedAt = rng.bits(63);
  pool.tokenXProgramFlag = rng.int(0, 1);
  pool.tokenYProgramFlag = rng.int(0, 1);
  pool.version = rng.int(0, 2);
  pool.rewardMints = [rng.chance(0.5) ? randomPubkey(rng) : DEFAULT_PUBKEY, rng.chance(0.5) ? randomPubkey(rng) : DEFAULT_PUBKEY];
  pool.vParameters = { ...pool.vParameters, lastUpdateTimestamp: -rng.bits(40) };
  pool.binArrayBitmap = Array.from({ length: 16 }, () => rng.bits(64));
  return pool;
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

describe('LbPair account', () => {
  it('has the size and discriminator of the IDL the SDK ships', () => {
    const idl = dlmmSdk().IDL.accounts.find((a) => a.name === 'LbPair');
    expect(Array.from(DLMM_LB_PAIR_DISCRIMINATOR)).toEqual(idl?.discriminator);
    expect(encodeLbPair(randomPool(1)).length).toBe(DLMM_LB_PAIR_SIZE);
  });

  it('decodes accounts built by the SDK Anchor coder, and encodes them back byte for byte', async () => {
    for (let seed = 1; seed <= 150; seed++) {
      const pool = randomPool(seed);
      const sdkBytes = await sdkEncodeLbPair(pool);
      expect(sdkBytes.length).toBe(DLMM_LB_PAIR_SIZE);
      const decoded = decodeLbPair(sdkBytes, pool.address);
      expect(decoded).toEqual(pool);
      expect(Buffer.from(encodeLbPair(decoded)).equals(Buffer.from(sdkBytes))).toBe(true);
    }
  });

  it('writes accounts the SDK Anchor coder reads back field for field', () => {
    for (let seed = 1000; seed < 1100; seed++) {
      const pool = randomPool(seed);
      const sdk = sdkDecodeLbPair(encodeLbPair(pool));
      const expected = sdkLbPairObject(pool);
      expect(normalize(sdk)).toEqual(normalize(expected));
      expect(sdk.activeId).toBe(pool.activeId);
      expect((sdk.tokenXMint as PublicKeyLike).toBase58()).toBe(pool.tokenA);
      expect(big((sdk.vParameters as { lastUpdateTimestamp: Bn }).lastUpdateTimestamp)).toBe(pool.vParameters.lastUpdateTimestamp);
    }
  });

  it('round-trips a plain DlmmPool through encode and decode', () => {
    const full = randomPool(7);
    const { pairType, activationType, activationPoint, rewardMints, oracle, protocolFeeX, protocolFeeY, lastUpdatedAt, tokenXProgramFlag, tokenYProgramFlag, version, address, ...plain } = full;
    void [pairType, activationType, activationPoint, rewardMints, oracle, protocolFeeX, protocolFeeY, lastUpdatedAt, tokenXProgramFlag, tokenYProgramFlag, version, address];
    const decoded = decodeLbPair(encodeLbPair(plain));
    expect(decoded).toMatchObject(plain);
    expect(decoded.address).toBeUndefined();
    expect(decoded.rewardMints).toEqual([DEFAULT_PUBKEY, DEFAULT_PUBKEY]);
  });

  it('refuses an account of the wrong size with AccountSize', () => {
    const data = encodeLbPair(randomPool(3));
    expectThrowsCode(() => decodeLbPair(data.subarray(0, 903)), ErrorCode.AccountSize);
    expectThrowsCode(() => decodeLbPair(new Uint8Array(905)), ErrorCode.AccountSize);
  });

  it('refuses another account type with AccountDiscriminator', () => {
    const data = encodeLbPair(randomPool(4));
    data[0] = data[0]! ^ 0xff;
    expectThrowsCode(() => decodeLbPair(data), ErrorCode.AccountDiscriminator);
  });

  it('refuses values outside the program range with AccountInvalid', () => {
    const base = encodeLbPair(randomPool(5));
    const zeroBinStep = base.slice();
    zeroBinStep[80] = 0;
    zeroBinStep[81] = 0;
    expectThrowsCode(() => decodeLbPair(zeroBinStep), ErrorCode.AccountInvalid);
    const badFeeMode = base.slice();
    badFeeMode[36] = 2;
    expectThrowsCode(() => decodeLbPair(badFeeMode), ErrorCode.AccountInvalid);
    const badActiveId = base.slice();
    new DataView(badActiveId.buffer).setInt32(76, 443_637, true);
    expectThrowsCode(() => decodeLbPair(badActiveId), ErrorCode.AccountInvalid);
  });

  it('decides limit-order support as the SDK does', () => {
    const rng = new Prng(99);
    for (let i = 0; i < 200; i++) {
      const pool = randomPool(5000 + i);
      pool.parameters = { ...pool.parameters, functionType: rng.pick([FunctionType.Undetermined, FunctionType.LiquidityMining, FunctionType.LimitOrder]) };
      const sdk = sdkDecodeLbPair(encodeLbPair(pool));
      expect(supportsLimitOrders(pool)).toBe(dlmmSdk().isSupportLimitOrder(sdk));
    }
  });
});

/** SDK records with BN and PublicKey values turned into strings, for deep comparison. */
function normalize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalize);
  if (value !== null && typeof value === 'object') {
    const v = value as { toBase58?: () => string; toString: () => string };
    if (typeof v.toBase58 === 'function') return v.toBase58();
    if ('negative' in (value as object) && 'words' in (value as object)) return v.toString();
    const out: SdkRecord = {};
    for (const [k, x] of Object.entries(value as SdkRecord)) out[k] = normalize(x);
    return out;
  }
  return value;
}
