/**
 * Seeded random DLMM states for cross-checks: an LbPair and the bin arrays around its active bin,
 * with realistic fee parameters, non-zero volatility, both fee collection modes, limit orders,
 * one-sided and empty bins, and empty arrays that only the bitmap knows about.
 */
import * as base58 from '../../../chain/base58.js';
import { Prng } from '../../testing/prng.js';
import { Dex } from '../../types.js';
import { binArrayIndexOf, binArrayLowerBinId, type DlmmBin, type DlmmBinArray } from '../bin-array.js';
import { withBinArrayBit } from '../bin-array-bitmap.js';
import { binPrice } from '../bin-price.js';
import { BINS_PER_ARRAY, DEFAULT_PUBKEY, MAX_FEE_RATE } from '../constants.js';
import { baseFeeRate } from '../fees.js';
import type { DlmmLbPair } from '../lb-pair.js';

/** A random 32-byte key as base58. */
export function randomPubkey(rng: Prng): string {
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++) bytes[i] = rng.u32() & 0xff;
  return base58.encode(bytes);
}

export { Prng };

export const BIN_STEPS = [1, 2, 4, 5, 8, 10, 15, 20, 25, 50, 80, 100, 150, 250, 400] as const;

export interface RandomScenario {
  pool: DlmmLbPair & { address: string };
  binArrays: DlmmBinArray[];
  nowSeconds: bigint;
}

export interface ScenarioOptions {
  /** Arrays supplied on each side of the active one (default 1..4). */
  arraysEachSide?: number;
}

/** An empty bin with the price the program stores when the bin is initialized. */
export function emptyBin(id: number, binStep: number): DlmmBin {
  return {
    id,
    amountX: 0n,
    amountY: 0n,
    price: binPrice(id, binStep),
    liquiditySupply: 0n,
    openOrderAmount: 0n,
    processedOrderRemainingAmount: 0n,
    limitOrderAskSide: false,
  };
}

export function emptyBinArray(pool: string, index: number, binStep: number): DlmmBinArray {
  const lower = binArrayLowerBinId(index);
  return {
    pool,
    index: BigInt(index),
    version: 1,
    bins: Array.from({ length: BINS_PER_ARRAY }, (_, i) => emptyBin(lower + i, binStep)),
  };
}

/** A reserve: empty often, otherwise log-uniform up to ~2^44 atoms. */
function reserve(rng: Prng, emptyChance: number): bigint {
  return rng.chance(emptyChance) ? 0n : rng.logBig(1, 44);
}

export function randomScenario(rng: Prng, options: ScenarioOptions = {}): RandomScenario {
  const binStep = rng.pick(BIN_STEPS);
  // Active ids near array edges half of the time; all within the LbPair bitmap (arrays ±512),
  // at prices between about 2^-40 and 2^40 so that amounts stay within u64.
  const arrayLimit = Math.min(300, Math.floor(Math.log(2 ** 40) / Math.log(1 + binStep / 10_000) / BINS_PER_ARRAY) - 5);
  const activeArray = rng.int(-arrayLimit, arrayLimit);
  const activeId = rng.chance(0.5)
    ? binArrayLowerBinId(activeArray) + rng.pick([0, 1, BINS_PER_ARRAY - 2, BINS_PER_ARRAY - 1])
    : binArrayLowerBinId(activeArray) + rng.int(0, BINS_PER_ARRAY - 1);
  const address = randomPubkey(rng);

  const functionType = rng.pick([0, 0, 1, 2]);
  const hasRewards = functionType === 0 && rng.chance(0.3);
  const baseFeePowerFactor = rng.chance(0.8) ? 0 : rng.int(1, 2);
  let baseFactor = rng.int(1, 20_000);
  const params = {
    baseFactor,
    filterPeriod: rng.int(0, 60),
    decayPeriod: rng.int(60, 900),
    reductionFactor: rng.int(0, 10_000),
    variableFeeControl: rng.chance(0.25) ? 0 : rng.int(1, 500_000),
    maxVolatilityAccumulator: rng.int(0, 400_000),
    minBinId: -443_636,
    maxBinId: 443_636,
    protocolShare: rng.int(0, 2_500),
    baseFeePowerFactor,
    functionType,
    collectFeeMode: rng.int(0, 1),
  };
  // Keep the base fee under the 10% cap most of the time (the cap is exercised too).
  while (baseFeeRate(binStep, params) > MAX_FEE_RATE && rng.chance(0.9)) {
    baseFactor = Math.max(1, Math.floor(baseFactor / 4));
    params.baseFactor = baseFactor;
  }
  const lastUpdateTimestamp = 1_700_000_000n + BigInt(rng.int(0, 10_000_000));
  const volatilityAccumulator = rng.int(0, params.maxVolatilityAccumulator);
  const pool: DlmmLbPair & { address: string } = {
    dex: Dex.Dlmm,
    address,
    tokenA: randomPubkey(rng),
    tokenB: randomPubkey(rng),
    activeId,
    binStep,
    status: 0,
    reserveX: randomPubkey(rng),
    reserveY: randomPubkey(rng),
    parameters: params,
    vParameters: {
      volatilityAccumulator,
      volatilityReference: rng.int(0, volatilityAccumulator),
      indexReference: activeId + rng.int(-200, 200),
      lastUpdateTimestamp,
    },
    binArrayBitmap: new Array<bigint>(16).fill(0n),
    pairType: 0,
    activationType: 0,
    activationPoint: 0n,
    rewardMints: [hasRewards ? randomPubkey(rng) : DEFAULT_PUBKEY, DEFAULT_PUBKEY],
    oracle: randomPubkey(rng),
    protocolFeeX: 0n,
    protocolFeeY: 0n,
    lastUpdatedAt: lastUpdateTimestamp,
    tokenXProgramFlag: 0,
    tokenYProgramFlag: 0,
    version: 0,
  };

  const binArrays: DlmmBinArray[] = [];
  const low = options.arraysEachSide ?? rng.int(1, 4);
  const high = options.arraysEachSide ?? rng.int(1, 4);
  let bitmap: readonly bigint[] = pool.binArrayBitmap;
  for (let index = activeArray - low; index <= activeArray + high; index++) {
    // Some arrays hold no liquidity: the bitmap bit is clear and the array is not supplied.
    if (index !== activeArray && rng.chance(0.15)) continue;
    const array = emptyBinArray(address, index, binStep);
    const bins = array.bins as DlmmBin[];
    const sparse = rng.chance(0.3);
    for (const bin of bins) {
      const below = bin.id < activeId;
      const above = bin.id > activeId;
      // Mostly the DLMM shape (Y below the active bin, X above, both in it), with strays.
      bin.amountY = above && rng.chance(0.9) ? 0n : reserve(rng, sparse ? 0.7 : 0.15);
      bin.amountX = below && rng.chance(0.9) ? 0n : reserve(rng, sparse ? 0.7 : 0.15);
      bin.liquiditySupply = bin.amountX + bin.amountY === 0n ? 0n : rng.bits(96);
      if (rng.chance(0.2)) {
        bin.openOrderAmount = rng.chance(0.5) ? 0n : rng.logBig(1, 40);
        bin.processedOrderRemainingAmount = rng.chance(0.5) ? 0n : rng.logBig(1, 40);
        bin.limitOrderAskSide = rng.chance(0.5);
      }
    }
    binArrays.push(array);
    bitmap = withBinArrayBit(bitmap, index, true);
  }
  // Liquidity the caller did not fetch: arrays the bitmap marks but that are not supplied.
  if (rng.chance(0.3)) bitmap = withBinArrayBit(bitmap, activeArray - low - rng.int(1, 3), true);
  if (rng.chance(0.3)) bitmap = withBinArrayBit(bitmap, activeArray + high + rng.int(1, 3), true);
  pool.binArrayBitmap = bitmap;
  const nowSeconds = lastUpdateTimestamp + BigInt(rng.pick([0, rng.int(0, 60), rng.int(0, 1_000), rng.int(0, 100_000)]));
  return { pool, binArrays, nowSeconds };
}

/** The total a swap could pay out in one direction over the supplied arrays (market makers only). */
export function suppliedOutput(scenario: RandomScenario, swapForY: boolean): bigint {
  let total = 0n;
  const activeIndex = binArrayIndexOf(scenario.pool.activeId);
  for (const array of scenario.binArrays) {
    const index = Number(array.index);
    if (swapForY ? index > activeIndex : index < activeIndex) continue;
    for (const bin of array.bins) {
      if (swapForY ? bin.id > scenario.pool.activeId : bin.id < scenario.pool.activeId) continue;
      total += swapForY ? bin.amountY : bin.amountX;
    }
  }
  return total;
}
