/**
 * Edge cases of the concentrated-liquidity swap loop, on both protocols: swaps ending exactly on a
 * tick, crossing tick-array boundaries, running out of the tick arrays given, quoting without any
 * tick arrays, the price limits, zero and out-of-range amounts, disabled pools, limit orders.
 */
import {
  swapQuoteByInputToken,
  swapQuoteByOutputToken,
  type TickArrayFacade,
  type WhirlpoolFacade,
} from '@orca-so/whirlpools-core';
import { describe, expect, it } from 'vitest';

import { ErrorCode, isTpError } from '../../errors.js';
import { quoteClmm } from '../clmm/clmm-swap.js';
import { setTickArrayBit } from '../clmm/clmm-pool.js';
import { arrayStartOf, randomClState } from '../testing/cl-state.js';
import { Prng } from '../testing/prng.js';
import {
  Dex,
  SwapFailure,
  SwapMode,
  type ConcentratedPool,
  type SwapQuote,
  type SwapRequest,
  type SwapResult,
  type TickArray,
} from '../types.js';
import { quoteWhirlpool } from '../whirlpool/whirlpool-swap.js';
import { amountDeltaA, amountDeltaB } from './sqrt-price-math.js';
import {
  MAX_TICK,
  MIN_SQRT_PRICE,
  MIN_TICK,
  RAYDIUM_MAX_SQRT_PRICE,
  WHIRLPOOL_MAX_SQRT_PRICE,
  raydiumSqrtPriceAtTick,
  whirlpoolSqrtPriceAtTick,
} from './tick-math.js';

interface Position {
  lower: number;
  upper: number;
  liquidity: bigint;
}

/** A pool and every tick array its positions touch, built directly as decoded objects. */
function build(
  dex: ConcentratedPool['dex'],
  tickSpacing: number,
  sqrtPrice: bigint,
  tick: number,
  positions: Position[],
  feeRate = 3000,
): { pool: ConcentratedPool; arrays: Map<number, TickArray> } {
  const perArray = dex === Dex.Whirlpool ? 88 : 60;
  const nets = new Map<number, { net: bigint; gross: bigint }>();
  let liquidity = 0n;
  for (const p of positions) {
    for (const [t, sign] of [
      [p.lower, 1n],
      [p.upper, -1n],
    ] as const) {
      const e = nets.get(t) ?? { net: 0n, gross: 0n };
      e.net += sign * p.liquidity;
      e.gross += p.liquidity;
      nets.set(t, e);
    }
    if (p.lower <= tick && tick < p.upper) liquidity += p.liquidity;
  }
  const arrays = new Map<number, TickArray>();
  for (const t of nets.keys()) {
    const start = arrayStartOf(t, tickSpacing, perArray);
    if (arrays.has(start)) continue;
    arrays.set(start, {
      dex,
      pool: 'pool',
      startTickIndex: start,
      ticks: Array.from({ length: perArray }, (_, slot) => {
        const index = start + slot * tickSpacing;
        const e = nets.get(index);
        return { index, initialized: e !== undefined, liquidityNet: e?.net ?? 0n, liquidityGross: e?.gross ?? 0n };
      }),
    });
  }
  const pool: ConcentratedPool = {
    dex,
    address: 'pool',
    tokenA: 'A',
    tokenB: 'B',
    sqrtPrice,
    tick,
    tickSpacing,
    liquidity,
    feeRate,
    vaultA: 'va',
    vaultB: 'vb',
  };
  if (dex === Dex.Clmm) {
    const bitmap = new Array<bigint>(16).fill(0n);
    for (const start of arrays.keys()) setTickArrayBit(bitmap, start, tickSpacing, true);
    pool.tickArrayBitmap = bitmap;
    pool.feeOn = 0;
  }
  return { pool, arrays };
}

function emptyArray(dex: ConcentratedPool['dex'], start: number, tickSpacing: number): TickArray {
  const perArray = dex === Dex.Whirlpool ? 88 : 60;
  return {
    dex,
    pool: 'pool',
    startTickIndex: start,
    ticks: Array.from({ length: perArray }, (_, slot) => ({
      index: start + slot * tickSpacing,
      initialized: false,
      liquidityNet: 0n,
      liquidityGross: 0n,
    })),
  };
}

function facades(arrays: Iterable<TickArray>): TickArrayFacade[] {
  return [...arrays].map((a) => ({
    startTickIndex: a.startTickIndex,
    ticks: a.ticks.map((t) => ({
      initialized: t.initialized,
      liquidityNet: t.liquidityNet,
      liquidityGross: t.liquidityGross,
      feeGrowthOutsideA: 0n,
      feeGrowthOutsideB: 0n,
      rewardGrowthsOutside: [0n, 0n, 0n],
    })),
  }));
}

const REWARD = { emissionsPerSecondX64: 0n, growthGlobalX64: 0n };
function facade(pool: ConcentratedPool): WhirlpoolFacade {
  return {
    feeTierIndexSeed: new Uint8Array([pool.tickSpacing & 0xff, pool.tickSpacing >> 8]),
    tickSpacing: pool.tickSpacing,
    feeRate: pool.feeRate!,
    protocolFeeRate: 0,
    liquidity: pool.liquidity,
    sqrtPrice: pool.sqrtPrice,
    tickCurrentIndex: pool.tick,
    feeGrowthGlobalA: 0n,
    feeGrowthGlobalB: 0n,
    rewardLastUpdatedTimestamp: 0n,
    rewardInfos: [REWARD, REWARD, REWARD],
  };
}

/** whirlpools-core's answer in our terms (amounts only). */
function orcaQuote(pool: ConcentratedPool, arrays: Iterable<TickArray>, req: SwapRequest): { amountIn: bigint; amountOut: bigint; fee: bigint } {
  if (req.mode === SwapMode.ExactIn) {
    const q = swapQuoteByInputToken(req.amount, req.aToB, 0, facade(pool), undefined, facades(arrays), 0n);
    return { amountIn: q.tokenIn, amountOut: q.tokenEstOut, fee: q.tradeFee };
  }
  const q = swapQuoteByOutputToken(req.amount, !req.aToB, 0, facade(pool), undefined, facades(arrays), 0n);
  return { amountIn: q.tokenEstIn, amountOut: q.tokenOut, fee: q.tradeFee };
}

function quoted(result: SwapResult): SwapQuote {
  if (!result.ok) throw new Error(`expected a quote, got ${result.reason}: ${result.message}`);
  return result;
}

const Q64 = 1n << 64n;
const L = 10n ** 12n;

describe('concentrated-liquidity swap edges', () => {
  // Whirlpool, tick spacing 64 (5632 ticks per array), price 1 at tick 0: liquidity L on
  // [-128, 128], 2L on [-5632, 11264] (its lower tick is the first tick of array -5632) and L on
  // [-16896, 16896]. The six arrays from -16896 to 11264 hold every tick; the SDK takes six at most.
  const wp = build(Dex.Whirlpool, 64, Q64, 0, [
    { lower: -128, upper: 128, liquidity: L },
    { lower: -5632, upper: 11264, liquidity: 2n * L },
    { lower: -16896, upper: 16896, liquidity: L },
  ]);
  const span = 5632;
  const allArrays = [-3, -2, -1, 0, 1, 2].map((i) => wp.arrays.get(i * span) ?? emptyArray(Dex.Whirlpool, i * span, 64));

  it('ends exactly on an initialized tick and crosses it (exact out, aToB)', () => {
    // Output of B that takes the price exactly to tick -128.
    const out = amountDeltaB(Q64, whirlpoolSqrtPriceAtTick(-128), wp.pool.liquidity, false);
    const req: SwapRequest = { aToB: true, mode: SwapMode.ExactOut, amount: out };
    const q = quoted(quoteWhirlpool(wp.pool, req, { tickArrays: allArrays }));
    expect(q.sqrtPriceAfter).toBe(whirlpoolSqrtPriceAtTick(-128));
    expect(q.tickAfter).toBe(-129); // crossed: the protocol's tick is one below the crossed tick
    expect(q.liquidityAfter).toBe(3n * L); // the [-128, 128] position is left behind
    expect({ amountIn: q.amountIn, amountOut: q.amountOut, fee: q.fee }).toEqual(orcaQuote(wp.pool, allArrays, req));
    // One atom less stops just above the tick, without crossing.
    const before = quoted(quoteWhirlpool(wp.pool, { ...req, amount: out - 1n }, { tickArrays: allArrays }));
    expect(before.sqrtPriceAfter! > whirlpoolSqrtPriceAtTick(-128)).toBe(true);
    expect(before.tickAfter).toBe(-128);
    expect(before.liquidityAfter).toBe(4n * L);
  });

  it('ends exactly on an initialized tick (exact in, bToA)', () => {
    const needed = amountDeltaB(Q64, whirlpoolSqrtPriceAtTick(128), wp.pool.liquidity, true);
    // Smallest input whose amount after the fee covers `needed`.
    let amount = (needed * 1_000_000n) / 997_000n;
    while ((amount * 997_000n) / 1_000_000n < needed) amount++;
    const req: SwapRequest = { aToB: false, mode: SwapMode.ExactIn, amount };
    const q = quoted(quoteWhirlpool(wp.pool, req, { tickArrays: allArrays }));
    expect(q.sqrtPriceAfter).toBe(whirlpoolSqrtPriceAtTick(128));
    expect(q.tickAfter).toBe(128);
    expect({ amountIn: q.amountIn, amountOut: q.amountOut, fee: q.fee }).toEqual(orcaQuote(wp.pool, allArrays, req));
  });

  it('crosses tick-array boundaries and the ticks at their edges, as whirlpools-core does', () => {
    // Down across -128 and -5632 (the first tick of its array), to about tick -8000.
    const amount =
      amountDeltaA(Q64, whirlpoolSqrtPriceAtTick(-128), 4n * L, true) +
      amountDeltaA(whirlpoolSqrtPriceAtTick(-128), whirlpoolSqrtPriceAtTick(-5632), 3n * L, true) +
      amountDeltaA(whirlpoolSqrtPriceAtTick(-5632), whirlpoolSqrtPriceAtTick(-8000), L, true);
    for (const mode of [SwapMode.ExactIn, SwapMode.ExactOut]) {
      const req: SwapRequest = { aToB: true, mode, amount: mode === SwapMode.ExactIn ? amount : amount / 3n };
      const q = quoted(quoteWhirlpool(wp.pool, req, { tickArrays: allArrays }));
      if (mode === SwapMode.ExactIn) expect(q.tickAfter! < -5632 - 1).toBe(true);
      expect({ amountIn: q.amountIn, amountOut: q.amountOut, fee: q.fee }).toEqual(orcaQuote(wp.pool, allArrays, req));
    }
    // And back up across 128 and into array 5632.
    const up: SwapRequest = {
      aToB: false,
      mode: SwapMode.ExactIn,
      amount: amountDeltaB(Q64, whirlpoolSqrtPriceAtTick(7000), 4n * L, true),
    };
    const q = quoted(quoteWhirlpool(wp.pool, up, { tickArrays: allArrays }));
    expect(q.tickAfter! > span).toBe(true);
    expect({ amountIn: q.amountIn, amountOut: q.amountOut, fee: q.fee }).toEqual(orcaQuote(wp.pool, allArrays, up));
  });

  it('refuses with InsufficientLiquidityData when the swap runs past the arrays it was given', () => {
    const only = [allArrays[3]!];
    const small: SwapRequest = { aToB: false, mode: SwapMode.ExactIn, amount: 1_000n };
    expect(quoted(quoteWhirlpool(wp.pool, small, { tickArrays: only }))).toEqual(
      quoted(quoteWhirlpool(wp.pool, small, { tickArrays: allArrays })),
    );
    const far: SwapRequest = { aToB: true, mode: SwapMode.ExactIn, amount: 10n ** 12n };
    expect(quoteWhirlpool(wp.pool, far, { tickArrays: only })).toMatchObject({
      ok: false,
      reason: SwapFailure.InsufficientLiquidityData,
    });
    expect(quoteWhirlpool(wp.pool, far, { tickArrays: allArrays }).ok).toBe(true);
  });

  it('quotes without tick arrays only inside the current tick-spacing slot', () => {
    // Price 1 at tick 0, spacing 64: the slot is [0, 64]; liquidity there is 4L.
    const inside: SwapRequest = { aToB: false, mode: SwapMode.ExactIn, amount: 1_000_000n };
    expect(quoted(quoteWhirlpool(wp.pool, inside, {}))).toEqual(quoted(quoteWhirlpool(wp.pool, inside, { tickArrays: allArrays })));
    // Output of A (bToA) that takes the price exactly to tick 64.
    const upToEdge = amountDeltaA(Q64, whirlpoolSqrtPriceAtTick(64), wp.pool.liquidity, false);
    expect(quoteWhirlpool(wp.pool, { aToB: false, mode: SwapMode.ExactOut, amount: upToEdge - 1n }).ok).toBe(true);
    // Reaching the slot edge, or passing it, needs the tick data.
    for (const amount of [upToEdge, upToEdge + 1n]) {
      expect(quoteWhirlpool(wp.pool, { aToB: false, mode: SwapMode.ExactOut, amount })).toMatchObject({
        ok: false,
        reason: SwapFailure.InsufficientLiquidityData,
      });
    }
    // At exactly an initializable tick, an aToB swap must know that tick's liquidity first.
    expect(quoteWhirlpool(wp.pool, { aToB: true, mode: SwapMode.ExactIn, amount: 10n })).toMatchObject({
      ok: false,
      reason: SwapFailure.InsufficientLiquidityData,
    });
    expect(quoteWhirlpool(wp.pool, { aToB: true, mode: SwapMode.ExactIn, amount: 10n }, { tickArrays: allArrays }).ok).toBe(true);
  });

  it('stops at the maximum and minimum sqrt price with InsufficientLiquidity', () => {
    const top = build(Dex.Whirlpool, 1, whirlpoolSqrtPriceAtTick(MAX_TICK - 10), MAX_TICK - 10, [
      { lower: MAX_TICK - 20, upper: MAX_TICK - 5, liquidity: 1000n },
    ]);
    const arrays = [...top.arrays.values()];
    const req: SwapRequest = { aToB: false, mode: SwapMode.ExactIn, amount: (1n << 64n) - 1n };
    expect(quoteWhirlpool(top.pool, req, { tickArrays: arrays })).toMatchObject({ ok: false, reason: SwapFailure.InsufficientLiquidity });
    expect(orcaQuote(top.pool, arrays, req).amountIn < req.amount).toBe(true); // whirlpools-core: partial fill
    const atMax = { ...top.pool, sqrtPrice: WHIRLPOOL_MAX_SQRT_PRICE, tick: MAX_TICK };
    expect(quoteWhirlpool(atMax, { aToB: false, mode: SwapMode.ExactIn, amount: 5n }, { tickArrays: arrays })).toMatchObject({
      ok: false,
      reason: SwapFailure.InsufficientLiquidity,
    });

    const bottom = build(Dex.Whirlpool, 1, whirlpoolSqrtPriceAtTick(MIN_TICK + 10), MIN_TICK + 10, [
      { lower: MIN_TICK + 5, upper: MIN_TICK + 20, liquidity: 1000n },
    ]);
    const down: SwapRequest = { aToB: true, mode: SwapMode.ExactIn, amount: (1n << 64n) - 1n };
    expect(quoteWhirlpool(bottom.pool, down, { tickArrays: [...bottom.arrays.values()] })).toMatchObject({
      ok: false,
      reason: SwapFailure.InsufficientLiquidity,
    });
    const atMin = { ...bottom.pool, sqrtPrice: MIN_SQRT_PRICE, tick: MIN_TICK };
    expect(quoteWhirlpool(atMin, down, { tickArrays: [...bottom.arrays.values()] })).toMatchObject({
      ok: false,
      reason: SwapFailure.InsufficientLiquidity,
    });
  });

  it('refuses zero amounts, throws on amounts outside u64, refuses disabled pools', () => {
    const ray = build(Dex.Clmm, 10, Q64, 0, [{ lower: -100, upper: 100, liquidity: L }]);
    for (const quote of [quoteWhirlpool, quoteClmm]) {
      const pool = quote === quoteWhirlpool ? wp.pool : ray.pool;
      expect(quote(pool, { aToB: true, mode: SwapMode.ExactIn, amount: 0n })).toMatchObject({ ok: false, reason: SwapFailure.ZeroAmount });
      expect(quote(pool, { aToB: false, mode: SwapMode.ExactOut, amount: 0n })).toMatchObject({ ok: false, reason: SwapFailure.ZeroAmount });
      for (const amount of [-5n, 1n << 64n]) {
        try {
          quote(pool, { aToB: true, mode: SwapMode.ExactIn, amount });
          expect.unreachable();
        } catch (err) {
          expect(isTpError(err, ErrorCode.InvalidAmount)).toBe(true);
        }
      }
    }
    expect(quoteClmm({ ...ray.pool, swapDisabled: true }, { aToB: true, mode: SwapMode.ExactIn, amount: 10n })).toMatchObject({
      ok: false,
      reason: SwapFailure.PoolDisabled,
    });
    // A tiny input that pays only the fee.
    expect(quoteWhirlpool(wp.pool, { aToB: false, mode: SwapMode.ExactIn, amount: 1n }, { tickArrays: allArrays })).toMatchObject({
      ok: false,
      reason: SwapFailure.ZeroAmount,
    });
  });

  it('Raydium: skips arrays the bitmap proves empty and refuses when none is left', () => {
    // Spacing 60 (3600 ticks per array): positions far apart leave empty arrays between them.
    const ray = build(Dex.Clmm, 60, Q64, 0, [
      { lower: -36_000, upper: 36_000, liquidity: L },
      { lower: -120, upper: 120, liquidity: L },
    ]);
    const arrays = [...ray.arrays.values()];
    expect(arrays.map((a) => a.startTickIndex).sort((a, b) => a - b)).toEqual([-36_000, -3600, 0, 36_000]);
    const far: SwapRequest = {
      aToB: true,
      mode: SwapMode.ExactIn,
      amount:
        amountDeltaA(Q64, raydiumSqrtPriceAtTick(-120), 2n * L, true) +
        amountDeltaA(raydiumSqrtPriceAtTick(-120), raydiumSqrtPriceAtTick(-30_000), L, true),
    };
    const q = quoted(quoteClmm(ray.pool, far, { tickArrays: arrays }));
    expect(q.tickAfter! < -120 && q.tickAfter! > -36_000).toBe(true);
    // Without the array at -36000, the swap needs it only if it gets there.
    const withoutFar = arrays.filter((a) => a.startTickIndex !== -36_000);
    expect(quoted(quoteClmm(ray.pool, far, { tickArrays: withoutFar }))).toEqual(q);
    const further: SwapRequest = { ...far, amount: far.amount * 2n };
    expect(quoteClmm(ray.pool, further, { tickArrays: withoutFar })).toMatchObject({
      ok: false,
      reason: SwapFailure.InsufficientLiquidityData,
    });
    // With every array: past the last initialized tick there is no liquidity left at all.
    expect(quoteClmm(ray.pool, further, { tickArrays: arrays })).toMatchObject({ ok: false, reason: SwapFailure.InsufficientLiquidity });
  });

  it('Raydium: refuses a swap that reaches a tick holding limit orders, quotes one that stops before', () => {
    const ray = build(Dex.Clmm, 10, Q64, 0, [
      { lower: -600, upper: 600, liquidity: L },
      { lower: 300, upper: 600, liquidity: 1n },
    ]);
    const arrays = [...ray.arrays.values()].map((a) => ({
      ...a,
      ticks: a.ticks.map((t) => (t.index === 300 ? { ...t, limitOrderAmount: 1_000n } : t)),
    }));
    const toOrders = amountDeltaB(Q64, raydiumSqrtPriceAtTick(300), L, true);
    expect(quoteClmm(ray.pool, { aToB: false, mode: SwapMode.ExactIn, amount: toOrders / 2n }, { tickArrays: arrays }).ok).toBe(true);
    expect(quoteClmm(ray.pool, { aToB: false, mode: SwapMode.ExactIn, amount: toOrders * 2n }, { tickArrays: arrays })).toMatchObject({
      ok: false,
      reason: SwapFailure.InsufficientLiquidityData,
    });
    expect(quoteClmm(ray.pool, { aToB: false, mode: SwapMode.ExactIn, amount: toOrders * 2n }, { tickArrays: [...ray.arrays.values()] }).ok).toBe(
      true,
    );
  });

  it('never gives a different number with fewer tick arrays, only a refusal (both protocols)', () => {
    const rng = new Prng(0x5b5e7);
    let same = 0;
    let refused = 0;
    for (const dex of [Dex.Whirlpool, Dex.Clmm] as const) {
      const perArray = dex === Dex.Whirlpool ? 88 : 60;
      const sqrtPriceAtTick = dex === Dex.Whirlpool ? whirlpoolSqrtPriceAtTick : raydiumSqrtPriceAtTick;
      for (let i = 0; i < 400; i++) {
        const state = randomClState(rng, {
          ticksPerArray: perArray,
          spacings: [1, 8, 10, 64],
          maxWindowArrays: 3,
          feeRates: [500, 3000],
          sqrtPriceAtTick,
          minSqrtPrice: MIN_SQRT_PRICE + 2n,
          maxSqrtPrice: (dex === Dex.Whirlpool ? WHIRLPOOL_MAX_SQRT_PRICE : RAYDIUM_MAX_SQRT_PRICE) - 2n,
          centerReachTicks: 10_000,
        });
        const starts = new Set([...state.ticks.keys()].map((t) => arrayStartOf(t, state.tickSpacing, perArray)));
        const full: TickArray[] = [...starts].map((start) => ({
          dex,
          pool: 'pool',
          startTickIndex: start,
          ticks: Array.from({ length: perArray }, (_, slot) => {
            const index = start + slot * state.tickSpacing;
            const t = state.ticks.get(index);
            return { index, initialized: t !== undefined, liquidityNet: t?.liquidityNet ?? 0n, liquidityGross: t?.liquidityGross ?? 0n };
          }),
        }));
        const withState: ConcentratedPool = {
          ...build(dex, state.tickSpacing, state.sqrtPrice, state.tick, [], state.feeRate).pool,
          liquidity: state.liquidity,
        };
        if (dex === Dex.Clmm) {
          const bitmap = new Array<bigint>(16).fill(0n);
          for (const start of starts) {
            const index = start / (60 * state.tickSpacing);
            if (index >= -512 && index < 512) setTickArrayBit(bitmap, start, state.tickSpacing, true);
          }
          withState.tickArrayBitmap = bitmap;
        }
        const subset = full.filter(() => rng.chance(0.5));
        const quote = dex === Dex.Whirlpool ? quoteWhirlpool : quoteClmm;
        for (let j = 0; j < 3; j++) {
          const req: SwapRequest = {
            aToB: rng.chance(0.5),
            mode: rng.chance(0.5) ? SwapMode.ExactIn : SwapMode.ExactOut,
            amount: state.liquidity > 0n ? rng.bigint(1n, (state.liquidity >> BigInt(rng.int(0, 24))) + 1n) : rng.logBig(1, 40),
          };
          if (req.amount > (1n << 64n) - 1n) req.amount = (1n << 64n) - 1n;
          for (const given of [subset, []]) {
            const partial = quote(withState, req, { tickArrays: given });
            if (partial.ok) {
              expect(partial).toEqual(quote(withState, req, { tickArrays: full }));
              same++;
            } else if (partial.reason === SwapFailure.InsufficientLiquidityData) {
              refused++;
            } else {
              expect(partial.reason).toBe((quote(withState, req, { tickArrays: full }) as { reason?: string }).reason);
            }
          }
        }
      }
    }
    expect(same).toBeGreaterThan(500);
    expect(refused).toBeGreaterThan(500);
  });
});
