/**
 * The sqrt prices of the ticks swaps cross, kept once computed. A swap step aims at the next
 * initialized tick (or a tick array's edge) and needs that tick's sqrt price: up to 19 BigInt
 * multiplications and shifts. The ticks a cache's pools hold initialized are few and the same from
 * quote to quote, so each protocol keeps its tick prices in a Map (~40 ns a hit against ~1 µs to
 * compute). Bounded: at MAX_TICK_PRICES entries the map starts over.
 */
import { raydiumSqrtPriceAtTick, whirlpoolSqrtPriceAtTick } from './tick-math.js';

/** Tick prices kept per protocol at most (~100 bytes each). */
export const MAX_TICK_PRICES = 1 << 16;

/** `sqrtPriceAtTick`, each tick's answer computed once (until the bound starts the map over). */
export function memoizedTickPrices(sqrtPriceAtTick: (tick: number) => bigint): (tick: number) => bigint {
  const prices = new Map<number, bigint>();
  return (tick: number): bigint => {
    let price = prices.get(tick);
    if (price === undefined) {
      price = sqrtPriceAtTick(tick);
      if (prices.size >= MAX_TICK_PRICES) prices.clear();
      prices.set(tick, price);
    }
    return price;
  };
}

/** Whirlpool tick prices for swaps (whirlpoolSqrtPriceAtTick, kept). */
export const whirlpoolTickPrice = memoizedTickPrices(whirlpoolSqrtPriceAtTick);

/** Raydium CLMM tick prices for swaps (raydiumSqrtPriceAtTick, kept). */
export const raydiumTickPrice = memoizedTickPrices(raydiumSqrtPriceAtTick);
