import LiquidityModule from '@raydium-io/raydium-sdk-v2/lib/raydium/liquidity/liquidity.js';
import { toBN } from '@raydium-io/raydium-sdk-v2';
import { describe, expect, it } from 'vitest';

import { ErrorCode, isTpError } from '../../errors.js';
import { Prng } from '../testing/prng.js';
import { Dex, SwapFailure, SwapMode, type AmmPool, type SwapResult } from '../types.js';
import { quoteConstantProduct } from './constant-product.js';

const MINT_A = 'So11111111111111111111111111111111111111112';
const MINT_B = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const U64_MAX = (1n << 64n) - 1n;

function pool(reserveA: bigint, reserveB: bigint, status = 1n): AmmPool {
  return {
    dex: Dex.Amm,
    tokenA: MINT_A,
    tokenB: MINT_B,
    status,
    reserveA,
    reserveB,
    feeNumerator: 25n,
    feeDenominator: 10_000n,
  };
}

function ok(result: SwapResult): Extract<SwapResult, { ok: true }> {
  if (!result.ok) throw new Error(`expected a quote, got ${result.reason}: ${result.message}`);
  return result;
}

interface SdkAmountOut {
  amountOut: { toString(): string };
  fee: { toString(): string };
}
interface SdkAmountIn {
  amountIn: { toString(): string };
  fee: { toString(): string };
}
interface LiquidityClass {
  prototype: {
    computeAmountOut(this: unknown, params: unknown): SdkAmountOut;
    computeAmountIn(this: unknown, params: unknown): SdkAmountIn;
  };
}
/**
 * Raydium SDK v2 `Liquidity.computeAmountOut` (src/raydium/liquidity/liquidity.ts): a method of
 * the SDK's Liquidity module, but pure math on a pool info for AMM v4 (no `this` state is read).
 * The module is CommonJS; depending on the loader its class is the default import or its
 * `default` property.
 */
const liquidityExport = LiquidityModule as unknown as LiquidityClass | { default: LiquidityClass };
const liquidityPrototype = ('prototype' in liquidityExport ? liquidityExport : liquidityExport.default).prototype;
const sdkComputeAmountOut = liquidityPrototype.computeAmountOut;
const sdkComputeAmountIn = liquidityPrototype.computeAmountIn;

/** The SDK's ExactOut (`computeAmountIn`, its logging methods stubbed): floor divisions, see below. */
function sdkIn(p: AmmPool, aToB: boolean, amountOut: bigint): bigint {
  const self = { logDebug: () => undefined, logAndCreateError: (m: string) => { throw new Error(m); } };
  const result = sdkComputeAmountIn.call(self, {
    poolInfo: {
      version: 4,
      mintA: { address: MINT_A, decimals: 6 },
      mintB: { address: MINT_B, decimals: 6 },
      baseReserve: toBN(p.reserveA.toString()),
      quoteReserve: toBN(p.reserveB.toString()),
    },
    amountOut: toBN(amountOut.toString()),
    mintIn: aToB ? MINT_A : MINT_B,
    mintOut: aToB ? MINT_B : MINT_A,
    slippage: 0,
  });
  return BigInt(result.amountIn.toString());
}

function sdkOut(p: AmmPool, aToB: boolean, amountIn: bigint): { amountOut: bigint; fee: bigint } {
  const result = sdkComputeAmountOut.call(
    {},
    {
      poolInfo: {
        version: 4,
        mintA: { address: MINT_A, decimals: 6 },
        mintB: { address: MINT_B, decimals: 6 },
        baseReserve: toBN(p.reserveA.toString()),
        quoteReserve: toBN(p.reserveB.toString()),
      },
      amountIn: toBN(amountIn.toString()),
      mintIn: aToB ? MINT_A : MINT_B,
      mintOut: aToB ? MINT_B : MINT_A,
      slippage: 0,
    },
  );
  return { amountOut: BigInt(result.amountOut.toString()), fee: BigInt(result.fee.toString()) };
}

describe('constant product (dexa_amm)', () => {
  it('quotes exact in with the fee rounded up first (hand-worked)', () => {
    // fee = ceil(10_000 * 25 / 10_000) = 25; net = 9_975;
    // out = floor(2_000_000 * 9_975 / (1_000_000 + 9_975)) = floor(19_950_000_000 / 1_009_975) = 19_752
    const q = ok(quoteConstantProduct(pool(1_000_000n, 2_000_000n), { aToB: true, mode: SwapMode.ExactIn, amount: 10_000n }));
    expect(q).toMatchObject({ amountIn: 10_000n, amountOut: 19_752n, fee: 25n });
    // fee = ceil(1 * 25 / 10_000) = 1: a 1-atom swap pays it all and gets nothing.
    expect(quoteConstantProduct(pool(1_000n, 1_000n), { aToB: true, mode: SwapMode.ExactIn, amount: 1n })).toMatchObject({
      ok: false,
      reason: SwapFailure.ZeroAmount,
    });
    // fee = ceil(401 * 25 / 10_000) = ceil(1.0025) = 2; net = 399 (= floor(401 * 9_975 / 10_000));
    // out (B -> A) = floor(1_000_000 * 399 / (3_000_000 + 399)) = 132
    expect(
      ok(quoteConstantProduct(pool(1_000_000n, 3_000_000n), { aToB: false, mode: SwapMode.ExactIn, amount: 401n })),
    ).toMatchObject({ amountOut: 132n, fee: 2n });
  });

  it('quotes exact out with both divisions rounded up (hand-worked)', () => {
    // net = ceil(1_000_000 * 19_752 / (2_000_000 - 19_752)) = ceil(19_752_000_000 / 1_980_248) = 9_975
    // in  = ceil(9_975 * 10_000 / 9_975) = 10_000; fee = 25
    const q = ok(quoteConstantProduct(pool(1_000_000n, 2_000_000n), { aToB: true, mode: SwapMode.ExactOut, amount: 19_752n }));
    expect(q).toMatchObject({ amountIn: 10_000n, amountOut: 19_752n, fee: 25n });
    // net = ceil(3 * 1 / (10 - 1)) = 1 (the reference's plain ceiling); in = ceil(10_000 / 9_975) = 2
    expect(ok(quoteConstantProduct(pool(3n, 10n), { aToB: true, mode: SwapMode.ExactOut, amount: 1n }))).toMatchObject({
      amountIn: 2n,
      fee: 1n,
    });
  });

  it('matches the Raydium SDK v2 AMM v4 computeAmountOut on random reserves and amounts', () => {
    const rng = new Prng(0xa11_0004);
    let compared = 0;
    for (let i = 0; i < 3000; i++) {
      const p = pool(rng.logBig(1, 64), rng.logBig(1, 64));
      const aToB = rng.chance(0.5);
      const amount = rng.logBig(1, 64);
      const ours = quoteConstantProduct(p, { aToB, mode: SwapMode.ExactIn, amount });
      const sdk = sdkOut(p, aToB, amount);
      const reserveOut = aToB ? p.reserveB : p.reserveA;
      if (sdk.amountOut === 0n) {
        expect(ours).toMatchObject({ ok: false, reason: SwapFailure.ZeroAmount });
      } else if (sdk.amountOut >= reserveOut) {
        expect(ours).toMatchObject({ ok: false, reason: SwapFailure.InsufficientLiquidity });
      } else {
        expect(ours).toMatchObject({ ok: true, amountOut: sdk.amountOut, fee: sdk.fee });
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(2000);
  });

  it('exact out asks for an input that buys at least the output, and one atom less of net input would not', () => {
    const rng = new Prng(0xa11_0005);
    for (let i = 0; i < 3000; i++) {
      const p = pool(rng.logBig(2, 63), rng.logBig(2, 63));
      const aToB = rng.chance(0.5);
      const reserveOut = aToB ? p.reserveB : p.reserveA;
      const out = rng.bigint(1n, reserveOut - 1n);
      const q = quoteConstantProduct(p, { aToB, mode: SwapMode.ExactOut, amount: out });
      if (!q.ok) {
        expect(q.reason).toBe(SwapFailure.InsufficientLiquidity); // input past u64
        continue;
      }
      const back = ok(quoteConstantProduct(p, { aToB, mode: SwapMode.ExactIn, amount: q.amountIn }));
      expect(back.amountOut >= out).toBe(true);
      const reserveIn = aToB ? p.reserveA : p.reserveB;
      const net = q.amountIn - q.fee;
      expect((reserveOut * (net - 1n)) / (reserveIn + net - 1n) < out).toBe(true);
    }
  });

  it('exact out is the least input for which the SDK\'s own exact in pays the output (3,000 random states)', () => {
    // Raydium SDK v2 computeAmountIn floors both divisions, the program (processor.rs
    // process_swap_base_out_v2: swap_token_amount_base_out, then * den / (den - num), both with
    // CheckedCeilDiv) rounds both up: the program's input is the least one that the SDK's
    // computeAmountOut (the program's exact in) turns into at least the output, and the SDK's own
    // exact-out figure is never above it and, when below, buys less than the output.
    const rng = new Prng(0xa11_0006);
    let below = 0;
    let compared = 0;
    for (let i = 0; i < 3000; i++) {
      const p = pool(rng.logBig(2, 63), rng.logBig(2, 63));
      const aToB = rng.chance(0.5);
      const reserveOut = aToB ? p.reserveB : p.reserveA;
      const out = rng.logBig(0, 62) % (reserveOut - 1n) + 1n;
      const q = quoteConstantProduct(p, { aToB, mode: SwapMode.ExactOut, amount: out });
      if (!q.ok) continue;
      const sdkOutOf = (amountIn: bigint) => sdkOut(p, aToB, amountIn).amountOut;
      expect(sdkOutOf(q.amountIn) >= out, `in ${q.amountIn} buys ${out}`).toBe(true);
      if (q.amountIn > 1n) expect(sdkOutOf(q.amountIn - 1n) < out, `in ${q.amountIn - 1n} does not`).toBe(true);
      const sdk = sdkIn(p, aToB, out);
      expect(sdk <= q.amountIn).toBe(true);
      if (sdk < q.amountIn) {
        below++;
        expect(sdkOutOf(sdk) < out).toBe(true);
      }
      compared++;
    }
    expect(compared).toBeGreaterThan(2500);
    expect(below).toBeGreaterThan(0);
  });

  it('refuses outputs the reserve cannot pay, zero amounts and disabled pools', () => {
    const p = pool(1_000n, 1_000n);
    expect(quoteConstantProduct(p, { aToB: true, mode: SwapMode.ExactOut, amount: 1_000n })).toMatchObject({
      ok: false,
      reason: SwapFailure.InsufficientLiquidity,
    });
    expect(quoteConstantProduct(p, { aToB: true, mode: SwapMode.ExactIn, amount: 0n })).toMatchObject({
      ok: false,
      reason: SwapFailure.ZeroAmount,
    });
    expect(quoteConstantProduct(pool(0n, 1_000n), { aToB: true, mode: SwapMode.ExactIn, amount: 10n })).toMatchObject({
      ok: false,
      reason: SwapFailure.InsufficientLiquidity,
    });
    for (const status of [0n, 2n, 3n, 4n, 5n]) {
      expect(quoteConstantProduct(pool(1_000n, 1_000n, status), { aToB: true, mode: SwapMode.ExactIn, amount: 10n })).toMatchObject({
        ok: false,
        reason: SwapFailure.PoolDisabled,
      });
    }
  });

  it('throws InvalidAmount for amounts outside u64', () => {
    for (const amount of [-1n, U64_MAX + 1n]) {
      try {
        quoteConstantProduct(pool(1_000n, 1_000n), { aToB: true, mode: SwapMode.ExactIn, amount });
        expect.unreachable();
      } catch (err) {
        expect(isTpError(err, ErrorCode.InvalidAmount)).toBe(true);
      }
    }
  });

  it('reports price impact against the spot price, fee excluded', () => {
    const p = pool(1_000_000_000_000n, 2_000_000_000_000n);
    const tiny = ok(quoteConstantProduct(p, { aToB: true, mode: SwapMode.ExactIn, amount: 1_000_000n }));
    expect(tiny.priceImpact).toBeLessThan(2e-6);
    const big = ok(quoteConstantProduct(p, { aToB: true, mode: SwapMode.ExactIn, amount: 1_000_000_000_000n }));
    // net = 997_500_000_000: out/net = 2e12 / (1e12 + net); spot 2 -> impact = net / (1e12 + net)
    expect(big.priceImpact).toBeCloseTo(997_500_000_000 / 1_997_500_000_000, 9);
  });
});
