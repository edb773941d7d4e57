/**
 * Orca Whirlpool on account bytes taken from mainnet (engine/dex/test-fixtures/README.md names the
 * repository, path and commit): a Whirlpool, one of its fixed tick arrays and another pool's
 * dynamic tick array decode as @orca-so/whirlpools-client's decoders read the same bytes, and the
 * pool quotes equal to @orca-so/whirlpools-core `swapQuoteByInputToken` / `swapQuoteByOutputToken`
 * on the same bytes, to the unit.
 *
 * The pool (SOL / DzkKGB…, tick spacing 32896: a splash pool, whose only positions are full range)
 * sits at tick 223338 in the tick array starting at 0, which the dump does not hold. With the real
 * bytes alone ours quotes swaps that stay inside the current tick-spacing slot and refuses the rest
 * (the data ends there); the SDK gets the real array and an empty array at 0. Then both get the array
 * at 0 as a full-range position implies it (tick 427648, net -liquidity, mirror of the real array's
 * -427648, net +liquidity), written by our encoder, and agree over the whole range.
 *
 * A second pool (SOL-USDC, tick spacing 4) comes with its current tick array and the two on each
 * side, all from one snapshot: on those real bytes alone ours quotes as the SDK does across five
 * arrays, crossing real initialized ticks, and refuses past the last array it holds.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getDynamicTickArrayDecoder, getFixedTickArrayDecoder, getWhirlpoolDecoder } from '@orca-so/whirlpools-client';
import { swapQuoteByInputToken, swapQuoteByOutputToken, type TickArrayFacade, type WhirlpoolFacade } from '@orca-so/whirlpools-core';
import { describe, expect, it } from 'vitest';

import { SwapFailure, SwapMode, type SwapRequest, type SwapResult, type TickArray } from '../types.js';
import { decodeWhirlpoolTickArray, encodeWhirlpoolTickArray } from './tick-array.js';
import { decodeWhirlpool } from './whirlpool-account.js';
import { quoteWhirlpool } from './whirlpool-swap.js';

const DIR = join(import.meta.dirname, '../test-fixtures/orca-whirlpool');
const POOL = 'CGGNcohZdLdeDBdhmQRGmUH1Viv1p4d1ds2aPLoiVWaR';
const OTHER_POOL = 'XbZJ25spXckFsU7xYD2Sr3FkXsiw991yHPshExYSpD9';
const read = (pool: string, name: string) => new Uint8Array(readFileSync(join(DIR, pool, `${name}.bin`)));
const POOL_BYTES = read(POOL, 'whirlpool');
const ARRAY_BYTES = read(POOL, 'tick_array_-2894848');
const DYNAMIC_BYTES = read(OTHER_POOL, 'dynamic_tick_array_45056');
const SPACING = 32896;

const sdkPool = getWhirlpoolDecoder().decode(POOL_BYTES);

function facadeOf(bytes: Uint8Array): WhirlpoolFacade {
  const p = getWhirlpoolDecoder().decode(bytes);
  return {
    feeTierIndexSeed: new Uint8Array(p.feeTierIndexSeed),
    tickSpacing: p.tickSpacing,
    feeRate: p.feeRate,
    protocolFeeRate: p.protocolFeeRate,
    liquidity: p.liquidity,
    sqrtPrice: p.sqrtPrice,
    tickCurrentIndex: p.tickCurrentIndex,
    feeGrowthGlobalA: p.feeGrowthGlobalA,
    feeGrowthGlobalB: p.feeGrowthGlobalB,
    rewardLastUpdatedTimestamp: p.rewardLastUpdatedTimestamp,
    rewardInfos: p.rewardInfos.map((r) => ({ emissionsPerSecondX64: r.emissionsPerSecondX64, growthGlobalX64: r.growthGlobalX64 })),
  };
}
const facade = facadeOf(POOL_BYTES);

function sdkArray(bytes: Uint8Array): TickArrayFacade {
  const decoded = getFixedTickArrayDecoder().decode(bytes);
  return {
    startTickIndex: decoded.startTickIndex,
    ticks: decoded.ticks.map((t) => ({
      initialized: t.initialized,
      liquidityNet: t.liquidityNet,
      liquidityGross: t.liquidityGross,
      feeGrowthOutsideA: t.feeGrowthOutsideA,
      feeGrowthOutsideB: t.feeGrowthOutsideB,
      rewardGrowthsOutside: [...t.rewardGrowthsOutside],
    })),
  };
}

/** The array at 0 as the splash pool's full-range position implies it (or empty). */
function upperArrayBytes(withUpperTick: boolean): Uint8Array {
  const upper = 427648 / SPACING; // 13: tick 427648 is the array's 14th
  const ticks = Array.from({ length: 88 }, (_, i) =>
    withUpperTick && i === upper
      ? { initialized: true, liquidityNet: -sdkPool.liquidity, liquidityGross: sdkPool.liquidity }
      : { initialized: false, liquidityNet: 0n, liquidityGross: 0n },
  );
  return encodeWhirlpoolTickArray({ pool: POOL, startTickIndex: 0, ticks });
}

type Outcome = { ok: true; amountIn: bigint; amountOut: bigint; fee: bigint } | { ok: false };

function sdkQuote(arrays: TickArrayFacade[], req: SwapRequest, pool: WhirlpoolFacade = facade): Outcome {
  try {
    if (req.mode === SwapMode.ExactIn) {
      const q = swapQuoteByInputToken(req.amount, req.aToB, 0, pool, undefined, arrays, 0n);
      return q.tokenIn < req.amount ? { ok: false } : { ok: true, amountIn: q.tokenIn, amountOut: q.tokenEstOut, fee: q.tradeFee };
    }
    const q = swapQuoteByOutputToken(req.amount, !req.aToB, 0, pool, undefined, arrays, 0n);
    return q.tokenOut < req.amount ? { ok: false } : { ok: true, amountIn: q.tokenEstIn, amountOut: q.tokenOut, fee: q.tradeFee };
  } catch {
    return { ok: false };
  }
}

function expectSame(ours: SwapResult, sdk: Outcome, label: string): void {
  if (!sdk.ok || sdk.amountOut === 0n) {
    expect(ours.ok, label).toBe(false);
    return;
  }
  expect(ours.ok, `${label}: ${ours.ok ? '' : ours.message}`).toBe(true);
  if (!ours.ok) return;
  expect([ours.amountIn, ours.amountOut, ours.fee], label).toEqual([sdk.amountIn, sdk.amountOut, sdk.fee]);
}

/** Amounts from one atom to far past the pool's depth, each way and mode. */
function requests(): SwapRequest[] {
  const out: SwapRequest[] = [];
  for (const aToB of [true, false]) {
    for (const mode of [SwapMode.ExactIn, SwapMode.ExactOut]) {
      for (let exp = 0n; exp <= 60n; exp += 3n) out.push({ aToB, mode, amount: 1n << exp });
      out.push({ aToB, mode, amount: 999_983n }, { aToB, mode, amount: 123_456_789_011n });
    }
  }
  return out;
}

describe(`Orca Whirlpool mainnet pool ${POOL}`, () => {
  it("decodes the Whirlpool and its tick arrays as whirlpools-client's decoders read the same bytes", () => {
    const ours = decodeWhirlpool(POOL_BYTES, POOL);
    expect(ours).toMatchObject({
      tokenA: String(sdkPool.tokenMintA),
      tokenB: String(sdkPool.tokenMintB),
      vaultA: String(sdkPool.tokenVaultA),
      vaultB: String(sdkPool.tokenVaultB),
      sqrtPrice: sdkPool.sqrtPrice,
      tick: sdkPool.tickCurrentIndex,
      tickSpacing: sdkPool.tickSpacing,
      liquidity: sdkPool.liquidity,
      feeRate: sdkPool.feeRate,
    });
    const array = decodeWhirlpoolTickArray(ARRAY_BYTES, undefined, SPACING);
    const sdk = getFixedTickArrayDecoder().decode(ARRAY_BYTES);
    expect([array.pool, array.startTickIndex]).toEqual([String(sdk.whirlpool), sdk.startTickIndex]);
    expect(array.ticks.map((t) => [t.initialized, t.liquidityNet, t.liquidityGross])).toEqual(sdk.ticks.map((t) => [t.initialized, t.liquidityNet, t.liquidityGross]));
    expect(array.ticks.filter((t) => t.initialized).map((t) => [t.index, t.liquidityNet])).toEqual([[-427648, sdkPool.liquidity]]);

    const dynamic = decodeWhirlpoolTickArray(DYNAMIC_BYTES);
    const sdkDynamic = getDynamicTickArrayDecoder().decode(DYNAMIC_BYTES);
    expect([dynamic.pool, dynamic.startTickIndex]).toEqual([String(sdkDynamic.whirlpool), sdkDynamic.startTickIndex]);
    expect(dynamic.ticks.map((t) => [t.initialized, t.liquidityNet, t.liquidityGross])).toEqual(
      sdkDynamic.ticks.map((t) => (t.__kind === 'Initialized' ? [true, t.fields[0].liquidityNet, t.fields[0].liquidityGross] : [false, 0n, 0n])),
    );
    expect(dynamic.ticks.some((t) => t.initialized)).toBe(true);
  });

  it('on the real bytes alone, quotes what stays in the current slot as the SDK does and refuses the rest', () => {
    const pool = decodeWhirlpool(POOL_BYTES, POOL);
    const ours: TickArray[] = [decodeWhirlpoolTickArray(ARRAY_BYTES, undefined, SPACING)];
    const sdkArrays = [sdkArray(upperArrayBytes(false)), sdkArray(ARRAY_BYTES)];
    let quoted = 0;
    let needsData = 0;
    for (const req of requests()) {
      const result = quoteWhirlpool(pool, req, { tickArrays: ours });
      if (!result.ok && result.reason === SwapFailure.InsufficientLiquidityData) {
        needsData++;
        continue;
      }
      expectSame(result, sdkQuote(sdkArrays, req), JSON.stringify(req, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
      if (result.ok) quoted++;
    }
    expect(quoted).toBeGreaterThan(10);
    expect(needsData).toBeGreaterThan(0);
  });

  it('with the array at 0 a full-range position implies, quotes over the whole range as the SDK does', () => {
    const pool = decodeWhirlpool(POOL_BYTES, POOL);
    const upper = upperArrayBytes(true);
    const ours = [ARRAY_BYTES, upper].map((b) => decodeWhirlpoolTickArray(b, undefined, SPACING));
    const sdkArrays = [sdkArray(upper), sdkArray(ARRAY_BYTES)];
    let quoted = 0;
    for (const req of requests()) {
      const result = quoteWhirlpool(pool, req, { tickArrays: ours });
      expectSame(result, sdkQuote(sdkArrays, req), JSON.stringify(req, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
      if (result.ok) quoted++;
    }
    expect(quoted).toBeGreaterThan(40);
  });
});

describe('Orca Whirlpool mainnet pool Czfq3xZZDmsdGdUyrNLtRhGc47cXcZtLG4crryfu44zE with its current tick arrays', () => {
  const SOL_USDC = 'Czfq3xZZDmsdGdUyrNLtRhGc47cXcZtLG4crryfu44zE';
  const STARTS = [-26048, -25696, -25344, -24992, -24640];
  const bytes = read(SOL_USDC, 'whirlpool');
  const arrayBytes = STARTS.map((start) => read(SOL_USDC, `tick_array_${start}`));
  const pool = decodeWhirlpool(bytes, SOL_USDC);
  const solUsdc = facadeOf(bytes);

  it('holds the array of the current tick and its neighbours, all of this pool, as the SDK decodes them', () => {
    expect(pool).toMatchObject({ tokenA: 'So11111111111111111111111111111111111111112', tokenB: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', tickSpacing: 4, feeRate: 400, tick: -25156 });
    expect(pool.tick).toBeGreaterThanOrEqual(-25344);
    expect(pool.tick).toBeLessThan(-25344 + 88 * 4);
    for (const [i, b] of arrayBytes.entries()) {
      const ours = decodeWhirlpoolTickArray(b, SOL_USDC, 4);
      const sdk = getFixedTickArrayDecoder().decode(b);
      expect([ours.pool, ours.startTickIndex, String(sdk.whirlpool)]).toEqual([SOL_USDC, STARTS[i], SOL_USDC]);
      expect(ours.ticks.map((t) => [t.initialized, t.liquidityNet, t.liquidityGross])).toEqual(sdk.ticks.map((t) => [t.initialized, t.liquidityNet, t.liquidityGross]));
    }
    const initialized = arrayBytes.flatMap((b) => decodeWhirlpoolTickArray(b, SOL_USDC, 4).ticks.filter((t) => t.initialized));
    expect(initialized.length).toBeGreaterThan(10);
  });

  it('on those real bytes alone, quotes as the SDK does, crossing real ticks, and refuses past the last array', () => {
    const ours = arrayBytes.map((b) => decodeWhirlpoolTickArray(b, SOL_USDC, 4));
    const sdkArrays = arrayBytes.map(sdkArray);
    let quoted = 0;
    let needsData = 0;
    let crossed = 0;
    for (const req of requests()) {
      const result = quoteWhirlpool(pool, req, { tickArrays: ours });
      if (!result.ok && result.reason === SwapFailure.InsufficientLiquidityData) {
        needsData++;
        continue;
      }
      expectSame(result, sdkQuote(sdkArrays, req, solUsdc), JSON.stringify(req, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
      if (result.ok) {
        quoted++;
        // Liquidity changed on the way: the swap crossed at least one real initialized tick.
        if (result.liquidityAfter !== undefined && result.liquidityAfter !== pool.liquidity) crossed++;
      }
    }
    expect(quoted).toBeGreaterThan(40);
    expect(crossed).toBeGreaterThan(0);
    expect(needsData).toBeGreaterThan(0);
  });
});
