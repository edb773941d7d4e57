import { describe, expect, it } from 'vitest';

import { SwapMode, type SwapRequest } from '../types.js';
import { quoteDlmm, quoteDlmmWithBins, type DlmmSwapWithBins } from './dlmm-swap.js';
import { volatilityAccumulatorAt } from './fees.js';
import { supportsLimitOrders } from './lb-pair.js';
import { Prng, randomScenario, suppliedOutput, type RandomScenario } from './testing/random-pools.js';

/** The scenario with the bins and pair state a swap left (what the program writes). */
function applied(s: RandomScenario, q: DlmmSwapWithBins): RandomScenario {
  const byId = new Map(q.bins.map((b) => [b.id, b]));
  return {
    ...s,
    pool: { ...s.pool, activeId: q.activeIdAfter, vParameters: q.vParametersAfter },
    binArrays: s.binArrays.map((a) => ({ ...a, bins: a.bins.map((b) => (byId.has(b.id) ? { ...b, ...byId.get(b.id)! } : b)) })),
  };
}

describe('quoteDlmmWithBins', () => {
  it('quotes what quoteDlmm quotes and moves exactly the quoted amounts through the bins', () => {
    const rng = new Prng(20260601);
    let checked = 0;
    for (let i = 0; i < 400; i++) {
      const s = randomScenario(rng);
      const swapForY = rng.chance(0.5);
      const available = suppliedOutput(s, swapForY);
      if (available === 0n) continue;
      const req: SwapRequest = { aToB: swapForY, mode: rng.chance(0.7) ? SwapMode.ExactIn : SwapMode.ExactOut, amount: rng.bigint(1n, available) };
      const ctx = { binArrays: s.binArrays, nowSeconds: s.nowSeconds };
      const plain = quoteDlmm(s.pool, req, ctx);
      const withBins = quoteDlmmWithBins(s.pool, req, ctx);
      if (!withBins.ok) {
        // Only limit orders in a traded bin make it refuse where quoteDlmm quotes.
        if (plain.ok) expect(supportsLimitOrders(s.pool)).toBe(true);
        continue;
      }
      expect(plain.ok).toBe(true);
      const { bins, vParametersAfter, ...quote } = withBins;
      expect(quote).toEqual(plain);
      // Conservation: the bins gain the input (less a fee on the input) and pay the output (plus a fee on the output).
      let dx = 0n;
      let dy = 0n;
      const before = new Map(s.binArrays.flatMap((a) => a.bins.map((b) => [b.id, b] as const)));
      for (const b of bins) {
        dx += b.amountX - before.get(b.id)!.amountX;
        dy += b.amountY - before.get(b.id)!.amountY;
        expect(b.amountX).toBeGreaterThanOrEqual(0n);
        expect(b.amountY).toBeGreaterThanOrEqual(0n);
      }
      const feeOnInput = quote.feeInOutput !== true;
      const intoBins = feeOnInput ? quote.amountIn - quote.fee : quote.amountIn;
      const outOfBins = feeOnInput ? quote.amountOut : quote.amountOut + quote.fee;
      if (req.aToB) expect([dx, -dy]).toEqual([intoBins, outOfBins]);
      else expect([dy, -dx]).toEqual([intoBins, outOfBins]);
      // The accumulator is the one of the bin the swap ended in; the timestamp moves to now.
      expect(vParametersAfter.lastUpdateTimestamp).toBe(s.nowSeconds);
      expect(vParametersAfter.volatilityAccumulator).toBe(
        volatilityAccumulatorAt(vParametersAfter.volatilityReference, vParametersAfter.indexReference, quote.activeIdAfter, s.pool.parameters.maxVolatilityAccumulator),
      );
      checked++;
    }
    expect(checked).toBeGreaterThan(150);
  });

  it('continues from the state it leaves: two swaps on the written state pay what one swap of both amounts pays', () => {
    const rng = new Prng(77);
    let checked = 0;
    for (let i = 0; i < 300 && checked < 60; i++) {
      const s = randomScenario(rng, { arraysEachSide: 4 });
      // No fees and no volatility: then splitting an exact-in swap changes nothing but rounding.
      s.pool = { ...s.pool, parameters: { ...s.pool.parameters, baseFactor: 0, variableFeeControl: 0, functionType: 1 } };
      const swapForY = rng.chance(0.5);
      const available = suppliedOutput(s, swapForY);
      if (available < 1000n) continue;
      const ctx = { binArrays: s.binArrays, nowSeconds: s.nowSeconds };
      const whole = quoteDlmmWithBins(s.pool, { aToB: swapForY, mode: SwapMode.ExactOut, amount: available / 2n }, ctx);
      if (!whole.ok) continue;
      const first = quoteDlmmWithBins(s.pool, { aToB: swapForY, mode: SwapMode.ExactOut, amount: available / 4n }, ctx);
      if (!first.ok) continue;
      const next = applied(s, first);
      const second = quoteDlmmWithBins(next.pool, { aToB: swapForY, mode: SwapMode.ExactOut, amount: available / 2n - available / 4n }, {
        binArrays: next.binArrays,
        nowSeconds: s.nowSeconds,
      });
      expect(second.ok).toBe(true);
      if (!second.ok) continue;
      expect(second.activeIdAfter).toBe(whole.activeIdAfter);
      // Each exact-out step rounds its input up: splitting costs at most an atom per bin touched.
      const extra = first.amountIn + second.amountIn - whole.amountIn;
      expect(extra >= 0n && extra <= BigInt(first.bins.length + second.bins.length)).toBe(true);
      checked++;
    }
    expect(checked).toBeGreaterThan(20);
  });
});
