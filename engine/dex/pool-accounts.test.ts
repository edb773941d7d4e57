import { Endian, address, getAddressEncoder, getI32Encoder, getI64Encoder, getProgramDerivedAddress, getU16Encoder } from '@solana/kit';
import { describe, expect, it } from 'vitest';

import * as base58 from '../chain/base58.js';
import { ErrorCode } from '../errors.js';
import { encodeClmmAmmConfig } from './clmm/amm-config.js';
import { decodeClmmPool, encodeClmmPool, setTickArrayBit } from './clmm/clmm-pool.js';
import { encodeClmmTickArray } from './clmm/tick-array.js';
import { withBinArrayBit } from './dlmm/bin-array-bitmap.js';
import { encodeBinArray } from './dlmm/bin-array.js';
import {
  DEFAULT_ARRAYS_EACH_SIDE,
  buildSwapState,
  clmmAmmConfigAddress,
  clmmTickArrayAddress,
  dlmmBinArrayAddress,
  lookaheadArrayKeys,
  reserveAccountsOf,
  swapAccountAddresses,
  swapArrayKeys,
  whirlpoolTickArrayAddress,
} from './pool-accounts.js';
import { METEORA_DLMM_PROGRAM_ID, ORCA_WHIRLPOOL_PROGRAM_ID, RAYDIUM_CLMM_PROGRAM_ID } from './program-ids.js';
import { createDecoderRegistry } from './registry.js';
import { Prng } from '../prng.js';
import { Dex, type AmmPool, type ConcentratedPool, type DlmmPool } from './types.js';
import { encodeWhirlpoolTickArray } from './whirlpool/tick-array.js';
import { decodeWhirlpool, encodeWhirlpool } from './whirlpool/whirlpool-account.js';

const K1 = 'So11111111111111111111111111111111111111112';
const K2 = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const POOL = base58.encode(new Prng(3).bytes(32));
const OTHER_POOL = base58.encode(new Prng(4).bytes(32));

const enc = getAddressEncoder();
const tick = (initialized: boolean) => ({ initialized, liquidityNet: initialized ? 7n : 0n, liquidityGross: initialized ? 7n : 0n });

function whirlpool(tickIndex: number, tickSpacing = 8): ConcentratedPool {
  return decodeWhirlpool(
    encodeWhirlpool({ tokenA: K1, tokenB: K2, vaultA: K1, vaultB: K2, sqrtPrice: 1n << 64n, tick: tickIndex, tickSpacing, liquidity: 1n, feeRate: 300 }),
    POOL,
  );
}

function clmm(tickIndex: number, tickSpacing: number, initializedArrays: readonly number[], ammConfig = K1): ConcentratedPool {
  const bitmap = new Array<bigint>(16).fill(0n);
  for (const index of initializedArrays) setTickArrayBit(bitmap, index * 60 * tickSpacing, tickSpacing, true);
  return decodeClmmPool(
    encodeClmmPool({ tokenA: K1, tokenB: K2, vaultA: K1, vaultB: K2, ammConfig, sqrtPrice: 1n << 64n, tick: tickIndex, tickSpacing, liquidity: 1n, tickArrayBitmap: bitmap }),
    POOL,
  );
}

function dlmm(activeId: number, arrays: readonly number[]): DlmmPool {
  let bitmap: bigint[] = new Array<bigint>(16).fill(0n);
  for (const index of arrays) bitmap = withBinArrayBit(bitmap, index, true);
  return {
    dex: Dex.Dlmm,
    address: POOL,
    tokenA: K1,
    tokenB: K2,
    activeId,
    binStep: 10,
    status: 0,
    reserveX: K1,
    reserveY: K2,
    parameters: {
      baseFactor: 10_000,
      filterPeriod: 30,
      decayPeriod: 600,
      reductionFactor: 5000,
      variableFeeControl: 0,
      maxVolatilityAccumulator: 0,
      minBinId: -443_636,
      maxBinId: 443_636,
      protocolShare: 0,
      baseFeePowerFactor: 0,
      functionType: 0,
      collectFeeMode: 0,
    },
    vParameters: { volatilityAccumulator: 0, volatilityReference: 0, indexReference: activeId, lastUpdateTimestamp: 0n },
    binArrayBitmap: bitmap,
  };
}

describe('pool account addresses', () => {
  it('derive the tick array, bin array and AmmConfig PDAs @solana/kit derives from the protocols\' seeds', async () => {
    const rng = new Prng(21);
    for (let i = 0; i < 6; i++) {
      const pool = base58.encode(rng.bytes(32));
      const start = rng.range(-50_000, 50_000);
      const [wp] = await getProgramDerivedAddress({
        programAddress: address(ORCA_WHIRLPOOL_PROGRAM_ID),
        seeds: ['tick_array', enc.encode(address(pool)), String(start)],
      });
      expect(whirlpoolTickArrayAddress(ORCA_WHIRLPOOL_PROGRAM_ID, pool, start)).toBe(wp);
      const [ray] = await getProgramDerivedAddress({
        programAddress: address(RAYDIUM_CLMM_PROGRAM_ID),
        seeds: ['tick_array', enc.encode(address(pool)), getI32Encoder({ endian: Endian.Big }).encode(start)],
      });
      expect(clmmTickArrayAddress(RAYDIUM_CLMM_PROGRAM_ID, pool, start)).toBe(ray);
      const index = rng.range(-600, 600);
      const [bin] = await getProgramDerivedAddress({
        programAddress: address(METEORA_DLMM_PROGRAM_ID),
        seeds: ['bin_array', enc.encode(address(pool)), getI64Encoder().encode(BigInt(index))],
      });
      expect(dlmmBinArrayAddress(METEORA_DLMM_PROGRAM_ID, pool, index)).toBe(bin);
    }
    const [config, bump] = await getProgramDerivedAddress({
      programAddress: address(RAYDIUM_CLMM_PROGRAM_ID),
      seeds: ['amm_config', getU16Encoder({ endian: Endian.Big }).encode(4)],
    });
    expect(clmmAmmConfigAddress(RAYDIUM_CLMM_PROGRAM_ID, 4)).toEqual({ address: config, bump });
  });

  it('takes the Whirlpool tick arrays around the current tick, consecutive, both ways', () => {
    const span = 8 * 88;
    expect(swapArrayKeys(whirlpool(5 * span + 3), { arraysEachSide: 2 })).toEqual([3, 4, 5, 6, 7].map((i) => i * span));
    // Negative ticks round down to the array that holds them.
    expect(swapArrayKeys(whirlpool(-1), { arraysEachSide: 1 })).toEqual([-2 * span, -span, 0]);
    expect(swapArrayKeys(whirlpool(0))).toHaveLength(2 * DEFAULT_ARRAYS_EACH_SIDE + 1);
  });

  it('stops at the ends of the tick range', () => {
    const spacing = 64;
    const span = spacing * 88;
    const keys = swapArrayKeys(whirlpool(443_600, spacing), { arraysEachSide: 3 });
    expect(keys.at(-1)).toBe(Math.floor(443_636 / span) * span);
    expect(keys).toHaveLength(4);
  });

  it('takes only the Raydium tick arrays its bitmap marks initialized: the current one and the nearest each way', () => {
    const spacing = 10;
    const span = 600;
    const pool = clmm(3 * span + 17, spacing, [-7, -2, 1, 3, 4, 9, 12, 40]);
    expect(swapArrayKeys(pool, { arraysEachSide: 2 })).toEqual([-2, 1, 3, 4, 9].map((i) => i * span));
    // The current array unmarked: the nearest marked ones, `each` on each side.
    const gap = clmm(6 * span, spacing, [-7, -2, 1, 3, 4, 9, 12, 40]);
    expect(swapArrayKeys(gap, { arraysEachSide: 2 })).toEqual([3, 4, 9, 12].map((i) => i * span));
    expect(swapArrayKeys(gap, { arraysEachSide: 0 })).toEqual([]);
  });

  it('takes the DLMM bin arrays its bitmap marks around the active bin', () => {
    const pool = dlmm(70 * 5 + 3, [-512, 0, 2, 5, 6, 511]);
    expect(swapArrayKeys(pool, { arraysEachSide: 2 })).toEqual([0, 2, 5, 6, 511]);
    expect(swapArrayKeys(pool, { arraysEachSide: 9 })).toEqual([-512, 0, 2, 5, 6, 511]);
    // Beyond the bitmap (an extension account tidepool does not read): consecutive arrays.
    expect(swapArrayKeys(dlmm(70 * 600, []), { arraysEachSide: 1 })).toEqual([599, 600, 601]);
  });

  it('takes the arrays ahead: the read window widened by arraysAhead, and unmarked arrays near the price', () => {
    const span = 8 * 88;
    expect(lookaheadArrayKeys(whirlpool(5 * span + 3), 2, { arraysEachSide: 1 })).toEqual([2, 3, 4, 5, 6, 7, 8].map((i) => i * span));
    // Raydium: the marked arrays of the wider window, and every array within 1 of the current one.
    const pool = clmm(3 * 600 + 17, 10, [-7, -2, 1, 3, 4, 9, 12, 40]);
    expect(lookaheadArrayKeys(pool, 1, { arraysEachSide: 1 })).toEqual([-2, 1, 2, 3, 4, 9].map((i) => i * 600));
    expect(lookaheadArrayKeys(dlmm(70 * 5 + 3, [-512, 0, 2, 5, 6, 511]), 1, { arraysEachSide: 1 })).toEqual([0, 2, 4, 5, 6, 511]);
    expect(() => lookaheadArrayKeys(pool, 62, { arraysEachSide: 3 })).toThrow(/arraysAhead/);
  });

  it('lists the arrays then the Raydium AmmConfig; none for the AMM', () => {
    const config = base58.encode(new Prng(9).bytes(32));
    const pool = clmm(0, 10, [-1, 0, 1], config);
    const accounts = swapAccountAddresses(pool, RAYDIUM_CLMM_PROGRAM_ID, { arraysEachSide: 1 });
    expect(accounts).toEqual([
      clmmTickArrayAddress(RAYDIUM_CLMM_PROGRAM_ID, POOL, -600),
      clmmTickArrayAddress(RAYDIUM_CLMM_PROGRAM_ID, POOL, 0),
      clmmTickArrayAddress(RAYDIUM_CLMM_PROGRAM_ID, POOL, 600),
      config,
    ]);
    const amm: AmmPool = { dex: Dex.Amm, tokenA: K1, tokenB: K2, status: 1n, reserveA: 1n, reserveB: 1n, feeNumerator: 25n, feeDenominator: 10_000n };
    expect(swapAccountAddresses(amm, 'any')).toEqual([]);
    expect(reserveAccountsOf(amm)).toBeUndefined();
    expect(reserveAccountsOf(pool)).toEqual([K1, K2]);
  });

  it('refuses an arraysEachSide out of range', () => {
    expect(() => swapArrayKeys(whirlpool(0), { arraysEachSide: -1 })).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'arraysEachSide', value: -1 } }));
    expect(() => swapArrayKeys(whirlpool(0), { arraysEachSide: 1.5 })).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'arraysEachSide', value: 1.5 } }));
  });
});

describe('buildSwapState', () => {
  const registry = createDecoderRegistry();

  it('collects the pool\'s tick arrays with their tick indexes and applies the Raydium AmmConfig fee', () => {
    const config = clmmAmmConfigAddress(RAYDIUM_CLMM_PROGRAM_ID, 1).address;
    const pool = clmm(5, 10, [0], config);
    const addresses = swapAccountAddresses(pool, RAYDIUM_CLMM_PROGRAM_ID, { arraysEachSide: 1 });
    const accounts = [
      { owner: RAYDIUM_CLMM_PROGRAM_ID, data: encodeClmmTickArray({ pool: POOL, startTickIndex: 0, tickSpacing: 10, ticks: [tick(false), tick(true)] }) },
      {
        owner: RAYDIUM_CLMM_PROGRAM_ID,
        data: encodeClmmAmmConfig({ bump: 1, index: 1, owner: K1, protocolFeeRate: 0, tradeFeeRate: 2500, tickSpacing: 10, fundFeeRate: 0, fundOwner: K2 }),
      },
    ];
    expect(pool.feeRate).toBeUndefined();
    const state = buildSwapState(registry, pool, addresses, accounts, 1_750_000_000n);
    expect((state.pool as ConcentratedPool).feeRate).toBe(2500);
    expect(state.context!.nowSeconds).toBe(1_750_000_000n);
    expect(state.context!.tickArrays).toHaveLength(1);
    expect(state.context!.tickArrays![0]!.ticks[1]).toMatchObject({ index: 10, initialized: true, liquidityNet: 7n });
  });

  it('leaves out missing accounts, accounts of another pool or another program, and bytes that do not decode', () => {
    const pool = whirlpool(0);
    const addresses = swapAccountAddresses(pool, ORCA_WHIRLPOOL_PROGRAM_ID, { arraysEachSide: 2 });
    const array = (start: number, of = POOL) => ({ owner: ORCA_WHIRLPOOL_PROGRAM_ID, data: encodeWhirlpoolTickArray({ pool: of, startTickIndex: start, ticks: [tick(true)] }) });
    const span = 8 * 88;
    const accounts = [
      null,
      array(-span, OTHER_POOL),
      array(0),
      { owner: RAYDIUM_CLMM_PROGRAM_ID, data: array(span).data },
      { owner: ORCA_WHIRLPOOL_PROGRAM_ID, data: new Uint8Array(40) },
    ];
    const state = buildSwapState(registry, pool, addresses, accounts);
    expect(state.context!.tickArrays!.map((a) => a.startTickIndex)).toEqual([0]);
    expect(state.context!.nowSeconds).toBeUndefined();
    expect(state.pool).toBe(pool);
  });

  it('collects DLMM bin arrays; the AMM has no context', () => {
    const pool = dlmm(3, [0]);
    const bins = Array.from({ length: 70 }, (_, i) => ({ id: i, amountX: 1n, amountY: 1n, price: 1n << 64n, liquiditySupply: 1n }));
    const data = encodeBinArray({ pool: POOL, index: 0n, bins });
    const state = buildSwapState(registry, pool, [dlmmBinArrayAddress(METEORA_DLMM_PROGRAM_ID, POOL, 0)], [{ owner: METEORA_DLMM_PROGRAM_ID, data }]);
    expect(state.context!.binArrays!.map((a) => a.index)).toEqual([0n]);
    const amm: AmmPool = { dex: Dex.Amm, tokenA: K1, tokenB: K2, status: 1n, reserveA: 1n, reserveB: 1n, feeNumerator: 25n, feeDenominator: 10_000n };
    expect(buildSwapState(registry, amm, [], [])).toEqual({ pool: amm, context: undefined });
  });
});
