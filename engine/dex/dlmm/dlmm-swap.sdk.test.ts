/**
 * Cross-check of `quoteDlmm` against the Meteora SDK's `DLMM.swapQuote` and `swapQuoteExactOut`
 * over seeded random pools. Every state goes through bytes: our encoders write the accounts, the
 * SDK's Anchor coder decodes them for the SDK, and our decoders decode them for `quoteDlmm`.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';

import { SwapMode, type SwapResult } from '../types.js';
import { decodeBinArray, encodeBinArray, type DlmmBinArray } from './bin-array.js';
import { amountInForOut } from './bin-swap.js';
import { U64_MAX } from './constants.js';
import { quoteDlmm, type DlmmSwapQuote } from './dlmm-swap.js';
import { decodeLbPair, encodeLbPair, supportsLimitOrders } from './lb-pair.js';
import { big, bn, dlmmSdk, sdkDlmm, type SdkBinArrayAccount, type SdkDlmm } from './testing/meteora-sdk.js';
import { Prng, randomScenario, type RandomScenario, randomPubkey } from './testing/random-pools.js';
import { sdkBinArrayAccount, sdkDecodeBinArray, sdkDecodeLbPair } from './testing/sdk-accounts.js';

interface Prepared {
  scenario: RandomScenario;
  sdk: SdkDlmm;
  sdkArrays: SdkBinArrayAccount[];
  ctx: { binArrays: DlmmBinArray[]; nowSeconds: bigint };
  pool: ReturnType<typeof decodeLbPair>;
}

function prepare(rng: Prng, scenario: RandomScenario): Prepared {
  const poolBytes = encodeLbPair(scenario.pool);
  const arrayBytes = scenario.binArrays.map((a) => encodeBinArray(a));
  return {
    scenario,
    sdk: sdkDlmm(scenario.pool.address, sdkDecodeLbPair(poolBytes)),
    sdkArrays: arrayBytes.map((bytes) => sdkBinArrayAccount(sdkDecodeBinArray(bytes), randomPubkey(rng))),
    ctx: { binArrays: arrayBytes.map((bytes) => decodeBinArray(bytes)), nowSeconds: scenario.nowSeconds },
    pool: decodeLbPair(poolBytes, scenario.pool.address),
  };
}

/** Market-maker output and (fee-less) input capacity from the active bin on, in one direction. */
function capacity(s: RandomScenario, swapForY: boolean): { out: bigint; in: bigint; edgesOut: bigint[] } {
  const bins = s.binArrays
    .flatMap((a) => a.bins)
    .filter((b) => (swapForY ? b.id <= s.pool.activeId : b.id >= s.pool.activeId))
    .sort((a, b) => (swapForY ? b.id - a.id : a.id - b.id));
  let out = 0n;
  let inn = 0n;
  const edgesOut: bigint[] = [];
  for (const b of bins) {
    const mm = swapForY ? b.amountY : b.amountX;
    if (mm === 0n) continue;
    out += mm;
    inn += amountInForOut(mm, b.price, swapForY);
    edgesOut.push(out);
  }
  return { out, in: inn, edgesOut };
}

/** An amount from tiny to a bit past what the supplied bins hold, or exactly a bin edge. */
function pickAmount(rng: Prng, total: bigint, edges: bigint[]): bigint {
  if (edges.length > 0 && rng.chance(0.15)) return rng.pick(edges);
  if (total === 0n || rng.chance(0.1)) return rng.logBig(1, rng.int(1, 48));
  const permille = BigInt(rng.pick([rng.int(1, 50), rng.int(1, 1_000), rng.int(500, 1_150)]));
  const amount = (total * permille) / 1_000n;
  return amount === 0n ? 1n : amount > U64_MAX ? U64_MAX : amount;
}

function isSdkInsufficientLiquidity(err: unknown): boolean {
  return err instanceof Error && /insufficient liquidity/i.test(err.message);
}

interface Tally {
  quotes: number;
  refusals: number;
  bins: number;
  arraysCrossed: number;
  feeInOutput: number;
  variableFee: number;
  limitOrderPools: number;
}

function crossCheck(p: Prepared, swapForY: boolean, mode: SwapMode, amount: bigint, tally: Tally, label: string): void {
  const ours: SwapResult = quoteDlmm(p.pool, { aToB: swapForY, mode, amount }, p.ctx);
  let ref: { amountIn: bigint; amountOut: bigint; fee: bigint; protocolFee: bigint; endPrice?: string } | 'insufficient';
  try {
    if (mode === SwapMode.ExactIn) {
      const q = p.sdk.swapQuote(bn(amount), swapForY, bn(0), p.sdkArrays) as ReturnType<SdkDlmm['swapQuote']> & { endPrice: { toString(): string } };
      ref = { amountIn: big(q.consumedInAmount), amountOut: big(q.outAmount), fee: big(q.fee), protocolFee: big(q.protocolFee), endPrice: q.endPrice.toString() };
    } else {
      const q = p.sdk.swapQuoteExactOut(bn(amount), swapForY, bn(0), p.sdkArrays);
      ref = { amountIn: big(q.inAmount), amountOut: big(q.outAmount), fee: big(q.fee), protocolFee: big(q.protocolFee) };
    }
  } catch (err) {
    if (!isSdkInsufficientLiquidity(err)) throw err;
    ref = 'insufficient';
  }
  if (ref === 'insufficient') {
    expect(ours.ok, `${label}: the SDK found too little liquidity`).toBe(false);
    tally.refusals++;
    return;
  }
  if (ref.amountIn > U64_MAX || ref.amountOut > U64_MAX) {
    // The SDK does not bound its BN amounts; the program's u64 amounts would overflow.
    expect(ours.ok, `${label}: the SDK amounts exceed u64`).toBe(false);
    tally.refusals++;
    return;
  }
  expect(ours.ok, `${label}: ${ours.ok ? '' : ours.message}`).toBe(true);
  const q = ours as DlmmSwapQuote;
  expect({ amountIn: q.amountIn, amountOut: q.amountOut, lpFee: q.lpFee, protocolFee: q.protocolFee }, label).toEqual({
    amountIn: ref.amountIn,
    amountOut: ref.amountOut,
    lpFee: ref.fee,
    protocolFee: ref.protocolFee,
  });
  if (mode === SwapMode.ExactIn) {
    // The SDK splits no fee in a bin where the fee ate the whole input (1 atom left: fee 1, out 0).
    expect([0n, 1n], `${label}: trading fee`).toContain(q.fee - (ref.fee + ref.protocolFee));
    // The SDK's end price is the price of the last bin that took input: our active id after.
    expect(dlmmSdk().getPriceOfBinByBinId(q.activeIdAfter, p.pool.binStep).toString(), `${label}: end bin`).toBe(ref.endPrice);
  }
  tally.quotes++;
  if (q.feeInOutput === true) tally.feeInOutput++;
  if (p.pool.parameters.variableFeeControl !== 0 && p.pool.parameters.maxVolatilityAccumulator !== 0) tally.variableFee++;
  if (supportsLimitOrders(p.pool)) tally.limitOrderPools++;
  const crossed = Math.abs(q.activeIdAfter - p.pool.activeId);
  tally.bins += crossed;
  tally.arraysCrossed += Math.abs(Math.floor(q.activeIdAfter / 70) - Math.floor(p.pool.activeId / 70));
}

describe('quoteDlmm against the Meteora SDK', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  // 3200 quotes through the SDK's BN arithmetic: about 30 s on an idle 2-core box.
  it('gives the SDK amounts and fees to the unit on random pools, both directions, exact in and out', { timeout: 300_000 }, () => {
    const rng = new Prng(20_240_601);
    const tally: Tally = { quotes: 0, refusals: 0, bins: 0, arraysCrossed: 0, feeInOutput: 0, variableFee: 0, limitOrderPools: 0 };
    const STATES = 800;
    for (let n = 0; n < STATES; n++) {
      const scenario = randomScenario(rng);
      const p = prepare(rng, scenario);
      // The SDK reads the clock from Date.now(); ours from ctx.nowSeconds.
      vi.spyOn(Date, 'now').mockReturnValue(Number(scenario.nowSeconds) * 1000);
      for (const swapForY of [true, false]) {
        const cap = capacity(scenario, swapForY);
        crossCheck(p, swapForY, SwapMode.ExactIn, pickAmount(rng, cap.in, []), tally, `state ${n} ${swapForY ? 'X→Y' : 'Y→X'} in`);
        crossCheck(p, swapForY, SwapMode.ExactOut, pickAmount(rng, cap.out, cap.edgesOut), tally, `state ${n} ${swapForY ? 'X→Y' : 'Y→X'} out`);
      }
      vi.restoreAllMocks();
    }
    // The run must have swept across many bins and arrays, and met refusals on both sides.
    expect(tally.quotes + tally.refusals).toBe(STATES * 4);
    expect(tally.quotes).toBeGreaterThan(STATES * 2);
    expect(tally.refusals).toBeGreaterThan(STATES / 10);
    expect(tally.bins / tally.quotes).toBeGreaterThan(20);
    expect(tally.arraysCrossed).toBeGreaterThan(STATES / 2);
    expect(tally.feeInOutput).toBeGreaterThan(STATES / 10);
    expect(tally.variableFee).toBeGreaterThan(STATES);
    expect(tally.limitOrderPools).toBeGreaterThan(STATES / 2);
    console.log(
      `DLMM SDK cross-check: ${tally.quotes} quotes equal (${tally.feeInOutput} with the fee in the output, ` +
        `${tally.variableFee} with a variable fee, ${tally.limitOrderPools} in pairs that fill limit orders), ` +
        `${tally.refusals} refusals agreed, ${tally.bins} bins and ${tally.arraysCrossed} array boundaries crossed`,
    );
  });
});
