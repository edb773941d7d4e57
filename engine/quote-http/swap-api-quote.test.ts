import { afterAll, describe, expect, it } from 'vitest';

import { PoolCache } from '../cache/index.js';
import { SwapMode } from '../dex/index.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import type { OwnedBodyParts } from '../quote/quote-answer.js';
import { QuoteEngine } from '../quote/quote-engine.js';
import type { QuoteRequest } from '../quote/quote-request.js';
import { swapApiBodyOf, swapApiResponseOf } from './swap-api-quote.js';
import { FakeClock, manualSimulator, storePool } from '../quote/testing.js';

const sim = manualSimulator();
afterAll(async () => {
  await sim.close();
});

describe('swapApiBodyOf', () => {
  it('writes byte for byte the JSON of swapApiResponseOf, first and again from the parts kept per route', () => {
    const clock = new FakeClock();
    const cache = new PoolCache({ now: clock.now });
    let slot = 10n;
    for (const view of sim.chain.pools()) storePool(cache, view, slot++);
    const engine = new QuoteEngine({ cache, clock: () => 0 });
    for (const mode of [SwapMode.ExactIn, SwapMode.ExactOut]) {
      for (const slippageBps of [0, 50, 333, 10_000]) {
        for (let repeat = 0; repeat < 2; repeat++) {
          const amount = mode === SwapMode.ExactIn ? 1_234_567_891n : 150_000_001n;
          const request: QuoteRequest = { inputMint: WSOL_MINT, outputMint: USDC_MINT, mode, amount, amountText: amount.toString(), maxStateAgeMs: undefined, slippageBps };
          const answer = engine.quote(request);
          if (answer instanceof Promise || !answer.ok) throw new Error('expected a cache answer');
          for (const t of [0, 0.000012345, 1e-7, 2.5]) {
            expect(swapApiBodyOf(answer, t)).toBe(JSON.stringify(swapApiResponseOf(answer, t)));
          }
        }
      }
    }
  });

  it("serializes a memoized route's parts again when the memo rewrites its entry", () => {
    const clock = new FakeClock();
    const cache = new PoolCache({ now: clock.now });
    for (const view of sim.chain.pools()) storePool(cache, view, 10n);
    const engine = new QuoteEngine({ cache, clock: () => 0 });
    const amount = 1_234_567_891n;
    const request: QuoteRequest = { inputMint: WSOL_MINT, outputMint: USDC_MINT, mode: SwapMode.ExactIn, amount, amountText: amount.toString(), maxStateAgeMs: undefined, slippageBps: 50 };
    const answer = engine.quote(request);
    if (answer instanceof Promise || !answer.ok) throw new Error('expected a cache answer');
    const first = { ...answer };
    const before = swapApiBodyOf(first, 0);
    expect(swapApiBodyOf(first, 0)).toBe(before);
    // The memo rewrites the entry in place: the same body parts, a new revision, another route.
    const body = first.body as OwnedBodyParts;
    body.revision++;
    const route = first.quote;
    const rewritten = { ...first, quote: { ...route, outputAmount: route.outputAmount - 1n, hops: [{ ...route.hops[0]!, outAmount: route.hops[0]!.outAmount - 1n }] } };
    const after = swapApiBodyOf(rewritten, 0);
    expect(after).toBe(JSON.stringify(swapApiResponseOf(rewritten, 0)));
    expect(after).not.toBe(before);
  });
});
