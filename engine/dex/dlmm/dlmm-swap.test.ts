import { describe, expect, it } from 'vitest';

import { ErrorCode, isTpError } from '../../errors.js';
import { Dex, SwapFailure, SwapMode, type SwapRequest, type SwapResult } from '../types.js';
import { binArrayIndexOf, type DlmmBin, type DlmmBinArray } from './bin-array.js';
import { withBinArrayBit } from './bin-array-bitmap.js';
import { binPrice } from './bin-price.js';
import { DEFAULT_PUBKEY, FunctionType, MAX_BIN_ID, MIN_BIN_ID, PairType, U64_MAX } from './constants.js';
import { quoteDlmm, type DlmmSwapQuote } from './dlmm-swap.js';
import type { DlmmLbPair } from './lb-pair.js';
import { emptyBinArray } from './testing/random-pools.js';

const POOL = 'LbPair1111111111111111111111111111111111111';
const OTHER_POOL = 'Other11111111111111111111111111111111111111';

/** A pool with no fees, no limit orders, bin step 10, active at `activeId`. */
function makePool(activeId: number, overrides: Partial<DlmmLbPair> = {}): DlmmLbPair {
  return {
    dex: Dex.Dlmm,
    address: POOL,
    tokenA: DEFAULT_PUBKEY,
    tokenB: DEFAULT_PUBKEY,
    activeId,
    binStep: 10,
    status: 0,
    reserveX: DEFAULT_PUBKEY,
    reserveY: DEFAULT_PUBKEY,
    parameters: {
      baseFactor: 0,
      filterPeriod: 30,
      decayPeriod: 600,
      reductionFactor: 5_000,
      variableFeeControl: 0,
      maxVolatilityAccumulator: 350_000,
      minBinId: MIN_BIN_ID,
      maxBinId: MAX_BIN_ID,
      protocolShare: 0,
      baseFeePowerFactor: 0,
      functionType: FunctionType.LiquidityMining,
      collectFeeMode: 0,
    },
    vParameters: { volatilityAccumulator: 0, volatilityReference: 0, indexReference: activeId, lastUpdateTimestamp: 1_700_000_000n },
    binArrayBitmap: new Array<bigint>(16).fill(0n),
    pairType: PairType.Permissionless,
    activationType: 0,
    activationPoint: 0n,
    rewardMints: [DEFAULT_PUBKEY, DEFAULT_PUBKEY],
    oracle: DEFAULT_PUBKEY,
    protocolFeeX: 0n,
    protocolFeeY: 0n,
    lastUpdatedAt: 0n,
    tokenXProgramFlag: 0,
    tokenYProgramFlag: 0,
    version: 0,
    ...overrides,
  };
}

/** A bin array of the pool with the given reserves, keyed by bin id. */
function makeArray(pool: DlmmLbPair, index: number, reserves: Record<number, Partial<DlmmBin>> = {}, owner = POOL): DlmmBinArray {
  const array = emptyBinArray(owner, index, pool.binStep);
  for (const bin of array.bins as DlmmBin[]) Object.assign(bin, reserves[bin.id] ?? {});
  return array;
}

/** Marks the arrays as holding liquidity in the pool bitmap (those in its range). */
function markLiquidity(pool: DlmmLbPair, ...indexes: number[]): void {
  for (const index of indexes) pool.binArrayBitmap = withBinArrayBit(pool.binArrayBitmap, index, true);
}

function quote(pool: DlmmLbPair, req: SwapRequest, binArrays: DlmmBinArray[], nowSeconds?: bigint): SwapResult {
  return quoteDlmm(pool, req, nowSeconds === undefined ? { binArrays } : { binArrays, nowSeconds });
}

function ok(result: SwapResult): DlmmSwapQuote {
  if (!result.ok) throw new Error(`expected a quote, got ${result.reason}: ${result.message}`);
  return result as DlmmSwapQuote;
}

const xToY = (amount: bigint, mode: SwapMode = SwapMode.ExactIn): SwapRequest => ({ aToB: true, mode, amount });
const yToX = (amount: bigint, mode: SwapMode = SwapMode.ExactIn): SwapRequest => ({ aToB: false, mode, amount });

/** Active bin 0 (price exactly 1) with 1000 Y, bin -1 (price 1/1.001) with 1000 Y, in arrays 0 and -1. */
function twoBins(): { pool: DlmmLbPair; arrays: DlmmBinArray[] } {
  const pool = makePool(0);
  markLiquidity(pool, 0, -1);
  return { pool, arrays: [makeArray(pool, 0, { 0: { amountY: 1_000n } }), makeArray(pool, -1, { [-1]: { amountY: 1_000n } })] };
}

describe('quoteDlmm refusals', () => {
  it('refuses a zero amount', () => {
    const { pool, arrays } = twoBins();
    expect(quote(pool, xToY(0n), arrays)).toMatchObject({ ok: false, reason: SwapFailure.ZeroAmount });
  });

  it('refuses a disabled pool', () => {
    const { pool, arrays } = twoBins();
    expect(quote({ ...pool, status: 1 }, xToY(10n), arrays)).toMatchObject({ ok: false, reason: SwapFailure.PoolDisabled });
  });

  it('refuses a permissioned pool before its activation time, and quotes it after', () => {
    const { pool, arrays } = twoBins();
    const gated = { ...pool, pairType: PairType.Permissioned, activationType: 1, activationPoint: 1_700_000_100n };
    expect(quote(gated, xToY(10n), arrays, 1_700_000_099n)).toMatchObject({ ok: false, reason: SwapFailure.PoolDisabled });
    expect(ok(quote(gated, xToY(10n), arrays, 1_700_000_100n)).amountOut).toBe(10n);
  });

  it('throws InvalidAmount for an amount outside u64', () => {
    const { pool, arrays } = twoBins();
    for (const amount of [-1n, U64_MAX + 1n]) {
      let caught: unknown;
      try {
        quote(pool, xToY(amount), arrays);
      } catch (err) {
        caught = err;
      }
      expect(isTpError(caught, ErrorCode.InvalidAmount)).toBe(true);
    }
  });

  it('refuses with InsufficientLiquidityData when no bin arrays were supplied', () => {
    const { pool } = twoBins();
    expect(quoteDlmm(pool, xToY(10n), {})).toMatchObject({ ok: false, reason: SwapFailure.InsufficientLiquidityData });
  });

  it('refuses with InsufficientLiquidityData when the swap would run past the last supplied array', () => {
    const { pool, arrays } = twoBins();
    markLiquidity(pool, -2); // the bitmap knows array -2 has liquidity, but it was not supplied
    const result = quote(pool, xToY(3_000n), arrays);
    expect(result).toMatchObject({ ok: false, reason: SwapFailure.InsufficientLiquidityData });
    expect(result.ok ? '' : result.message).toContain('bin array -2');
    // Within the supplied arrays it quotes.
    expect(ok(quote(pool, xToY(1_500n), arrays)).activeIdAfter).toBe(-1);
  });

  it('refuses with InsufficientLiquidityData when only the active array is missing', () => {
    const { pool, arrays } = twoBins();
    expect(quote(pool, xToY(10n), arrays.slice(1))).toMatchObject({ ok: false, reason: SwapFailure.InsufficientLiquidityData });
  });

  it('refuses with InsufficientLiquidity when the bitmap holds no more liquidity that way', () => {
    const { pool, arrays } = twoBins();
    const result = quote(pool, xToY(3_000n), arrays);
    expect(result).toMatchObject({ ok: false, reason: SwapFailure.InsufficientLiquidity });
  });

  it('ignores bin arrays that belong to another pool', () => {
    const { pool } = twoBins();
    const foreign = makeArray(pool, 0, { 0: { amountY: 1_000n } }, OTHER_POOL);
    expect(quote(pool, xToY(10n), [foreign])).toMatchObject({ ok: false, reason: SwapFailure.InsufficientLiquidityData });
  });

  it('stops at the lowest bin id the program allows', () => {
    const pool = makePool(-443_600, { binStep: 1 });
    const index = binArrayIndexOf(-443_600); // -6338, beyond the LbPair bitmap: taken as supplied
    const result = quote(pool, xToY(1_000n), [makeArray(pool, index)]);
    expect(result).toMatchObject({ ok: false, reason: SwapFailure.InsufficientLiquidity });
    expect(result.ok ? '' : result.message).toContain(String(MIN_BIN_ID));
  });

  it('stops at the highest bin id the program allows, even with liquidity past it', () => {
    const pool = makePool(443_600, { binStep: 1 });
    const index = binArrayIndexOf(443_600); // 6337: bins 443590..443659
    const result = quote(pool, yToX(1_000n), [makeArray(pool, index, { 443_637: { amountX: 1_000_000n } })]);
    expect(result).toMatchObject({ ok: false, reason: SwapFailure.InsufficientLiquidity });
    expect(result.ok ? '' : result.message).toContain(String(MAX_BIN_ID));
  });
});

describe('quoteDlmm walking bins', () => {
  it('ends on the bin it empties exactly, and moves on only for more', () => {
    const { pool, arrays } = twoBins();
    const exact = ok(quote(pool, xToY(1_000n), arrays));
    expect([exact.amountIn, exact.amountOut, exact.activeIdAfter]).toEqual([1_000n, 1_000n, 0]);
    const exactOut = ok(quote(pool, xToY(1_000n, SwapMode.ExactOut), arrays));
    expect([exactOut.amountIn, exactOut.amountOut, exactOut.activeIdAfter]).toEqual([1_000n, 1_000n, 0]);
    // One more Y out of bin -1 (price 1/1.001) costs ceil(1.001) = 2 X.
    const past = ok(quote(pool, xToY(1_001n, SwapMode.ExactOut), arrays));
    expect([past.amountIn, past.amountOut, past.activeIdAfter]).toEqual([1_002n, 1_001n, -1]);
  });

  it('crosses into the neighbouring array at the array edge, pricing each bin at its own price', () => {
    const { pool, arrays } = twoBins();
    const q = ok(quote(pool, xToY(2_000n), arrays));
    // bin 0: 1000 X → 1000 Y; bin -1: 1000 X → floor(1000 / 1.001) = 999 Y
    expect([q.amountIn, q.amountOut, q.activeIdAfter]).toEqual([2_000n, 1_999n, -1]);
    expect(q.priceImpact).toBeCloseTo(1 - 1_999 / 2_000, 12);
  });

  it('skips arrays the bitmap marks empty, supplied or not, as the program does', () => {
    const pool = makePool(0);
    markLiquidity(pool, 0, -3);
    const arrays = [
      makeArray(pool, 0, { 0: { amountY: 1_000n } }),
      makeArray(pool, -1, { [-1]: { amountY: 5_000n } }), // supplied, but its bitmap bit is clear
      makeArray(pool, -3, { [-141]: { amountY: 5_000n }, [-150]: { amountY: 5_000n } }),
    ];
    const q = ok(quote(pool, xToY(1_100n), arrays));
    const price = binPrice(-141, 10);
    expect(q.amountOut).toBe(1_000n + ((100n * price) >> 64n));
    expect(q.activeIdAfter).toBe(-141);
  });

  it('buys X upwards for a Y→X swap', () => {
    const pool = makePool(69);
    markLiquidity(pool, 0, 1);
    const arrays = [makeArray(pool, 0, { 69: { amountX: 500n } }), makeArray(pool, 1, { 70: { amountX: 500n } })];
    const q = ok(quote(pool, yToX(700n, SwapMode.ExactOut), arrays));
    const in69 = (500n * binPrice(69, 10) + (1n << 64n) - 1n) >> 64n;
    const in70 = (200n * binPrice(70, 10) + (1n << 64n) - 1n) >> 64n;
    expect([q.amountIn, q.activeIdAfter]).toEqual([in69 + in70, 70]);
  });

  it('prices a bin whose stored price is 0 from its id, as the program does', () => {
    const { pool, arrays } = twoBins();
    (arrays[1]!.bins as DlmmBin[])[69]!.price = 0n; // bin -1
    const q = ok(quote(pool, xToY(2_000n), arrays));
    expect(q.amountOut).toBe(1_000n + ((1_000n * binPrice(-1, 10)) >> 64n));
  });

  it('prices a tiny swap with no impact and a deep one with a positive impact', () => {
    const { pool, arrays } = twoBins();
    expect(ok(quote(pool, xToY(10n), arrays)).priceImpact).toBe(0);
    expect(ok(quote(pool, xToY(1_900n), arrays)).priceImpact).toBeGreaterThan(0);
  });
});

describe('quoteDlmm fees', () => {
  it('takes the base fee from the input by default', () => {
    const { pool, arrays } = twoBins();
    pool.parameters = { ...pool.parameters, baseFactor: 10_000 }; // 10_000 * 10 * 10 = 0.1%
    const q = ok(quote(pool, xToY(1_000n), arrays));
    expect([q.fee, q.amountOut, q.feeInOutput]).toEqual([1n, 999n, undefined]);
  });

  it('cuts the fee from the Y output of an X→Y swap when the pool collects fees in Y only', () => {
    const { pool, arrays } = twoBins();
    pool.parameters = { ...pool.parameters, baseFactor: 10_000, collectFeeMode: 1 };
    const q = ok(quote(pool, xToY(1_000n), arrays));
    expect([q.amountIn, q.amountOut, q.fee, q.feeInOutput]).toEqual([1_000n, 999n, 1n, true]);
    expect(q.priceImpact).toBe(0);
  });

  it('charges more after volatile trading, and decays the volatility with time', () => {
    const { pool, arrays } = twoBins();
    pool.parameters = { ...pool.parameters, baseFactor: 1_000, variableFeeControl: 100_000 };
    pool.vParameters = { ...pool.vParameters, volatilityAccumulator: 300_000, volatilityReference: 300_000 };
    const req = xToY(1_000n);
    const last = pool.vParameters.lastUpdateTimestamp;
    const hot = ok(quote(pool, req, arrays, last + 10n)); // within the filter period: reference kept
    const decayed = ok(quote(pool, req, arrays, last + 60n)); // halved by the reduction factor
    const calm = ok(quote(pool, req, arrays, last + 600n)); // past the decay period: reset
    expect(hot.fee).toBeGreaterThan(decayed.fee);
    expect(decayed.fee).toBeGreaterThan(calm.fee);
    expect(calm.fee).toBe(1n); // base fee only: ceil(1000 * 100_000 / 1e9)
    expect(ok(quote(pool, req, arrays)).fee).toBe(hot.fee); // now defaults to the last update
  });

  it('fills limit orders only in pairs that support them', () => {
    const pool = makePool(0);
    markLiquidity(pool, 0);
    const arrays = [makeArray(pool, 0, { 0: { amountY: 1_000n, openOrderAmount: 500n, limitOrderAskSide: false } })];
    const mining = quote(pool, xToY(1_500n), arrays);
    expect(mining).toMatchObject({ ok: false, reason: SwapFailure.InsufficientLiquidity });
    const limitOrders = { ...pool, parameters: { ...pool.parameters, functionType: FunctionType.LimitOrder } };
    expect(ok(quote(limitOrders, xToY(1_500n), arrays)).amountOut).toBe(1_500n);
    const undetermined = { ...pool, parameters: { ...pool.parameters, functionType: FunctionType.Undetermined } };
    expect(ok(quote(undetermined, xToY(1_500n), arrays)).amountOut).toBe(1_500n);
    const withRewards = { ...undetermined, rewardMints: [POOL, DEFAULT_PUBKEY] as const };
    expect(quote(withRewards, xToY(1_500n), arrays)).toMatchObject({ ok: false, reason: SwapFailure.InsufficientLiquidity });
  });
});
