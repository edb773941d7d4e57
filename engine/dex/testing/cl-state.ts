/**
 * Random but consistent concentrated-liquidity pool states for property tests: liquidity comes
 * from random positions, so tick nets and the active liquidity always agree, and swaps cross
 * ticks, tick-array boundaries and empty ranges the way real pools do.
 */
import { MAX_TICK, MIN_TICK } from '../concentrated/tick-math.js';
import type { Prng } from './prng.js';

export interface ClTickState {
  liquidityNet: bigint;
  liquidityGross: bigint;
}

export interface ClState {
  tickSpacing: number;
  ticksPerArray: number;
  tick: number;
  sqrtPrice: bigint;
  liquidity: bigint;
  feeRate: number;
  /** Initialized ticks by index. */
  ticks: Map<number, ClTickState>;
  /** Start indexes of the window of arrays the state was built around, ascending, contiguous. */
  windowStarts: number[];
}

export interface ClStateOptions {
  ticksPerArray: number;
  spacings: readonly number[];
  maxWindowArrays: number;
  feeRates: readonly number[];
  sqrtPriceAtTick: (tick: number) => bigint;
  /** Largest usable sqrt price (exclusive) for the current price. */
  maxSqrtPrice: bigint;
  minSqrtPrice: bigint;
  /**
   * Keep total liquidity * sqrt price below 2^this (default 186): Whirlpool fails past 2^192
   * (and whirlpools-core silently wraps there), so states beyond it are not realistic fixtures.
   */
  liquidityTimesPriceBits?: number;
  /** How far from tick 0 most states sit (default 60_000 ticks). */
  centerReachTicks?: number;
}

function floorDiv(a: number, b: number): number {
  return Math.floor(a / b);
}

export function arrayStartOf(tick: number, tickSpacing: number, ticksPerArray: number): number {
  const span = tickSpacing * ticksPerArray;
  return floorDiv(tick, span) * span;
}

export function randomClState(rng: Prng, o: ClStateOptions): ClState {
  const ts = rng.pick(o.spacings);
  const span = ts * o.ticksPerArray;
  const minIndex = floorDiv(MIN_TICK, span);
  const maxIndex = floorDiv(MAX_TICK, span);
  const count = rng.int(1, o.maxWindowArrays);
  // Mostly prices near 1, sometimes anywhere in the tick range (extremes included).
  let first: number;
  if (rng.chance(0.9)) {
    const reach = Math.max(1, Math.min(maxIndex, Math.ceil((o.centerReachTicks ?? 60_000) / span)));
    first = rng.int(-reach, reach) - rng.int(0, count - 1);
  } else if (rng.chance(0.5)) {
    first = rng.int(minIndex, maxIndex - count + 1);
  } else {
    first = rng.chance(0.5) ? minIndex : maxIndex - count + 1;
  }
  first = Math.max(minIndex, Math.min(first, maxIndex - count + 1));
  const windowStarts: number[] = [];
  for (let i = 0; i < count; i++) windowStarts.push((first + i) * span);
  const windowLo = Math.max(windowStarts[0]!, MIN_TICK);
  const windowHi = Math.min(windowStarts[count - 1]! + span - 1, MAX_TICK - 1);

  const minInit = Math.ceil(MIN_TICK / ts) * ts;
  const maxInit = Math.floor(MAX_TICK / ts) * ts;
  const clampInit = (t: number): number => Math.max(minInit, Math.min(maxInit, t));
  const randomInitTick = (): number => {
    const lo = windowLo - span;
    const hi = windowHi + span;
    return clampInit(Math.floor(rng.int(lo, hi) / ts) * ts);
  };

  const priceBits = o.sqrtPriceAtTick(Math.min(MAX_TICK, windowHi + span)).toString(2).length;
  const maxLiquidityBits = Math.max(8, Math.min(110, (o.liquidityTimesPriceBits ?? 186) - priceBits - 4));
  const ticks = new Map<number, ClTickState>();
  const positions: Array<{ lower: number; upper: number; liquidity: bigint }> = [];
  const positionCount = rng.int(0, 14);
  for (let i = 0; i < positionCount; i++) {
    let lower: number;
    let upper: number;
    if (rng.chance(0.08)) {
      lower = minInit;
      upper = maxInit;
    } else {
      lower = randomInitTick();
      upper = randomInitTick();
      if (rng.chance(0.2)) lower = clampInit(arrayStartOf(lower, ts, o.ticksPerArray));
      if (rng.chance(0.2)) upper = clampInit(arrayStartOf(upper, ts, o.ticksPerArray) + span - ts);
    }
    if (lower === upper) continue;
    if (lower > upper) [lower, upper] = [upper, lower];
    positions.push({ lower, upper, liquidity: rng.logBig(8, Math.min(maxLiquidityBits, rng.chance(0.1) ? 110 : 72)) });
  }
  for (const p of positions) {
    for (const [index, sign] of [
      [p.lower, 1n],
      [p.upper, -1n],
    ] as const) {
      const t = ticks.get(index) ?? { liquidityNet: 0n, liquidityGross: 0n };
      t.liquidityNet += sign * p.liquidity;
      t.liquidityGross += p.liquidity;
      ticks.set(index, t);
    }
  }

  // Current tick: random in the window, sometimes exactly on an initialized tick or a boundary.
  let tick = rng.int(windowLo, windowHi);
  const initialized = [...ticks.keys()].filter((t) => t >= windowLo && t <= windowHi);
  if (initialized.length > 0 && rng.chance(0.15)) tick = rng.pick(initialized);
  else if (rng.chance(0.1)) tick = clampInit(arrayStartOf(tick, ts, o.ticksPerArray));
  tick = Math.max(MIN_TICK, Math.min(MAX_TICK - 1, tick));
  const low = o.sqrtPriceAtTick(tick);
  const high = o.sqrtPriceAtTick(tick + 1);
  let sqrtPrice = rng.chance(0.2) ? low : rng.bigint(low, high - 1n);
  if (sqrtPrice < o.minSqrtPrice) sqrtPrice = o.minSqrtPrice;
  if (sqrtPrice >= o.maxSqrtPrice) sqrtPrice = o.maxSqrtPrice - 1n;

  let liquidity = 0n;
  for (const p of positions) if (p.lower <= tick && tick < p.upper) liquidity += p.liquidity;

  return {
    tickSpacing: ts,
    ticksPerArray: o.ticksPerArray,
    tick,
    sqrtPrice,
    liquidity,
    feeRate: rng.pick(o.feeRates),
    ticks,
    windowStarts,
  };
}

/** The ticks of one array, slot order (88 or 60 entries). */
export function arrayTicks(
  state: ClState,
  start: number,
): Array<{ index: number; initialized: boolean; liquidityNet: bigint; liquidityGross: bigint }> {
  const out = [];
  for (let slot = 0; slot < state.ticksPerArray; slot++) {
    const index = start + slot * state.tickSpacing;
    const t = state.ticks.get(index);
    out.push({
      index,
      initialized: t !== undefined,
      liquidityNet: t?.liquidityNet ?? 0n,
      liquidityGross: t?.liquidityGross ?? 0n,
    });
  }
  return out;
}

/** Start indexes of every array holding an initialized tick, ascending. */
export function initializedArrayStarts(state: ClState): number[] {
  const starts = new Set<number>();
  for (const index of state.ticks.keys()) starts.add(arrayStartOf(index, state.tickSpacing, state.ticksPerArray));
  return [...starts].sort((a, b) => a - b);
}

/** Initialized ticks a swap from the state's tick to `tickAfter` went past. */
export function crossedTicks(state: ClState, tickAfter: number): number {
  const lo = Math.min(state.tick, tickAfter);
  const hi = Math.max(state.tick, tickAfter);
  let n = 0;
  for (const index of state.ticks.keys()) if (index > lo && index <= hi) n++;
  return n;
}

/**
 * About how much must be swapped (input for exact in, output for exact out; fee ignored) to move
 * the price from the state's price to `sqrtPriceAtTick(targetTick)`, crossing the state's ticks on
 * the way: for choosing amounts that cross a chosen number of ticks.
 */
export function amountToReach(
  state: ClState,
  targetTick: number,
  aToB: boolean,
  exactIn: boolean,
  sqrtPriceAtTick: (tick: number) => bigint,
): bigint {
  const crossings = [...state.ticks.keys()]
    .filter((t) => (aToB ? t <= state.tick && t > targetTick : t > state.tick && t <= targetTick))
    .sort((a, b) => (aToB ? b - a : a - b));
  let liquidity = state.liquidity;
  let price = state.sqrtPrice;
  let total = 0n;
  const legs = [...crossings, targetTick];
  for (const t of legs) {
    const next = sqrtPriceAtTick(t);
    const lower = price < next ? price : next;
    const upper = price < next ? next : price;
    if (lower > 0n && upper > lower) {
      const a = ((liquidity * (upper - lower)) << 64n) / (lower * upper);
      const b = (liquidity * (upper - lower)) >> 64n;
      total += aToB === exactIn ? a : b;
    }
    price = next;
    if (t === targetTick) break;
    const net = state.ticks.get(t)!.liquidityNet;
    liquidity = aToB ? liquidity - net : liquidity + net;
    if (liquidity < 0n) liquidity = 0n;
  }
  return total;
}
