import { describe, expect, it } from 'vitest';

import { ErrorCode, isTpError } from '../errors.js';
import { encodeAmmInfo } from './amm/amm-info.js';
import { encodeClmmAmmConfig } from './clmm/amm-config.js';
import { encodeClmmPool } from './clmm/clmm-pool.js';
import { encodeClmmTickArray } from './clmm/tick-array.js';
import { encodeBinArray, encodeLbPair } from './dlmm/index.js';
import { randomScenario } from './dlmm/testing/random-pools.js';
import {
  DEFAULT_PROGRAM_IDS,
  METEORA_DLMM_PROGRAM_ID,
  ORCA_WHIRLPOOL_PROGRAM_ID,
  RAYDIUM_AMM_V4_PROGRAM_ID,
  RAYDIUM_CLMM_PROGRAM_ID,
} from './program-ids.js';
import { DecoderRegistry, UNKNOWN_DEX, type DecodedAccount } from './registry.js';
import { Prng } from './testing/prng.js';
import { Dex } from './types.js';
import { encodeWhirlpoolDynamicTickArray, encodeWhirlpoolTickArray } from './whirlpool/tick-array.js';
import { encodeWhirlpool } from './whirlpool/whirlpool-account.js';

const K1 = 'So11111111111111111111111111111111111111112';
const K2 = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const WP = 'HJPjoWUrhoZzkNfRpHuieeFk9WcZWjwy6PBjZ81ngndJ';
const RAY = '3ucNos4NbumPLZNWztqGHNFFgkHeRMBQAVemeeomsUxv';

const ticks = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ initialized: i === 3, liquidityNet: i === 3 ? 5n : 0n, liquidityGross: i === 3 ? 5n : 0n }));

function accounts(): Array<{ owner: string; data: Uint8Array; kind: DecodedAccount['kind']; dex: Dex }> {
  const scenario = randomScenario(new Prng(7));
  return [
    { owner: RAYDIUM_AMM_V4_PROGRAM_ID, kind: 'pool', dex: Dex.Amm, data: encodeAmmInfo({ status: 1n, nonce: 254n, coinDecimals: 9n, pcDecimals: 6n, swapFeeNumerator: 25n, swapFeeDenominator: 10_000n, coinVault: K1, coinMint: K1, pcVault: K2, pcMint: K2 }) },
    {
      owner: ORCA_WHIRLPOOL_PROGRAM_ID,
      kind: 'pool',
      dex: Dex.Whirlpool,
      data: encodeWhirlpool({ tokenA: K1, tokenB: K2, vaultA: K1, vaultB: K2, sqrtPrice: 1n << 64n, tick: 0, tickSpacing: 8, liquidity: 1n, feeRate: 300 }),
    },
    { owner: ORCA_WHIRLPOOL_PROGRAM_ID, kind: 'tickArray', dex: Dex.Whirlpool, data: encodeWhirlpoolTickArray({ pool: WP, startTickIndex: 704, ticks: ticks(88) }) },
    {
      owner: ORCA_WHIRLPOOL_PROGRAM_ID,
      kind: 'tickArray',
      dex: Dex.Whirlpool,
      data: encodeWhirlpoolDynamicTickArray({ pool: WP, startTickIndex: -704, ticks: ticks(88) }),
    },
    {
      owner: RAYDIUM_CLMM_PROGRAM_ID,
      kind: 'pool',
      dex: Dex.Clmm,
      data: encodeClmmPool({ tokenA: K1, tokenB: K2, vaultA: K1, vaultB: K2, ammConfig: K1, sqrtPrice: 1n << 64n, tick: 0, tickSpacing: 10, liquidity: 1n }),
    },
    {
      owner: RAYDIUM_CLMM_PROGRAM_ID,
      kind: 'ammConfig',
      dex: Dex.Clmm,
      data: encodeClmmAmmConfig({ bump: 1, index: 0, owner: K1, protocolFeeRate: 0, tradeFeeRate: 500, tickSpacing: 10, fundFeeRate: 0, fundOwner: K2 }),
    },
    { owner: RAYDIUM_CLMM_PROGRAM_ID, kind: 'tickArray', dex: Dex.Clmm, data: encodeClmmTickArray({ pool: RAY, startTickIndex: 600, tickSpacing: 10, ticks: ticks(60) }) },
    { owner: METEORA_DLMM_PROGRAM_ID, kind: 'pool', dex: Dex.Dlmm, data: encodeLbPair(scenario.pool) },
    { owner: METEORA_DLMM_PROGRAM_ID, kind: 'binArray', dex: Dex.Dlmm, data: encodeBinArray(scenario.binArrays[0]!) },
  ];
}

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return isTpError(err) ? err.code : 'not a TpError';
  }
  return 'no error';
}

describe('decoder registry', () => {
  it('tells every account type of every program apart by owner, discriminator and size', () => {
    const registry = new DecoderRegistry();
    for (const a of accounts()) {
      const decoded = registry.decodeAccount(a.owner, a.data, 'addr');
      expect({ kind: decoded.kind, dex: decoded.dex }).toEqual({ kind: a.kind, dex: a.dex });
    }
    const stats = registry.stats();
    expect(stats.decoded[Dex.Whirlpool]).toEqual({ pool: 1, tickArray: 2, ammConfig: 0, binArray: 0 });
    expect(stats.decoded[Dex.Clmm]).toEqual({ pool: 1, tickArray: 1, ammConfig: 1, binArray: 0 });
    expect(stats.decoded[Dex.Dlmm]).toEqual({ pool: 1, tickArray: 0, ammConfig: 0, binArray: 1 });
    expect(stats.decoded[Dex.Amm]).toEqual({ pool: 1, tickArray: 0, ammConfig: 0, binArray: 0 });
    expect(stats.failures).toEqual({ dexa_amm: {}, dexa_clmm: {}, dexb_dlmm: {}, dexc_whirlpool: {}, unknown: {} });
  });

  it('throws and counts unknown owners, wrong sizes and wrong discriminators, by dex and code', () => {
    const registry = new DecoderRegistry();
    const [amm, whirlpool, fixedArray, , clmm, config] = accounts();
    expect(codeOf(() => registry.decodeAccount('11111111111111111111111111111111', amm!.data))).toBe(ErrorCode.UnknownOwner);
    expect(codeOf(() => registry.decodeAccount(RAYDIUM_AMM_V4_PROGRAM_ID, amm!.data.subarray(0, 751)))).toBe(ErrorCode.AccountSize);
    expect(codeOf(() => registry.decodeAccount(ORCA_WHIRLPOOL_PROGRAM_ID, whirlpool!.data.subarray(0, 600)))).toBe(ErrorCode.AccountSize);
    expect(codeOf(() => registry.decodeAccount(ORCA_WHIRLPOOL_PROGRAM_ID, fixedArray!.data.subarray(0, 9000)))).toBe(ErrorCode.AccountSize);
    expect(codeOf(() => registry.decodeAccount(ORCA_WHIRLPOOL_PROGRAM_ID, new Uint8Array(4)))).toBe(ErrorCode.AccountSize);
    // A Raydium account sent to the Whirlpool decoder, an unknown Raydium account type.
    expect(codeOf(() => registry.decodeAccount(ORCA_WHIRLPOOL_PROGRAM_ID, clmm!.data))).toBe(ErrorCode.AccountDiscriminator);
    const unknownType = config!.data.slice();
    unknownType[0] = 0;
    expect(codeOf(() => registry.decodeAccount(RAYDIUM_CLMM_PROGRAM_ID, unknownType))).toBe(ErrorCode.AccountDiscriminator);
    expect(codeOf(() => registry.decodeAccount(METEORA_DLMM_PROGRAM_ID, clmm!.data))).toBe(ErrorCode.AccountDiscriminator);
    // Right discriminator, impossible content.
    const zeroSpacing = clmm!.data.slice();
    zeroSpacing[235] = 0;
    zeroSpacing[236] = 0;
    expect(codeOf(() => registry.decodeAccount(RAYDIUM_CLMM_PROGRAM_ID, zeroSpacing))).toBe(ErrorCode.AccountInvalid);

    expect(registry.stats().failures).toEqual({
      [UNKNOWN_DEX]: { [ErrorCode.UnknownOwner]: 1 },
      [Dex.Amm]: { [ErrorCode.AccountSize]: 1 },
      [Dex.Whirlpool]: { [ErrorCode.AccountSize]: 3, [ErrorCode.AccountDiscriminator]: 1 },
      [Dex.Clmm]: { [ErrorCode.AccountDiscriminator]: 1, [ErrorCode.AccountInvalid]: 1 },
      [Dex.Dlmm]: { [ErrorCode.AccountDiscriminator]: 1 },
    });
  });

  it('uses configured program ids, and refuses one id for two dexes', () => {
    const custom = 'CustomProgram1111111111111111111111111111111';
    const registry = new DecoderRegistry({ programIds: { [Dex.Amm]: custom } });
    expect(registry.dexOf(custom)).toBe(Dex.Amm);
    expect(registry.dexOf(RAYDIUM_AMM_V4_PROGRAM_ID)).toBeUndefined();
    expect(registry.dexOf(RAYDIUM_CLMM_PROGRAM_ID)).toBe(Dex.Clmm);
    expect(registry.programIdByDex).toEqual({ ...DEFAULT_PROGRAM_IDS, [Dex.Amm]: custom });
    expect(registry.decodeAccount(custom, accounts()[0]!.data).kind).toBe('pool');
    expect(codeOf(() => new DecoderRegistry({ programIds: { [Dex.Amm]: RAYDIUM_CLMM_PROGRAM_ID } }))).toBe(ErrorCode.ConfigInvalid);
  });

  it('fills in tick indexes when it knows the pool tick spacing', () => {
    const registry = new DecoderRegistry({ tickSpacingOf: (pool) => (pool === WP ? 8 : pool === RAY ? 10 : undefined) });
    const wp = registry.decodeAccount(ORCA_WHIRLPOOL_PROGRAM_ID, accounts()[2]!.data);
    expect(wp.kind === 'tickArray' && wp.tickArray.ticks[3]!.index).toBe(704 + 3 * 8);
    const bare = new DecoderRegistry().decodeAccount(ORCA_WHIRLPOOL_PROGRAM_ID, accounts()[2]!.data);
    expect(bare.kind === 'tickArray' && Number.isNaN(bare.tickArray.ticks[3]!.index)).toBe(true);
    const ray = registry.decodeAccount(RAYDIUM_CLMM_PROGRAM_ID, accounts()[6]!.data);
    expect(ray.kind === 'tickArray' && ray.tickArray.ticks[5]!.index).toBe(650);
  });
});
