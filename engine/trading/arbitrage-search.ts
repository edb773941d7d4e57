/**
 * The arbitrage search: cycles of two and three legs that start and end at a base mint, over any
 * mix of the four DEX kinds, each leg quoted with the protocol's exact swap math (`quoteSwap`), and
 * the input that maximises spec 03's profit
 *
 *   profit(x) = out(x) − x − quotedFees − flashLoanFee(x) − tip
 *
 * (flashLoanFee: the lender's fee, spec 03's 0.05 % as the reserve rounds it; 0 when a wallet's own
 * balance funds the input),
 *
 * found by a search over integer amounts, not one fixed size:
 *   1. screen: at `screenAmount` the cycle must already give back more than it takes (out > x +
 *      flashLoanFee); with concave swap curves a cycle whose marginal rate starts below 1 never pays;
 *   2. bracket: double x from `screenAmount` while profit grows (up to `maxInput`, what the flash loan can
 *      lend or the wallet holds) — the maximum lies in [x/4, x];
 *   3. ternary search over the integers of the bracket (profit is unimodal: concave outputs minus a
 *      linear cost; floor rounding only makes flat steps), then the last few integers one by one.
 * A leg the math refuses (insufficient liquidity, past the known ranges) makes that size worth
 * nothing, which the search treats as a loss.
 *
 * Every figure is an exact integer. Pools of a Token-2022 mint with transfer fees are left out by
 * the caller (the planner), since their quotes need the mints' fee configs.
 */
import { quoteSwap, type DecodedPool, type Dex, type SwapContext, type SwapQuote } from '../dex/index.js';
import { type RouteHop } from '../messages/index.js';

/** One pool's state as the search reads it. */
export interface ArbPoolState {
  address: string;
  dex: Dex;
  pool: DecodedPool;
  context: SwapContext | undefined;
  slot: bigint;
}

/** One leg of a cycle: a pool and the direction it is crossed in. */
export interface CycleLeg {
  pool: string;
  aToB: boolean;
  inputMint: string;
  outputMint: string;
}

export type Cycle = readonly CycleLeg[];

export interface SearchSettings {
  /** Fixed costs of the trade in base atoms: quoted transaction fees and the tip. */
  quotedFees: bigint;
  tip: bigint;
  /** The first size tried; also the screen's size. */
  screenAmount: bigint;
  /** The largest input (what the flash loan can lend, or the wallet holds). */
  maxInput: bigint;
  /** The lender's fee for borrowing x (the flash loan's; 0 for a wallet's own balance). */
  flashLoanFee: (x: bigint) => bigint;
}

export interface CycleResult {
  input: bigint;
  output: bigint;
  flashLoanFee: bigint;
  profit: bigint;
  hops: RouteHop[];
  /** Exact quotes evaluated by the search (for the bench). */
  evaluations: number;
}

/** Pool states by address, as the search reads them; undefined when a pool is gone or stale. */
export type PoolLookup = (address: string) => ArbPoolState | undefined;

const NOTHING = -(1n << 127n);

/** The output of `cycle` for `input`, leg by leg; undefined when a leg refuses. */
export function cycleOutput(cycle: Cycle, pools: PoolLookup, input: bigint, hops?: RouteHop[]): bigint | undefined {
  let amount = input;
  for (let i = 0; i < cycle.length; i++) {
    const leg = cycle[i]!;
    const state = pools(leg.pool);
    if (state === undefined) return undefined;
    const q = quoteSwap(state.pool, { aToB: leg.aToB, mode: 'ExactIn', amount }, state.context);
    if (!q.ok || q.amountOut === 0n) return undefined;
    if (q.amountIn !== amount) return undefined; // a partial fill is not this trade
    if (hops !== undefined) hops.push(hopOf(i, leg, state, q));
    amount = q.amountOut;
  }
  return amount;
}

function hopOf(step: number, leg: CycleLeg, state: ArbPoolState, q: SwapQuote): RouteHop {
  return {
    step,
    pool: leg.pool,
    dex: state.dex,
    inputMint: leg.inputMint,
    outputMint: leg.outputMint,
    inputAmount: q.amountIn,
    outputAmount: q.amountOut,
    fee: q.fee,
    feeMint: q.feeInOutput === true ? leg.outputMint : leg.inputMint,
    priceImpact: q.priceImpact,
    slot: state.slot,
  };
}

/**
 * The most profitable input for `cycle` and its figures, or undefined when no size in
 * [screenAmount, maxInput] gives back more than input plus the flash-loan fee.
 */
export function bestCycleInput(cycle: Cycle, pools: PoolLookup, s: SearchSettings): CycleResult | undefined {
  let evaluations = 0;
  const fixed = s.quotedFees + s.tip;
  const profitAt = (x: bigint): bigint => {
    evaluations++;
    const out = cycleOutput(cycle, pools, x);
    return out === undefined ? NOTHING : out - x - s.flashLoanFee(x) - fixed;
  };
  // 1. screen (fixed costs aside: they do not change where the maximum is)
  const screen = profitAt(s.screenAmount);
  if (screen === NOTHING || screen + fixed <= 0n) return undefined;
  // 2. bracket by doubling
  let prevX = s.screenAmount;
  let prev = screen;
  let lo: bigint;
  let hi: bigint;
  for (;;) {
    const x = prevX * 2n > s.maxInput ? s.maxInput : prevX * 2n;
    if (x === prevX) {
      lo = prevX / 2n;
      hi = prevX;
      break;
    }
    const p = profitAt(x);
    if (p <= prev) {
      lo = prevX / 2n;
      hi = x;
      break;
    }
    prevX = x;
    prev = p;
  }
  if (lo < 1n) lo = 1n;
  // 3. ternary search over the integers of [lo, hi]
  while (hi - lo > 3n) {
    const third = (hi - lo) / 3n;
    const m1 = lo + third;
    const m2 = hi - third;
    if (profitAt(m1) < profitAt(m2)) lo = m1 + 1n;
    else hi = m2;
  }
  let bestX = lo;
  let best = NOTHING;
  for (let x = lo; x <= hi; x++) {
    const p = profitAt(x);
    if (p > best) {
      best = p;
      bestX = x;
    }
  }
  if (best === NOTHING) return undefined;
  const hops: RouteHop[] = [];
  const output = cycleOutput(cycle, pools, bestX, hops)!;
  const flashLoanFee = s.flashLoanFee(bestX);
  return { input: bestX, output, flashLoanFee, profit: output - bestX - flashLoanFee - fixed, hops, evaluations: evaluations + 1 };
}

/**
 * Every cycle of two and three legs from `base` back to it over `pools` (address → its two mints),
 * each leg on a different pool. Both directions of a loop are separate cycles.
 */
export function enumerateCycles(base: string, pools: Iterable<{ address: string; tokenA: string; tokenB: string }>, maxLegs: 2 | 3 = 3): Cycle[] {
  const byMint = new Map<string, { address: string; tokenA: string; tokenB: string }[]>();
  for (const p of pools) {
    for (const m of [p.tokenA, p.tokenB]) {
      let list = byMint.get(m);
      if (list === undefined) byMint.set(m, (list = []));
      list.push(p);
    }
  }
  const leg = (p: { address: string; tokenA: string }, from: string, to: string): CycleLeg => ({ pool: p.address, aToB: p.tokenA === from, inputMint: from, outputMint: to });
  const other = (p: { tokenA: string; tokenB: string }, m: string): string => (p.tokenA === m ? p.tokenB : p.tokenA);
  const cycles: Cycle[] = [];
  for (const p1 of byMint.get(base) ?? []) {
    const x = other(p1, base);
    if (x === base) continue;
    for (const p2 of byMint.get(x) ?? []) {
      if (p2.address === p1.address) continue;
      const y = other(p2, x);
      if (y === base) {
        cycles.push([leg(p1, base, x), leg(p2, x, base)]);
        continue;
      }
      if (maxLegs < 3 || y === x) continue;
      for (const p3 of byMint.get(y) ?? []) {
        if (p3.address === p2.address || p3.address === p1.address || other(p3, y) !== base) continue;
        cycles.push([leg(p1, base, x), leg(p2, x, y), leg(p3, y, base)]);
      }
    }
  }
  return cycles;
}
