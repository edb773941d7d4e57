/**
 * Random concentrated-liquidity pools with their tick arrays as the decoders give them (every
 * slot a Tick object), for tests and benchmarks of the forms the cache keeps them in: both
 * protocols, liquidity from random positions (cl-state.ts; some nets past i64), Raydium pools
 * with their tick_array_bitmap, a fee side and sometimes limit orders on a tick, Whirlpool arrays
 * sometimes decoded without the tick spacing (NaN indexes), and some arrays of the window left out.
 */
import { setTickArrayBit } from '../clmm/clmm-pool.js';
import {
  MIN_SQRT_PRICE,
  RAYDIUM_MAX_SQRT_PRICE,
  WHIRLPOOL_MAX_SQRT_PRICE,
  raydiumSqrtPriceAtTick,
  whirlpoolSqrtPriceAtTick,
} from '../concentrated/tick-math.js';
import { Dex, SwapMode, type ConcentratedPool, type SwapRequest, type Tick, type TickArray } from '../types.js';
import { arrayTicks, initializedArrayStarts, randomClState, type ClState } from './cl-state.js';
import type { Prng } from './prng.js';

export interface RandomClPool {
  pool: ConcentratedPool;
  /** Decoded form: every slot a Tick. */
  tickArrays: TickArray[];
  state: ClState;
}

const POOL_ADDRESS = 'C1pooL1111111111111111111111111111111111111';

export function randomClPool(rng: Prng, dex: ConcentratedPool['dex']): RandomClPool {
  const whirlpool = dex === Dex.Whirlpool;
  const perArray = whirlpool ? 88 : 60;
  const state = randomClState(rng, {
    ticksPerArray: perArray,
    spacings: [1, 4, 10, 64, 128],
    maxWindowArrays: 4,
    feeRates: [100, 500, 3000, 10_000],
    sqrtPriceAtTick: whirlpool ? whirlpoolSqrtPriceAtTick : raydiumSqrtPriceAtTick,
    minSqrtPrice: MIN_SQRT_PRICE + 2n,
    maxSqrtPrice: (whirlpool ? WHIRLPOOL_MAX_SQRT_PRICE : RAYDIUM_MAX_SQRT_PRICE) - 2n,
    centerReachTicks: 20_000,
  });
  const withIndexes = !whirlpool || rng.chance(0.5);
  const starts = [...new Set([...state.windowStarts, ...initializedArrayStarts(state)])].sort((a, b) => a - b);
  const tickArrays: TickArray[] = [];
  for (const start of starts) {
    if (rng.chance(0.1)) continue;
    const ticks = arrayTicks(state, start).map((t): Tick => {
      const tick: Tick = { ...t, index: withIndexes ? t.index : NaN };
      if (!whirlpool && t.initialized && rng.chance(0.04)) tick.limitOrderAmount = rng.logBig(1, 50);
      return tick;
    });
    tickArrays.push({ dex, pool: POOL_ADDRESS, startTickIndex: start, ticks });
  }
  const pool: ConcentratedPool = {
    dex,
    address: POOL_ADDRESS,
    tokenA: 'A',
    tokenB: 'B',
    sqrtPrice: state.sqrtPrice,
    tick: state.tick,
    tickSpacing: state.tickSpacing,
    liquidity: state.liquidity,
    feeRate: state.feeRate,
    vaultA: 'va',
    vaultB: 'vb',
  };
  if (!whirlpool) {
    const bitmap = new Array<bigint>(16).fill(0n);
    for (const start of initializedArrayStarts(state)) {
      const index = start / (60 * state.tickSpacing);
      if (index >= -512 && index < 512) setTickArrayBit(bitmap, start, state.tickSpacing, true);
    }
    pool.tickArrayBitmap = bitmap;
    pool.feeOn = rng.chance(0.6) ? 0 : rng.int(1, 2);
  }
  return { pool, tickArrays, state };
}

/** A request that often crosses ticks: up to the pool's liquidity, sometimes dust or huge. */
export function randomClRequest(rng: Prng, pool: ConcentratedPool): SwapRequest {
  const mode = rng.chance(0.6) ? SwapMode.ExactIn : SwapMode.ExactOut;
  let amount = pool.liquidity > 0n && rng.chance(0.8) ? rng.bigint(1n, (pool.liquidity >> BigInt(rng.int(0, 24))) + 1n) : rng.logBig(1, 64);
  if (amount > (1n << 64n) - 1n) amount = (1n << 64n) - 1n;
  return { aToB: rng.chance(0.5), mode, amount };
}
