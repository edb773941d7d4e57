/**
 * Whirlpool quotes with Token-2022 transfer fees on either mint against Orca's own quoter,
 * whirlpools-core `swapQuoteByInputToken` / `swapQuoteByOutputToken` with `transferFeeA` /
 * `transferFeeB`, on seeded random pool states, fees and epochs: every amount to the atom.
 *
 * One documented difference: for ExactIn the SDK reports as `tokenIn` the smallest amount that
 * nets the same pool input, which can be below the amount asked; the program (swap_v2) transfers
 * the amount asked, and so does our quote. The test checks both facts.
 */
import {
  swapQuoteByInputToken,
  swapQuoteByOutputToken,
  tryApplyTransferFee,
  tryReverseApplyTransferFee,
  type TickArrayFacade,
  type TransferFee as OrcaTransferFee,
  type WhirlpoolFacade,
} from '@orca-so/whirlpools-core';
import { describe, expect, it } from 'vitest';

import { quoteConstantProduct } from '../amm/constant-product.js';
import { MIN_SQRT_PRICE, WHIRLPOOL_MAX_SQRT_PRICE, whirlpoolSqrtPriceAtTick } from '../concentrated/tick-math.js';
import { quoteSwap } from '../quote.js';
import { amountToReach, arrayTicks, randomClState, type ClState } from '../testing/cl-state.js';
import { Prng } from '../testing/prng.js';
import { Dex, SwapFailure, SwapMode, type AmmPool, type ConcentratedPool, type SwapRequest, type SwapResult, type TickArray } from '../types.js';
import { decodeWhirlpoolTickArray, encodeWhirlpoolTickArray } from '../whirlpool/tick-array.js';
import { decodeWhirlpool, encodeWhirlpool } from '../whirlpool/whirlpool-account.js';
import { calculateFee, epochFee, type TransferFeeConfig } from './transfer-fee.js';
import type { PoolTransferFees } from './transfer-fee-quote.js';

const POOL = 'HJPjoWUrhoZzkNfRpHuieeFk9WcZWjwy6PBjZ81ngndJ';
const MINT_A = 'So11111111111111111111111111111111111111112';
const MINT_B = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const VAULT_A = '3YQm7ujtXWJU2e9jhp2QGHpnn1ShXn12QjvzMvDgabpX';
const VAULT_B = '2JTw1fE2wz1SymWUQ7UqpVtrTuKjcd6mWwYwUJUCh2rq';
const U64_MAX = (1n << 64n) - 1n;
const REWARD = { emissionsPerSecondX64: 0n, growthGlobalX64: 0n };

const STATE_OPTIONS = {
  ticksPerArray: 88,
  spacings: [1, 8, 64, 128],
  maxWindowArrays: 4,
  feeRates: [0, 100, 3000, 10_000],
  sqrtPriceAtTick: whirlpoolSqrtPriceAtTick,
  minSqrtPrice: MIN_SQRT_PRICE,
  maxSqrtPrice: WHIRLPOOL_MAX_SQRT_PRICE,
};

function facade(state: ClState): WhirlpoolFacade {
  return {
    feeTierIndexSeed: new Uint8Array([state.tickSpacing & 0xff, state.tickSpacing >> 8]),
    tickSpacing: state.tickSpacing,
    feeRate: state.feeRate,
    protocolFeeRate: 0,
    liquidity: state.liquidity,
    sqrtPrice: state.sqrtPrice,
    tickCurrentIndex: state.tick,
    feeGrowthGlobalA: 0n,
    feeGrowthGlobalB: 0n,
    rewardLastUpdatedTimestamp: 0n,
    rewardInfos: [REWARD, REWARD, REWARD],
  };
}

function arrayFacades(state: ClState, starts: readonly number[]): TickArrayFacade[] {
  return starts.map((start) => ({
    startTickIndex: start,
    ticks: arrayTicks(state, start).map((t) => ({
      initialized: t.initialized,
      liquidityNet: t.liquidityNet,
      liquidityGross: t.liquidityGross,
      feeGrowthOutsideA: 0n,
      feeGrowthOutsideB: 0n,
      rewardGrowthsOutside: [0n, 0n, 0n],
    })),
  }));
}

function ourPool(state: ClState): ConcentratedPool {
  const bytes = encodeWhirlpool({
    tokenA: MINT_A,
    tokenB: MINT_B,
    vaultA: VAULT_A,
    vaultB: VAULT_B,
    sqrtPrice: state.sqrtPrice,
    tick: state.tick,
    tickSpacing: state.tickSpacing,
    liquidity: state.liquidity,
    feeRate: state.feeRate,
  });
  return decodeWhirlpool(bytes, POOL);
}

function ourArrays(state: ClState, starts: readonly number[]): TickArray[] {
  return starts.map((start) =>
    decodeWhirlpoolTickArray(encodeWhirlpoolTickArray({ pool: POOL, startTickIndex: start, ticks: arrayTicks(state, start) }), undefined, state.tickSpacing),
  );
}

/** A window one array wider on each side for the SDK, so that it never stops before ours does. */
function widerWindow(state: ClState): number[] {
  const span = state.tickSpacing * 88;
  const first = state.windowStarts[0]!;
  const last = state.windowStarts[state.windowStarts.length - 1]!;
  return [first - span, ...state.windowStarts, last + span];
}

function randomConfig(rng: Prng): TransferFeeConfig | undefined {
  if (rng.chance(0.2)) return undefined;
  const fee = () => ({
    epoch: BigInt(rng.int(0, 20)),
    maximumFee: rng.chance(0.3) ? U64_MAX : rng.chance(0.1) ? 0n : rng.logBig(1, 48),
    transferFeeBasisPoints: rng.pick([0, 1, 10, 50, 100, 250, 1000, 5000, 9999, 10_000, rng.int(0, 10_000)]),
  });
  const older = fee();
  const newer = fee();
  return { transferFeeConfigAuthority: null, withdrawWithheldAuthority: null, withheldAmount: 0n, olderTransferFee: older, newerTransferFee: newer };
}

function orcaFee(config: TransferFeeConfig | undefined, epoch: bigint): OrcaTransferFee | undefined {
  if (config === undefined) return undefined;
  const fee = epochFee(config, epoch);
  return { feeBps: fee.transferFeeBasisPoints, maxFee: fee.maximumFee };
}

function randomRequest(rng: Prng, state: ClState): SwapRequest {
  const aToB = rng.chance(0.5);
  const mode = rng.chance(0.5) ? SwapMode.ExactIn : SwapMode.ExactOut;
  let amount: bigint;
  if (rng.chance(0.5)) {
    const target = Math.max(-443636, Math.min(443636, state.tick + (aToB ? -1 : 1) * rng.int(1, 120) * state.tickSpacing));
    const needed = amountToReach(state, target, aToB, mode === SwapMode.ExactIn, whirlpoolSqrtPriceAtTick);
    amount = needed > 0n && needed < 1n << 62n ? (needed * BigInt(rng.int(30, 120))) / 100n + 1n : rng.logBig(1, 40);
  } else {
    amount = rng.logBig(1, rng.pick([16, 32, 48, 64]));
  }
  return { aToB, mode, amount: amount > U64_MAX ? U64_MAX : amount };
}

type Outcome = { kind: 'full'; amountIn: bigint; amountOut: bigint; fee: bigint; sdkTokenIn: bigint } | { kind: 'partial' } | { kind: 'error'; message: string };

function sdkQuote(state: ClState, arrays: TickArrayFacade[], req: SwapRequest, feeA?: OrcaTransferFee, feeB?: OrcaTransferFee): Outcome {
  const feeIn = (req.aToB ? feeA : feeB) ?? { feeBps: 0, maxFee: 0n };
  try {
    if (req.mode === SwapMode.ExactIn) {
      const q = swapQuoteByInputToken(req.amount, req.aToB, 0, facade(state), undefined, arrays, 0n, feeA, feeB);
      // The smallest amount netting the full pool input: anything less means the pool took less.
      const fullIn = tryReverseApplyTransferFee(tryApplyTransferFee(req.amount, feeIn), feeIn);
      if (q.tokenIn < fullIn) return { kind: 'partial' };
      return { kind: 'full', amountIn: req.amount, amountOut: q.tokenEstOut, fee: q.tradeFee, sdkTokenIn: q.tokenIn };
    }
    const q = swapQuoteByOutputToken(req.amount, !req.aToB, 0, facade(state), undefined, arrays, 0n, feeA, feeB);
    if (q.tokenOut < req.amount) return { kind: 'partial' };
    return { kind: 'full', amountIn: q.tokenEstIn, amountOut: q.tokenOut, fee: q.tradeFee, sdkTokenIn: q.tokenEstIn };
  } catch (err) {
    return { kind: 'error', message: String(err) };
  }
}

describe('Whirlpool quotes with transfer fees against whirlpools-core', () => {
  it('match swapQuoteByInputToken / swapQuoteByOutputToken with transferFeeA / transferFeeB to the atom', () => {
    const rng = new Prng(0x2022_0fee);
    const counts = { quoted: 0, bothSidesFee: 0, zero: 0, partial: 0, errors: 0, needsData: 0, sdkInBelowAmount: 0, feeSwitched: 0 };
    for (let i = 0; i < 1500; i++) {
      const state = randomClState(rng, STATE_OPTIONS);
      const pool = ourPool(state);
      const ctx = { tickArrays: ourArrays(state, state.windowStarts) };
      const sdkArrays = arrayFacades(state, widerWindow(state));
      for (let j = 0; j < 3; j++) {
        const fees: PoolTransferFees = { epoch: BigInt(rng.int(0, 20)), tokenA: randomConfig(rng), tokenB: randomConfig(rng) };
        const req = randomRequest(rng, state);
        const label = `state ${i} req ${j} ${req.aToB ? 'aToB' : 'bToA'} ${req.mode} ${req.amount} epoch ${fees.epoch}`;
        const ours = quoteSwap(pool, req, ctx, fees);
        if (!ours.ok && ours.reason === SwapFailure.InsufficientLiquidityData) {
          counts.needsData++;
          continue;
        }
        const sdk = sdkQuote(state, sdkArrays, req, orcaFee(fees.tokenA, fees.epoch), orcaFee(fees.tokenB, fees.epoch));
        expectSame(ours, sdk, label);
        if (ours.ok) {
          counts.quoted++;
          if (fees.tokenA !== undefined && fees.tokenB !== undefined) counts.bothSidesFee++;
          if (sdk.kind === 'full' && sdk.sdkTokenIn < ours.amountIn) counts.sdkInBelowAmount++;
          const config = req.aToB ? fees.tokenA : fees.tokenB;
          if (config !== undefined && epochFee(config, fees.epoch) === config.newerTransferFee) counts.feeSwitched++;
        } else if (ours.reason === SwapFailure.ZeroAmount) counts.zero++;
        else if (sdk.kind === 'partial') counts.partial++;
        else counts.errors++;
      }
    }
    console.log('transfer-fee quote cross-check outcomes', counts);
    expect(counts.quoted).toBeGreaterThan(1500);
    expect(counts.bothSidesFee).toBeGreaterThan(500);
    expect(counts.zero).toBeGreaterThan(20);
    expect(counts.partial + counts.errors).toBeGreaterThan(20);
    expect(counts.sdkInBelowAmount).toBeGreaterThan(0);
    expect(counts.feeSwitched).toBeGreaterThan(300);
  }, 300_000);
});

function expectSame(ours: SwapResult, sdk: Outcome, label: string): void {
  if (sdk.kind === 'full') {
    if (sdk.amountOut === 0n) {
      expect(ours.ok ? 'ok' : ours.reason, label).toBe(SwapFailure.ZeroAmount);
      return;
    }
    expect(ours.ok, `${label}: ${ours.ok ? '' : ours.message}`).toBe(true);
    if (!ours.ok) return;
    expect(ours.amountIn, label).toBe(sdk.amountIn);
    expect(ours.amountOut, label).toBe(sdk.amountOut);
    expect(ours.fee, label).toBe(sdk.fee);
    // The SDK's ExactIn tokenIn nets the same pool input as the amount the program transfers.
    const t = ours.transferFees ?? { input: 0n, output: 0n, poolAmountIn: ours.amountIn, poolAmountOut: ours.amountOut };
    expect(t.poolAmountIn, label).toBe(ours.amountIn - t.input);
    expect(t.poolAmountOut - t.output, label).toBe(ours.amountOut);
    expect(sdk.sdkTokenIn <= ours.amountIn, label).toBe(true);
  } else if (sdk.kind === 'partial') {
    expect(ours.ok ? 'ok' : ours.reason, label).toBe(SwapFailure.InsufficientLiquidity);
  } else {
    // The SDK refuses a zero tradable amount and amounts beyond u64; ours refuses too.
    expect(ours.ok, `${label}: sdk error ${sdk.message}`).toBe(false);
  }
}

describe('quoteSwap with transfer fees on a constant-product pool', () => {
  const amm: AmmPool = { dex: Dex.Amm, address: POOL, tokenA: MINT_A, tokenB: MINT_B, status: 6n, reserveA: 5_000_000_000_000n, reserveB: 750_000_000_000n, feeNumerator: 25n, feeDenominator: 10_000n };
  const config = (bps: number, max: bigint, newerBps = bps, newerEpoch = 10n): TransferFeeConfig => ({
    transferFeeConfigAuthority: null,
    withdrawWithheldAuthority: null,
    withheldAmount: 0n,
    olderTransferFee: { epoch: 0n, maximumFee: max, transferFeeBasisPoints: bps },
    newerTransferFee: { epoch: newerEpoch, maximumFee: max, transferFeeBasisPoints: newerBps },
  });

  it('is the pool quote when no mint charges a fee, and takes each side\'s fee of the epoch otherwise', () => {
    const req = { aToB: true, mode: SwapMode.ExactIn, amount: 1_000_000_000n };
    expect(quoteSwap(amm, req, undefined, { epoch: 3n })).toEqual(quoteConstantProduct(amm, req));
    const fees = { epoch: 3n, tokenA: config(100, 10n ** 18n, 200), tokenB: config(50, 1_000n) };
    const q = quoteSwap(amm, req, undefined, fees);
    if (!q.ok) throw new Error(q.message);
    const inner = quoteConstantProduct(amm, { ...req, amount: 990_000_000n });
    if (!inner.ok) throw new Error(inner.message);
    expect(q).toMatchObject({ amountIn: 1_000_000_000n, amountOut: inner.amountOut - 1_000n, fee: inner.fee });
    expect(q.transferFees).toEqual({ input: 10_000_000n, output: 1_000n, poolAmountIn: 990_000_000n, poolAmountOut: inner.amountOut });
    // From epoch 10 the newer 200 bps applies to A.
    const later = quoteSwap(amm, req, undefined, { ...fees, epoch: 10n });
    expect(later.ok && later.transferFees!.input).toBe(20_000_000n);
  });

  it('ExactOut delivers exactly the amount asked, the pool paying the fee on top', () => {
    const fees = { epoch: 0n, tokenA: config(100, 10n ** 18n), tokenB: config(300, 10n ** 18n) };
    for (const aToB of [true, false]) {
      for (const amount of [1n, 99n, 12_345n, 1_000_000_007n]) {
        const q = quoteSwap(amm, { aToB, mode: SwapMode.ExactOut, amount }, undefined, fees);
        if (!q.ok) throw new Error(q.message);
        const t = q.transferFees!;
        const outFee = epochFee((aToB ? fees.tokenB : fees.tokenA)!, 0n);
        const inFee = epochFee((aToB ? fees.tokenA : fees.tokenB)!, 0n);
        expect(q.amountOut).toBe(amount);
        expect(t.poolAmountOut - calculateFee(outFee, t.poolAmountOut)).toBe(amount);
        expect(q.amountIn - calculateFee(inFee, q.amountIn)).toBe(t.poolAmountIn);
        const inner = quoteConstantProduct(amm, { aToB, mode: SwapMode.ExactOut, amount: t.poolAmountOut });
        expect(inner.ok && inner.amountIn).toBe(t.poolAmountIn);
      }
    }
  });

  it('refuses when the fee takes everything, and an ExactOut beyond u64 before the fee', () => {
    const full = { epoch: 0n, tokenA: config(10_000, 5n) };
    expect(quoteSwap(amm, { aToB: true, mode: SwapMode.ExactIn, amount: 5n }, undefined, full)).toMatchObject({ ok: false, reason: SwapFailure.ZeroAmount });
    expect(quoteSwap(amm, { aToB: true, mode: SwapMode.ExactIn, amount: 6n }, undefined, full)).toMatchObject({ ok: false, reason: SwapFailure.ZeroAmount }); // 1 atom in: nothing out
    expect(quoteSwap(amm, { aToB: false, mode: SwapMode.ExactOut, amount: U64_MAX }, undefined, full)).toMatchObject({ ok: false, reason: SwapFailure.InsufficientLiquidity });
    expect(quoteSwap(amm, { aToB: true, mode: SwapMode.ExactIn, amount: 0n }, undefined, full)).toMatchObject({ ok: false, reason: SwapFailure.ZeroAmount });
    expect(() => quoteSwap(amm, { aToB: true, mode: SwapMode.ExactIn, amount: -1n }, undefined, full)).toThrow();
  });
});
