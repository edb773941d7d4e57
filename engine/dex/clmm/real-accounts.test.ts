/**
 * Raydium CLMM on account bytes taken from mainnet (engine/dex/test-fixtures/README.md names the
 * repository, path and commit): a PoolState and its AmmConfig, and another pool's tick array, decode
 * as Raydium SDK v2's PoolInfoLayout / ClmmConfigLayout / TickArrayLayout read the same bytes, and the
 * pool quotes equal to the SDK's `swapInternal` on the same PoolState and AmmConfig bytes, to the unit.
 *
 * The pool (SOL / 4kzLMx…, tick spacing 1, AmmConfig index 4: 1 bp) is at tick 71168, tick array
 * 1186: beyond the ±512 arrays of the pool's own bitmap, in its bitmap extension account, which the
 * dump does not hold, nor any of its tick arrays. With that data missing ours quotes what stays inside
 * the current tick and refuses the rest (`insufficient_liquidity_data`, never another number); the
 * SDK is given a tick array with the current tick's two edges marked (liquidity net 0), which it
 * walks within the same tick.
 *
 * A second pool (SOL-USDC, tick spacing 1, 4 bp) comes with its AmmConfig, its bitmap extension and
 * five of its own tick arrays around the current tick, from one snapshot: on those real bytes
 * alone ours quotes as swapInternal does across the arrays, crossing real initialized ticks, and
 * refuses past the arrays it holds.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ClmmConfigLayout, PoolInfoLayout, TickArrayBitmapExtensionLayout, TickArrayLayout, swapInternal, toBN } from '@raydium-io/raydium-sdk-v2';
import { PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';

import { SwapFailure, SwapMode, type SwapRequest, type SwapResult } from '../types.js';
import { decodeClmmAmmConfig, withAmmConfig } from './amm-config.js';
import { decodeClmmPool } from './clmm-pool.js';
import { quoteClmm } from './clmm-swap.js';
import { decodeClmmTickArray, encodeClmmTickArray } from './tick-array.js';

const DIR = join(import.meta.dirname, '../test-fixtures/raydium-clmm');
const POOL = 'AcPS8SrzXDwPxk6LLz2tykwFEsSeD5LtctMLVeh2shq8';
const CONFIG = '9iFER3bpjf1PTTCQCfTRu17EJgvsxo9pVyA9QWwEuX4x';
const OTHER_POOL = '2AP2wU8HnpsxJ2ErSjWeSRzG1HLootMoisthJouWJLka';
const read = (pool: string, name: string) => new Uint8Array(readFileSync(join(DIR, pool, `${name}.bin`)));
const POOL_BYTES = read(POOL, 'pool_state');
const CONFIG_BYTES = read(POOL, 'amm_config');
const OTHER_ARRAY_BYTES = read(OTHER_POOL, 'tick_array_-13860');

const sdkPool = PoolInfoLayout.decode(Buffer.from(POOL_BYTES));
const sdkConfig = ClmmConfigLayout.decode(Buffer.from(CONFIG_BYTES));

type Outcome = { ok: true; amountIn: bigint; amountOut: bigint; fee: bigint } | { ok: false };

function sdkQuote(req: SwapRequest): Outcome {
  const spacing = sdkPool.tickSpacing;
  const start = Math.floor(sdkPool.tickCurrent / (60 * spacing)) * 60 * spacing;
  // swapInternal steps only towards an initialized tick: mark the current tick's two edges
  // (net 0), so that it quotes within the tick and stops at either edge.
  const edges = new Set([sdkPool.tickCurrent, sdkPool.tickCurrent + spacing].map((t) => (t - start) / spacing));
  const ticks = Array.from({ length: 60 }, (_, slot) => ({ initialized: edges.has(slot), liquidityNet: 0n, liquidityGross: edges.has(slot) ? 1n : 0n }));
  const edgeArray = encodeClmmTickArray({ pool: POOL, startTickIndex: start, tickSpacing: spacing, ticks });
  try {
    const result = swapInternal({
      programId: undefined as never,
      poolId: undefined as never,
      poolInfo: sdkPool,
      tickArrays: [{ address: undefined as never, value: TickArrayLayout.decode(Buffer.from(edgeArray)) }],
      configInfo: sdkConfig,
      tickarrayBitmapExtension: undefined as never,
      amountSpecified: toBN(req.amount.toString()),
      sqrtPriceLimitX64: toBN(0),
      zeroForOne: req.aToB,
      isBaseInput: req.mode === SwapMode.ExactIn,
      blockTimestamp: 0,
      includeExtraTickArrays: false,
    });
    if (!result.allTrade) return { ok: false };
    const calculated = BigInt(result.amountCalculated.toString());
    const fee = BigInt(result.feeAmount.toString());
    return req.mode === SwapMode.ExactIn ? { ok: true, amountIn: req.amount, amountOut: calculated, fee } : { ok: true, amountIn: calculated, amountOut: req.amount, fee };
  } catch {
    return { ok: false };
  }
}

function expectSame(ours: SwapResult, sdk: Outcome, label: string): void {
  if (!sdk.ok || sdk.amountOut === 0n || sdk.amountIn === 0n) {
    expect(ours.ok, label).toBe(false);
    return;
  }
  expect(ours.ok, `${label}: ${ours.ok ? '' : ours.message}`).toBe(true);
  if (!ours.ok) return;
  expect([ours.amountIn, ours.amountOut, ours.fee], label).toEqual([sdk.amountIn, sdk.amountOut, sdk.fee]);
}

describe(`Raydium CLMM mainnet pool ${POOL}`, () => {
  it("decodes the PoolState, its AmmConfig and a tick array as the SDK's layouts read the same bytes", () => {
    const pool = decodeClmmPool(POOL_BYTES, POOL);
    expect(pool).toMatchObject({
      tokenA: sdkPool.mintA.toBase58(),
      tokenB: sdkPool.mintB.toBase58(),
      vaultA: sdkPool.vaultA.toBase58(),
      vaultB: sdkPool.vaultB.toBase58(),
      ammConfig: sdkPool.configId.toBase58(),
      observationKey: sdkPool.observationId.toBase58(),
      sqrtPrice: BigInt(sdkPool.sqrtPriceX64.toString()),
      tick: sdkPool.tickCurrent,
      tickSpacing: sdkPool.tickSpacing,
      liquidity: BigInt(sdkPool.liquidity.toString()),
      decimalsA: sdkPool.mintDecimalsA,
      decimalsB: sdkPool.mintDecimalsB,
    });
    expect(pool.ammConfig).toBe(CONFIG);
    expect((pool as { tickArrayBitmap?: bigint[] }).tickArrayBitmap).toEqual(
      Array.from({ length: 16 }, (_, i) => (sdkPool.tickArrayBitmap as Buffer).readBigUInt64LE(8 * i)),
    );

    const config = decodeClmmAmmConfig(CONFIG_BYTES, CONFIG);
    expect(config).toMatchObject({
      index: sdkConfig.index,
      tradeFeeRate: sdkConfig.tradeFeeRate,
      protocolFeeRate: sdkConfig.protocolFeeRate,
      fundFeeRate: sdkConfig.fundFeeRate,
      tickSpacing: sdkConfig.tickSpacing,
      owner: sdkConfig.owner.toBase58(),
      fundOwner: sdkConfig.fundOwner.toBase58(),
    });

    const array = decodeClmmTickArray(OTHER_ARRAY_BYTES);
    const sdkArray = TickArrayLayout.decode(Buffer.from(OTHER_ARRAY_BYTES));
    expect([array.pool, array.startTickIndex]).toEqual([sdkArray.poolId.toBase58(), sdkArray.startTickIndex]);
    expect(array.ticks.map((t) => [t.liquidityNet, t.liquidityGross])).toEqual(
      sdkArray.ticks.map((t) => [BigInt(t.liquidityNet.toString()), BigInt(t.liquidityGross.toString())]),
    );
  });

  it('quotes what stays in the current tick as swapInternal does, and refuses what needs the missing arrays', () => {
    const pool = withAmmConfig(decodeClmmPool(POOL_BYTES, POOL), decodeClmmAmmConfig(CONFIG_BYTES, CONFIG));
    let quoted = 0;
    let needsData = 0;
    for (const aToB of [true, false]) {
      for (const mode of [SwapMode.ExactIn, SwapMode.ExactOut]) {
        for (let exp = 0n; exp <= 40n; exp += 1n) {
          const req = { aToB, mode, amount: (1n << exp) + exp };
          const ours = quoteClmm(pool, req, {});
          if (!ours.ok && ours.reason === SwapFailure.InsufficientLiquidityData) {
            needsData++;
            continue;
          }
          expectSame(ours, sdkQuote(req), `${aToB} ${mode} ${req.amount}`);
          if (ours.ok) quoted++;
        }
      }
    }
    expect(quoted).toBeGreaterThan(20);
    expect(needsData).toBeGreaterThan(0);
  });
});

describe('Raydium CLMM mainnet pool 3ucNos4NbumPLZNWztqGHNFFgkHeRMBQAVemeeomsUxv with its own tick arrays', () => {
  const SOL_USDC = '3ucNos4NbumPLZNWztqGHNFFgkHeRMBQAVemeeomsUxv';
  const SOL_USDC_CONFIG = '3h2e43PunVA5K34vwKCLHWhZF4aZpyaC9RmxvshGAQpL';
  const STARTS = [-25200, -25140, -25080, -25020, -24960];
  const poolBytes = read(SOL_USDC, 'pool_state');
  const configBytes = read(SOL_USDC, 'amm_config');
  const extensionBytes = read(SOL_USDC, 'tick_array_bitmap_extension');
  const arrayBytes = STARTS.map((start) => read(SOL_USDC, `tick_array_${start}`));
  const pool = withAmmConfig(decodeClmmPool(poolBytes, SOL_USDC), decodeClmmAmmConfig(configBytes, SOL_USDC_CONFIG));
  const ours = arrayBytes.map((b) => decodeClmmTickArray(b, undefined, 1));
  const sdkState = PoolInfoLayout.decode(Buffer.from(poolBytes));
  const sdkCfg = ClmmConfigLayout.decode(Buffer.from(configBytes));
  const sdkArrays = arrayBytes.map((b, i) => ({ address: new PublicKey(new Uint8Array(32).fill(i + 1)), value: TickArrayLayout.decode(Buffer.from(b)) }));
  // swapInternal walks its list in order from the array holding the current tick, as the swap
  // instruction's remaining accounts are given: the current one first, then each in swap direction.
  const CURRENT = STARTS.indexOf(-25080);
  const inSwapOrder = (aToB: boolean) => (aToB ? sdkArrays.slice(0, CURRENT + 1).reverse() : sdkArrays.slice(CURRENT));
  const sdkExtension = TickArrayBitmapExtensionLayout.decode(Buffer.from(extensionBytes));

  function sdkSwap(req: SwapRequest): Outcome {
    try {
      const result = swapInternal({
        programId: undefined as never,
        poolId: new PublicKey(SOL_USDC),
        poolInfo: sdkState,
        tickArrays: inSwapOrder(req.aToB),
        configInfo: sdkCfg,
        tickarrayBitmapExtension: sdkExtension as never,
        amountSpecified: toBN(req.amount.toString()),
        sqrtPriceLimitX64: toBN(0),
        zeroForOne: req.aToB,
        isBaseInput: req.mode === SwapMode.ExactIn,
        blockTimestamp: 0,
        includeExtraTickArrays: false,
      });
      if (!result.allTrade) return { ok: false };
      const calculated = BigInt(result.amountCalculated.toString());
      const fee = BigInt(result.feeAmount.toString());
      return req.mode === SwapMode.ExactIn ? { ok: true, amountIn: req.amount, amountOut: calculated, fee } : { ok: true, amountIn: calculated, amountOut: req.amount, fee };
    } catch {
      return { ok: false };
    }
  }

  it('holds the array of the current tick and its neighbours, all of this pool, as the SDK decodes them', () => {
    expect(pool).toMatchObject({ tokenA: 'So11111111111111111111111111111111111111112', tokenB: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', tickSpacing: 1, tick: -25038, feeRate: 400, ammConfig: SOL_USDC_CONFIG });
    expect(TickArrayBitmapExtensionLayout.decode(Buffer.from(extensionBytes)).poolId.toBase58()).toBe(SOL_USDC);
    for (const [i, b] of arrayBytes.entries()) {
      const sdk = TickArrayLayout.decode(Buffer.from(b));
      expect([ours[i]!.pool, ours[i]!.startTickIndex, sdk.poolId.toBase58(), sdk.startTickIndex]).toEqual([SOL_USDC, STARTS[i], SOL_USDC, STARTS[i]]);
      expect(ours[i]!.ticks.map((t) => [t.liquidityNet, t.liquidityGross])).toEqual(sdk.ticks.map((t) => [BigInt(t.liquidityNet.toString()), BigInt(t.liquidityGross.toString())]));
    }
    expect(ours.flatMap((a) => a.ticks.filter((t) => t.initialized)).length).toBeGreaterThan(10);
  });

  it('on those real bytes alone, quotes as swapInternal does, crossing real ticks, and refuses past the arrays', () => {
    let quoted = 0;
    let crossed = 0;
    let needsData = 0;
    for (const aToB of [true, false]) {
      for (const mode of [SwapMode.ExactIn, SwapMode.ExactOut]) {
        for (let exp = 0n; exp <= 44n; exp += 1n) {
          const req = { aToB, mode, amount: (1n << exp) + exp };
          const result = quoteClmm(pool, req, { tickArrays: ours });
          if (!result.ok && result.reason === SwapFailure.InsufficientLiquidityData) {
            needsData++;
            continue;
          }
          expectSame(result, sdkSwap(req), `${aToB} ${mode} ${req.amount}`);
          if (result.ok) {
            quoted++;
            if (result.liquidityAfter !== undefined && result.liquidityAfter !== pool.liquidity) crossed++;
          }
        }
      }
    }
    expect(quoted).toBeGreaterThan(40);
    expect(crossed).toBeGreaterThan(0);
    expect(needsData).toBeGreaterThan(0);
  });

  it("quotes the source's own pinned reference values on these bytes, crossing initialized ticks", () => {
    // eco-incorp/sauce-sdk sdk/test/svm/venues/raydium-clmm.test.ts: 2^36 lamports in (0 to 1) and
    // 2^33 USDC atoms in (1 to 0), by that repository's own implementation of the program's math.
    const sell = quoteClmm(pool, { aToB: true, mode: SwapMode.ExactIn, amount: 1n << 36n }, { tickArrays: ours });
    const buy = quoteClmm(pool, { aToB: false, mode: SwapMode.ExactIn, amount: 1n << 33n }, { tickArrays: ours });
    expect(sell).toMatchObject({ ok: true, amountOut: 5_617_442_468n });
    expect(buy).toMatchObject({ ok: true, amountOut: 104_951_027_622n });
    expect(sell.ok && sell.liquidityAfter).not.toBe(pool.liquidity);
    expect(buy.ok && buy.liquidityAfter).not.toBe(pool.liquidity);
  });
});
