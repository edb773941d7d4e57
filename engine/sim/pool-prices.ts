import { Dex, baseFeeRate, binPrice, q64ToNumber, type DecodedPool } from '../dex/index.js';

/**
 * Float views of pool state for the flow's decisions and for sanity checks (never for amounts,
 * which always come from the exact math): the pool's spot price in raw units (token B atoms per
 * token A atom) and its trading fee as a fraction.
 */

const TWO_64 = 2 ** 64;

export function spotPrice(pool: DecodedPool): number {
  switch (pool.dex) {
    case Dex.Amm:
      return Number(pool.reserveB) / Number(pool.reserveA);
    case Dex.Whirlpool:
    case Dex.Clmm: {
      const s = Number(pool.sqrtPrice) / TWO_64;
      return s * s;
    }
    case Dex.Dlmm:
      return q64ToNumber(binPrice(pool.activeId, pool.binStep));
  }
}

/** The base trading fee (no volatility part) as a fraction of the input. */
export function feeFraction(pool: DecodedPool): number {
  switch (pool.dex) {
    case Dex.Amm:
      return Number(pool.feeNumerator) / Number(pool.feeDenominator);
    case Dex.Whirlpool:
    case Dex.Clmm:
      return (pool.feeRate ?? 0) / 1_000_000;
    case Dex.Dlmm:
      return Number(baseFeeRate(pool.binStep, pool.parameters)) / 1e9;
  }
}

/** Raw price of A in B from USD prices: B atoms per A atom. */
export function referenceRawPrice(priceA: number, decimalsA: number, priceB: number, decimalsB: number): number {
  return (priceA / priceB) * 10 ** (decimalsB - decimalsA);
}
