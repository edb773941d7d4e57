import { afterAll, describe, expect, it } from 'vitest';

import { PoolCache } from '../cache/index.js';
import { Dex, SwapMode, directionFor, quoteSwap } from '../dex/index.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { quoteFromCache } from './cache-quoter.js';
import { QuoteErrorCode, isQuoteError } from './errors.js';
import { FakeClock, manualSimulator, storePool } from './testing.js';

const sim = manualSimulator();
const chain = sim.chain;
afterAll(async () => {
  await sim.close();
});

function filledCache(clock: FakeClock): PoolCache {
  const cache = new PoolCache({ now: clock.now, stalenessThresholdMs: 30_000 });
  let slot = 100n;
  for (const view of chain.pools()) storePool(cache, view, slot++);
  return cache;
}

/** The largest output of quoteSwap among the chain's pools of the pair, and its pool. */
function bestOnChain(input: string, output: string, amount: bigint): { pool: string; out: bigint } {
  let best = { pool: '', out: -1n };
  for (const view of chain.poolsForPair(input, output)) {
    const r = quoteSwap(view.pool, { aToB: directionFor(view.pool, input, output), mode: SwapMode.ExactIn, amount }, view.ctx);
    if (r.ok && r.amountOut > best.out) best = { pool: view.address, out: r.amountOut };
  }
  return best;
}

describe('quoteFromCache', () => {
  it('quotes the pool with the largest output among all pools of the pair, both directions', () => {
    const clock = new FakeClock();
    const cache = filledCache(clock);
    expect(chain.poolsForPair(WSOL_MINT, USDC_MINT).length).toBeGreaterThan(1);
    for (const [input, output, amount] of [
      [WSOL_MINT, USDC_MINT, 1_000_000_000n],
      [USDC_MINT, WSOL_MINT, 50_000_000n],
    ] as const) {
      const best = bestOnChain(input, output, amount);
      const q = quoteFromCache(cache, input, output, amount);
      expect(q.pool).toBe(best.pool);
      expect(q.outputAmount).toBe(best.out);
      expect(q.inputAmount).toBe(amount);
      expect(q.source).toBe('cache');
      expect(q.dex).toBe(chain.pool(best.pool)!.dex);
      expect(q.route).toEqual([
        {
          pool: q.pool,
          dex: q.dex,
          inputMint: input,
          outputMint: output,
          inAmount: q.inputAmount,
          outAmount: q.outputAmount,
          fee: q.fee,
          feeMint: expect.stringMatching(new RegExp(`^(${input}|${output})$`)) as unknown as string,
          slot: q.slot,
        },
      ]);
    }
    expect(cache.stats().hits).toBe(2);
  });

  it('says how fresh the state is: its slot, its age and the newest slot seen', () => {
    const clock = new FakeClock();
    const cache = filledCache(clock);
    clock.advance(1_234);
    const q = quoteFromCache(cache, WSOL_MINT, USDC_MINT, 1_000_000n);
    expect(q.slot).toBe(cache.slotOf(q.pool));
    expect(q.stateAgeMs).toBe(1_234);
    expect(q.contextSlot).toBe(cache.newestSlot);
    expect(q.contextSlot).toBe(100n + BigInt(chain.pools().length) - 1n);
  });

  it('fails with "no pools found in cache" for a pair no cached pool trades, counting a miss', () => {
    const cache = filledCache(new FakeClock());
    const err = catchErr(() => quoteFromCache(cache, WSOL_MINT, '11111111111111111111111111111111', 1n));
    expect(isQuoteError(err, QuoteErrorCode.NoPoolsInCache)).toBe(true);
    expect((err as Error).message).toBe('no pools found in cache');
    expect(cache.stats().misses).toBe(1);
  });

  it('fails with "no valid quotes from cache" when every candidate is stale, counting a miss', () => {
    const clock = new FakeClock();
    const cache = filledCache(clock);
    clock.advance(30_001);
    const err = catchErr(() => quoteFromCache(cache, WSOL_MINT, USDC_MINT, 1_000n));
    expect(isQuoteError(err, QuoteErrorCode.NoValidQuotes)).toBe(true);
    expect((err as Error).message).toBe('no valid quotes from cache');
    expect(cache.stats()).toMatchObject({ hits: 0, misses: 1 });
  });

  it('refuses state older than maxStateAgeMs and picks among the younger pools only', () => {
    const clock = new FakeClock();
    const cache = new PoolCache({ now: clock.now });
    const views = chain.poolsForPair(WSOL_MINT, USDC_MINT);
    const amount = 1_000_000_000n;
    const best = bestOnChain(WSOL_MINT, USDC_MINT, amount);
    // The best pool is stored first, the others 5 s later.
    storePool(cache, chain.pool(best.pool)!, 10n);
    clock.advance(5_000);
    for (const v of views) if (v.address !== best.pool) storePool(cache, v, 11n);
    expect(quoteFromCache(cache, WSOL_MINT, USDC_MINT, amount).pool).toBe(best.pool);
    const young = quoteFromCache(cache, WSOL_MINT, USDC_MINT, amount, 4_999);
    expect(young.pool).not.toBe(best.pool);
    expect(young.stateAgeMs).toBe(0);
    expect(young.outputAmount).toBeLessThanOrEqual(best.out);
    clock.advance(1);
    expect(isQuoteError(catchErr(() => quoteFromCache(cache, WSOL_MINT, USDC_MINT, amount, 0)), QuoteErrorCode.NoValidQuotes)).toBe(true);
  });

  it('moves with the state: a newer slot of a pool with less output reserve quotes less', () => {
    const clock = new FakeClock();
    const cache = new PoolCache({ now: clock.now });
    const view = chain.poolsForPair(WSOL_MINT, USDC_MINT).find((v) => v.pool.dex === Dex.Amm)!;
    if (view.pool.dex !== Dex.Amm) throw new Error('no AMM pool for SOL/USDC');
    storePool(cache, view, 1n);
    const aToB = view.pool.tokenA === WSOL_MINT;
    const before = quoteFromCache(cache, WSOL_MINT, USDC_MINT, 1_000_000n);
    const pool = aToB ? { ...view.pool, reserveB: view.pool.reserveB / 2n } : { ...view.pool, reserveA: view.pool.reserveA / 2n };
    storePool(cache, { ...view, pool }, 2n);
    const after = quoteFromCache(cache, WSOL_MINT, USDC_MINT, 1_000_000n);
    expect(after.slot).toBe(2n);
    expect(after.outputAmount).toBeLessThan(before.outputAmount);
    expect(after.outputAmount).toBe(
      (quoteSwap(pool, { aToB, mode: SwapMode.ExactIn, amount: 1_000_000n }) as { amountOut: bigint }).amountOut,
    );
  });
});

function catchErr(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}
