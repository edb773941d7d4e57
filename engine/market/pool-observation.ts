/**
 * What the market scanner reads off one pool state: its raw spot price (token B atoms per token A
 * atom, fee not applied), its base fee as a fraction, its reserves and, for concentrated pools, its
 * active liquidity. Floats are for events and prices only; amounts stay bigint.
 */
import { Dex, binPrice, baseFeeRate, q64ToNumber, type DecodedPool } from '../dex/index.js';
import { reservesOf, type LoadedPool } from '../pools/index.js';

const TWO_64 = 2 ** 64;

export interface PoolObservation {
  address: string;
  dex: Dex;
  tokenA: string;
  tokenB: string;
  slot: bigint;
  reserveA: bigint;
  reserveB: bigint;
  /** Token B atoms per token A atom. */
  price: number;
  /** Base trade fee as a fraction of the input. */
  fee: number;
  /** Concentrated pools: active liquidity. */
  liquidity?: bigint;
  /** Unix ms the state was seen. */
  seenAt: number;
}

export function rawSpotPrice(pool: DecodedPool): number {
  switch (pool.dex) {
    case Dex.Amm:
      return pool.reserveA === 0n ? 0 : Number(pool.reserveB) / Number(pool.reserveA);
    case Dex.Clmm:
    case Dex.Whirlpool: {
      const s = Number(pool.sqrtPrice) / TWO_64;
      return s * s;
    }
    case Dex.Dlmm:
      return q64ToNumber(binPrice(pool.activeId, pool.binStep));
  }
}

export function baseFeeFraction(pool: DecodedPool): number {
  switch (pool.dex) {
    case Dex.Amm:
      return pool.feeDenominator === 0n ? 0 : Number(pool.feeNumerator) / Number(pool.feeDenominator);
    case Dex.Clmm:
    case Dex.Whirlpool:
      return (pool.feeRate ?? 0) / 1_000_000;
    case Dex.Dlmm:
      return Number(baseFeeRate(pool.binStep, pool.parameters)) / 1e9;
  }
}

export function observePool(loaded: LoadedPool, seenAt: number): PoolObservation {
  const [reserveA, reserveB] = reservesOf(loaded);
  const pool = loaded.pool;
  const obs: PoolObservation = {
    address: loaded.address,
    dex: loaded.dex,
    tokenA: pool.tokenA,
    tokenB: pool.tokenB,
    slot: loaded.slot,
    reserveA,
    reserveB,
    price: rawSpotPrice(pool),
    fee: baseFeeFraction(pool),
    seenAt,
  };
  if (pool.dex === Dex.Clmm || pool.dex === Dex.Whirlpool) obs.liquidity = pool.liquidity;
  return obs;
}
