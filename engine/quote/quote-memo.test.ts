import { afterAll, describe, expect, it } from 'vitest';

import { PoolCache, type PoolStateUpdate } from '../cache/index.js';
import { Dex, SwapMode, type AmmPool } from '../dex/index.js';
import { Prng } from '../dex/testing/prng.js';
import { ErrorCode, TpError } from '../errors.js';
import { USDC_MINT, WSOL_MINT } from '../sim/known-accounts.js';
import { quoteFromCache } from './cache-quoter.js';
import { QuoteErrorCode, isQuoteError } from './errors.js';
import { quoteToJson } from './answer-json.js';
import { errorOfFailure } from './quote-failure.js';
import type { MemoEntry } from './memo-entry.js';
import { QuoteMemo } from './quote-memo.js';
import { FakeClock, manualSimulator, storePool } from './testing.js';

const BONK = 'DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263';
const MINTS = [WSOL_MINT, USDC_MINT, BONK] as const;

const sim = manualSimulator();
afterAll(async () => {
  await sim.close();
});

/** A constant-product pool of SOL/USDC (or `tokenA`/`tokenB`) with the given reserves. */
function amm(address: string, slot: bigint, reserveA: bigint, reserveB: bigint, over: Partial<AmmPool> = {}): PoolStateUpdate {
  const pool: AmmPool = {
    dex: Dex.Amm,
    address,
    tokenA: WSOL_MINT,
    tokenB: USDC_MINT,
    status: 1n,
    reserveA,
    reserveB,
    feeNumerator: 25n,
    feeDenominator: 10_000n,
    ...over,
  };
  return { address, dex: Dex.Amm, tokenA: pool.tokenA, tokenB: pool.tokenB, reserveA, reserveB, slot, pool };
}

function setup(options: { maxPoolCount?: number; stalenessThresholdMs?: number } = {}): { clock: FakeClock; cache: PoolCache; memo: QuoteMemo } {
  const clock = new FakeClock();
  const cache = new PoolCache({ now: clock.now, stalenessThresholdMs: 30_000, ...options });
  return { clock, cache, memo: new QuoteMemo(cache) };
}

/** The memo's entry, its failure thrown as the TpError a caller that throws would make of it. */
function memoQuote(memo: QuoteMemo, ...args: Parameters<QuoteMemo['quote']>): MemoEntry {
  const r = memo.quote(...args);
  if (!r.ok) throw errorOfFailure(r);
  return r;
}

/** The memo's answer as /quote JSON, or its failure as `code: message`. */
function viaMemo(
  memo: QuoteMemo,
  input: string,
  output: string,
  amount: bigint,
  maxStateAgeMs?: number,
  amountText?: string,
  mode: SwapMode = SwapMode.ExactIn,
  slippageBps = 50,
): unknown {
  try {
    const entry = memoQuote(memo, input, output, amount, maxStateAgeMs, amountText, mode);
    return quoteToJson(memo.toQuote(entry, memo.stateAgeMs, slippageBps));
  } catch (err) {
    return failure(err);
  }
}

/** quoteFromCache's answer in the same form. */
function direct(cache: PoolCache, input: string, output: string, amount: bigint, maxStateAgeMs?: number, mode: SwapMode = SwapMode.ExactIn, slippageBps = 50): unknown {
  try {
    return quoteToJson(quoteFromCache(cache, input, output, amount, maxStateAgeMs, { mode, slippageBps }));
  } catch (err) {
    return failure(err);
  }
}

function failure(err: unknown): string {
  if (err instanceof TpError) return `${err.code}: ${err.message}`;
  throw err;
}

const SOL_IN = 1_000_000_000n;

describe('QuoteMemo', () => {
  it('answers a repeated quote from the memo, as quoteFromCache does, counting a cache hit each time', () => {
    const { clock, cache, memo } = setup();
    let slot = 10n;
    for (const view of sim.chain.pools()) storePool(cache, view, slot++);
    const twin = new PoolCache({ now: clock.now, stalenessThresholdMs: 30_000 });
    slot = 10n;
    for (const view of sim.chain.pools()) storePool(twin, view, slot++);
    for (const [input, output, amount] of [
      [WSOL_MINT, USDC_MINT, SOL_IN],
      [USDC_MINT, WSOL_MINT, 50_000_000n],
    ] as const) {
      const first = viaMemo(memo, input, output, amount);
      clock.advance(700);
      const second = viaMemo(memo, input, output, amount);
      expect(second).toEqual(direct(twin, input, output, amount));
      expect(second).toEqual({ ...(first as object), stateAgeMs: (first as { stateAgeMs: number }).stateAgeMs + 700 });
    }
    expect(memo).toMatchObject({ hits: 2, misses: 2, size: 2 });
    expect(cache.stats()).toMatchObject({ hits: 4, misses: 0 });
  });

  it('recomputes when the winner changes or a changed pool can beat it, keeps the answer otherwise', () => {
    const { cache, memo } = setup();
    cache.upsert(amm('A', 1n, 1_000_000_000_000n, 150_000_000_000n));
    cache.upsert(amm('B', 1n, 1_000_000_000_000n, 140_000_000_000n));
    cache.upsert(amm('C', 1n, 1_000_000_000_000n, 130_000_000_000n));
    expect(memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN).route.hops[0]!.pool).toBe('A');
    // C, a loser, gets deeper: its rate bound passes A's output, so the route is searched again: C wins.
    cache.upsert(amm('C', 2n, 1_000_000_000_000n, 160_000_000_000n));
    expect(memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN).route.hops[0]!.pool).toBe('C');
    expect(memo).toMatchObject({ hits: 0, misses: 2, revalidated: 0 });
    // B, a loser, stored again in the same state at a newer slot: its bound stays below C's output,
    // C is unchanged, so the answer stands (checked, not searched: a hit).
    cache.upsert(amm('B', 2n, 1_000_000_000_000n, 140_000_000_000n));
    const kept = memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN);
    expect(kept.route.hops[0]!.pool).toBe('C');
    expect(memo).toMatchObject({ hits: 1, misses: 2, revalidated: 1 });
    // The winner stored again, even in the same state: its hop alone is quoted again on the new
    // state (its slot is in the answer) and the bounds of the others checked: requoted, no search.
    cache.upsert(amm('C', 3n, 1_000_000_000_000n, 160_000_000_000n));
    const swaps = memo.search.swapsQuoted;
    expect(memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN).route.hops[0]!.slot).toBe(3n);
    expect(memo).toMatchObject({ hits: 1, misses: 2, requoted: 1 });
    expect(memo.search.swapsQuoted).toBe(swaps + 1);
    // A new pool of the pair that can beat the winner: searched again, and it wins.
    cache.upsert(amm('D', 1n, 1_000_000_000_000n, 170_000_000_000n));
    expect(memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN).route.hops[0]!.pool).toBe('D');
    expect(memo).toMatchObject({ hits: 1, misses: 3 });
    // A context update of the winner counts as a change of it: requoted.
    cache.updateContext('D', {});
    memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN);
    expect(memo).toMatchObject({ hits: 1, misses: 3, requoted: 2 });
    // The winner moves below another pool's bound: its new quote is not enough, searched again.
    cache.upsert(amm('D', 2n, 1_000_000_000_000n, 120_000_000_000n));
    expect(memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN).route.hops[0]!.pool).toBe('C');
    expect(memo).toMatchObject({ hits: 1, misses: 4, requoted: 2 });
    // The winner moves and stays ahead, with a new output: requoted, the answer is the new state's.
    cache.upsert(amm('C', 4n, 1_000_000_000_000n, 165_000_000_000n));
    const moved = memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN);
    expect(moved.route.hops[0]!).toMatchObject({ pool: 'C', slot: 4n });
    expect(moved.route.hops).toEqual(quoteFromCache(cache, WSOL_MINT, USDC_MINT, SOL_IN).route);
    expect(memo).toMatchObject({ hits: 1, misses: 4, requoted: 3 });
    // Ignored updates (equal or older slot) and other pairs change nothing.
    cache.upsert(amm('C', 1n, 1n, 1n));
    cache.upsert(amm('X', 1n, 1_000n, 1_000n, { tokenB: BONK }));
    expect(memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN).route.hops[0]!.pool).toBe('C');
    expect(memo).toMatchObject({ hits: 2, misses: 4, revalidated: 1, requoted: 3 });
  });

  it('recomputes when the winner is evicted, over capacity or by the eviction tick', () => {
    const { clock, cache, memo } = setup({ maxPoolCount: 3, stalenessThresholdMs: 1_000 });
    cache.upsert(amm('A', 1n, 1_000_000_000_000n, 150_000_000_000n));
    cache.upsert(amm('B', 1n, 1_000_000_000_000n, 140_000_000_000n));
    cache.upsert(amm('C', 1n, 1_000_000_000_000n, 130_000_000_000n));
    expect(memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN).route.hops[0]!.pool).toBe('A');
    // Another pair's pool takes A's place (least recently updated) and its id.
    cache.upsert(amm('X', 1n, 1_000n, 1_000n, { tokenB: BONK }));
    expect(cache.idOf('A')).toBe(-1);
    expect(memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN).route.hops[0]!.pool).toBe('B');
    clock.advance(600);
    cache.upsert(amm('C', 2n, 1_000_000_000_000n, 130_000_000_000n));
    clock.advance(600);
    expect(cache.evictStale()).toBe(2);
    expect(memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN).route.hops[0]!.pool).toBe('C');
    expect(memo.hits).toBe(0);
  });

  it('drops the winner once its state is stale, with no update in between', () => {
    const { clock, cache, memo } = setup({ stalenessThresholdMs: 1_000 });
    cache.upsert(amm('A', 1n, 1_000_000_000_000n, 150_000_000_000n));
    clock.advance(600);
    cache.upsert(amm('B', 1n, 1_000_000_000_000n, 140_000_000_000n));
    expect(memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN).route.hops[0]!.pool).toBe('A');
    clock.advance(400);
    expect(memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN).route.hops[0]!.pool).toBe('A');
    expect(memo.stateAgeMs).toBe(1_000);
    clock.advance(1);
    const entry = memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN);
    expect(entry.route.hops[0]!.pool).toBe('B');
    expect(memo.stateAgeMs).toBe(401);
    clock.advance(600);
    expect(isQuoteError(catchErr(() => memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN)), QuoteErrorCode.NoValidQuotes)).toBe(true);
    expect(memo).toMatchObject({ hits: 1, misses: 3 });
    expect(cache.stats()).toMatchObject({ hits: 3, misses: 1 });
  });

  it('honours maxStateAgeMs both ways: a pool left out for one request is a candidate again for the next', () => {
    const { clock, cache, memo } = setup();
    cache.upsert(amm('A', 1n, 1_000_000_000_000n, 150_000_000_000n));
    clock.advance(5_000);
    cache.upsert(amm('B', 1n, 1_000_000_000_000n, 140_000_000_000n));
    // Young states only: A is left out.
    expect(memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN, 4_999).route.hops[0]!.pool).toBe('B');
    // Older states accepted: A wins again, although the entry was computed without it.
    expect(memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN, 60_000).route.hops[0]!.pool).toBe('A');
    expect(memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN).route.hops[0]!.pool).toBe('A');
    // A shorter limit that still admits A: the same entry answers.
    expect(memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN, 5_000).route.hops[0]!.pool).toBe('A');
    expect(memo).toMatchObject({ hits: 2, misses: 2 });
    // Too short for A: recomputed without it.
    expect(memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN, 10).route.hops[0]!.pool).toBe('B');
    expect(memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN, 0.5).route.hops[0]!.pool).toBe('B');
    clock.advance(1);
    expect(isQuoteError(catchErr(() => memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN, 0)), QuoteErrorCode.NoValidQuotes)).toBe(true);
  });

  it('fails as quoteFromCache does and memoizes no failure', () => {
    const { cache, memo } = setup();
    const twin = new PoolCache({ now: () => 0 });
    expect(viaMemo(memo, WSOL_MINT, USDC_MINT, SOL_IN)).toEqual(direct(twin, WSOL_MINT, USDC_MINT, SOL_IN));
    cache.upsert(amm('A', 1n, 1_000n, 1_000n));
    twin.upsert(amm('A', 1n, 1_000n, 1_000n));
    // Output rounds to zero: no valid quote.
    expect(viaMemo(memo, WSOL_MINT, USDC_MINT, 1n)).toEqual(direct(twin, WSOL_MINT, USDC_MINT, 1n));
    expect(viaMemo(memo, WSOL_MINT, USDC_MINT, 1n)).toBe(`${QuoteErrorCode.NoValidQuotes}: no valid quotes from cache`);
    expect(memo.size).toBe(0);
    expect(cache.stats()).toMatchObject({ hits: 0, misses: 3 });
  });

  it('keys exact out apart from exact in: the same amount in the other mode is another quote', () => {
    const { cache, memo } = setup();
    cache.upsert(amm('A', 1n, 1_000_000_000_000n, 150_000_000_000n)); // deeper for SOL → USDC
    cache.upsert(amm('B', 1n, 1_000_000_000_000n, 140_000_000_000n, { feeNumerator: 1n })); // cheaper fee
    const amount = 100_000_000n;
    const exactIn = memoQuote(memo, WSOL_MINT, USDC_MINT, amount);
    const exactOut = memoQuote(memo, WSOL_MINT, USDC_MINT, amount, undefined, undefined, SwapMode.ExactOut);
    expect(exactOut).not.toBe(exactIn);
    expect(exactIn.route).toMatchObject({ mode: SwapMode.ExactIn, inputAmount: amount });
    expect(exactOut.route).toMatchObject({ mode: SwapMode.ExactOut, outputAmount: amount });
    expect(memo).toMatchObject({ hits: 0, misses: 2, size: 2 });
    // Each mode answers from its own entry.
    expect(memoQuote(memo, WSOL_MINT, USDC_MINT, amount, undefined, undefined, SwapMode.ExactOut)).toBe(exactOut);
    expect(memoQuote(memo, WSOL_MINT, USDC_MINT, amount)).toBe(exactIn);
    expect(memo.hits).toBe(2);
    // The exact-out winner is the pool that asks the least input; its slippage bound is rounded up.
    const a = quoteFromCache(cache, WSOL_MINT, USDC_MINT, amount, undefined, { mode: SwapMode.ExactOut, slippageBps: 33 });
    expect(exactOut.route.inputAmount).toBe(a.inputAmount);
    expect(memo.slippageOf(exactOut, 33)).toMatchObject({ bps: 33, minOutputAmount: amount, maxInputAmount: a.maxInputAmount });
    expect(a.maxInputAmount).toBe((a.inputAmount * 10_033n + 9_999n) / 10_000n);
  });

  it('gives the bounds of each tolerance asked from the entry', () => {
    const { cache, memo } = setup();
    cache.upsert(amm('A', 1n, 1_000_000_000_000n, 150_000_000_000n));
    const entry = memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN);
    const fifty = memo.slippageOf(entry, 50);
    expect(fifty.minOutputAmount).toBe((entry.route.outputAmount * 9_950n) / 10_000n);
    const hundred = memo.slippageOf(entry, 100);
    expect(hundred.minOutputAmount).toBe((entry.route.outputAmount * 9_900n) / 10_000n);
    expect(hundred).toMatchObject({ bps: 100, maxInputAmount: SOL_IN, minOutputText: hundred.minOutputAmount.toString(), maxInputText: SOL_IN.toString() });
    expect(memo.slippageOf(entry, 50)).toEqual(fifty);
  });

  it("rewrites a key's one entry in place when it recomputes, body bytes included", () => {
    const { cache, memo } = setup();
    cache.upsert(amm('A', 1n, 1_000_000_000_000n, 150_000_000_000n));
    const first = memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN);
    const bytes = first.body.bytes;
    const before = first.route;
    // The winner moves: the same entry answers with the new route, written into the same bytes.
    cache.upsert(amm('A', 2n, 1_000_000_000_000n, 151_000_000_000n));
    const second = memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN);
    expect(memo).toMatchObject({ hits: 0, misses: 1, requoted: 1 });
    expect(second).toBe(first);
    expect(second.body.bytes).toBe(bytes);
    expect(second.route.outputAmount).toBeGreaterThan(before.outputAmount);
    const full = quoteFromCache(cache, WSOL_MINT, USDC_MINT, SOL_IN);
    expect(second.route.hops).toEqual(full.route);
    expect(second.route.outputAmount).toBe(full.outputAmount);
    // What a reader got before is its own: the rewrite does not reach it.
    expect(before.hops[0]!.slot).toBe(1n);
    expect(second.route.hops[0]!.slot).toBe(2n);
    // A route is a new object each time it is read.
    expect(second.route).not.toBe(second.route);
    expect(second.route).toEqual(second.route);
  });

  it('keys on the amount, whatever its decimal text', () => {
    const { cache, memo } = setup();
    cache.upsert(amm('A', 1n, 1_000_000_000_000n, 150_000_000_000n));
    const a = memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN, undefined, '1000000000');
    const b = memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN, undefined, '0001000000000');
    const c = memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN);
    expect(b.route).toEqual(a.route);
    expect(c).toBe(a);
    expect(memoQuote(memo, WSOL_MINT, USDC_MINT, SOL_IN + 1n).route.inputAmount).toBe(SOL_IN + 1n);
  });

  it('holds at most maxEntries entries, and none when 0', () => {
    const clock = new FakeClock();
    const cache = new PoolCache({ now: clock.now });
    cache.upsert(amm('A', 1n, 1_000_000_000_000n, 150_000_000_000n));
    const bounded = new QuoteMemo(cache, { maxEntries: 3 });
    const off = new QuoteMemo(cache, { maxEntries: 0 });
    for (let i = 1n; i <= 10n; i++) {
      expect(memoQuote(bounded, WSOL_MINT, USDC_MINT, i * SOL_IN).route).toEqual(memoQuote(off, WSOL_MINT, USDC_MINT, i * SOL_IN).route);
      expect(bounded.size).toBeLessThanOrEqual(3);
    }
    expect(off.size).toBe(0);
    expect(memoQuote(bounded, WSOL_MINT, USDC_MINT, 10n * SOL_IN)).toBe(memoQuote(bounded, WSOL_MINT, USDC_MINT, 10n * SOL_IN));
    expect(() => new QuoteMemo(cache, { maxEntries: -1 })).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'maxEntries', value: -1 } }));
  });

  it('gives the answers of quoteFromCache on random sequences of updates, clock steps, evictions and quotes', () => {
    for (let seed = 1; seed <= 30; seed++) checkRandomSequence(seed);
  });
});

/**
 * Property test: two caches fed the same operations under one clock, one quoted through a small
 * memo, the other with quoteFromCache. Every answer (JSON or error, exact in or exact out, at one
 * of several slippages) and the hit / miss counts must agree. Constant-product pools of three pairs with colliding reserves (ties), pools without a
 * decoded state, mint changes, equal and older slots, a capacity that forces evictions; and the
 * simulator's SOL/USDC pools of every kind, whose context updates (all arrays, or none) change
 * what they can quote.
 */
function checkRandomSequence(seed: number): void {
  const rng = new Prng(seed);
  const clock = new FakeClock();
  const threshold = 2_000;
  const options = { now: clock.now, stalenessThresholdMs: threshold, maxPoolCount: 9 };
  const memoized = new PoolCache(options);
  const plain = new PoolCache(options);
  const memo = new QuoteMemo(memoized, { maxEntries: rng.pick([2, 16, 4096]) });
  const addresses = Array.from({ length: 14 }, (_, i) => `Pool${String(i).padStart(2, '0')}`);
  const slots = new Map<string, bigint>();
  const amounts = [10_000n, 1_000_000n, 1_000_000_000n, 77_777_777_777n];
  const simPools = sim.chain.poolsForPair(WSOL_MINT, USDC_MINT);
  const reserves = [1_000_000n, 5_000_000_000n, 5_000_000_000n, 80_000_000_000n, 1_000_000_000_000n];
  for (let step = 0; step < 400; step++) {
    const op = rng.float();
    const where = `seed ${seed} step ${step}`;
    if (op < 0.3) {
      const address = rng.pick(addresses);
      const last = slots.get(address) ?? 0n;
      const slot = rng.chance(0.15) ? last - BigInt(rng.int(0, 1)) : last + BigInt(rng.int(1, 3));
      if (slot > last) slots.set(address, slot);
      const x = rng.int(0, 2);
      const y = (x + rng.int(1, 2)) % 3;
      const update = amm(address, slot < 0n ? 0n : slot, rng.pick(reserves), rng.pick(reserves), {
        tokenA: MINTS[x]!,
        tokenB: MINTS[y]!,
        feeNumerator: rng.pick([0n, 25n, 30n]),
      });
      if (rng.chance(0.1)) delete update.pool;
      expect(memoized.upsert(update), where).toBe(plain.upsert(update));
    } else if (op < 0.38) {
      const view = rng.pick(simPools);
      const last = slots.get(view.address) ?? 0n;
      const slot = last + BigInt(rng.int(0, 2));
      slots.set(view.address, slot);
      const update: PoolStateUpdate = { address: view.address, dex: view.dex, tokenA: view.pool.tokenA, tokenB: view.pool.tokenB, reserveA: 0n, reserveB: 0n, slot, pool: view.pool };
      if (rng.chance(0.7)) update.context = view.ctx;
      expect(memoized.upsert(update), where).toBe(plain.upsert(update));
    } else if (op < 0.46) {
      const view = rng.pick(simPools);
      const context = rng.chance(0.5) ? view.ctx : {};
      expect(memoized.updateContext(view.address, context), where).toBe(plain.updateContext(view.address, context));
    } else if (op < 0.5) {
      clock.advance(rng.pick([0, 1, 250, 999, 1_000, 1_001, 1_999]));
    } else if (op < 0.55) {
      expect(memoized.evictStale(), where).toBe(plain.evictStale());
    } else if (op < 0.58) {
      const address = rng.pick(addresses);
      expect(memoized.updateContext(address, {}), where).toBe(plain.updateContext(address, {}));
    } else {
      // Mostly SOL/USDC, where the simulator's pools are.
      const x = rng.chance(0.6) ? rng.int(0, 1) : rng.int(0, 2);
      const input = MINTS[x]!;
      const output = x < 2 && rng.chance(0.6) ? MINTS[1 - x]! : MINTS[(x + rng.int(1, 2)) % 3]!;
      const amount = rng.pick(amounts);
      const maxAge = rng.pick([undefined, 0, 500, 1_000, 1_999, 2_000, 10_000]);
      const mode = rng.chance(0.3) ? SwapMode.ExactOut : SwapMode.ExactIn;
      const bps = rng.pick([0, 50, 50, 50, 300, 10_000]);
      expect(viaMemo(memo, input, output, amount, maxAge, undefined, mode, bps), `${where} ${mode} ${input}->${output} ${amount} ${maxAge} ${bps}`).toEqual(
        direct(plain, input, output, amount, maxAge, mode, bps),
      );
    }
    expect(memoized.stats().hits, where).toBe(plain.stats().hits);
    expect(memoized.stats().misses, where).toBe(plain.stats().misses);
  }
  // The memo did answer some of them (repeated quotes between updates) and recompute others.
  expect(memo.hits, `seed ${seed}`).toBeGreaterThan(0);
  expect(memo.misses, `seed ${seed}`).toBeGreaterThan(0);
}

function catchErr(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}
