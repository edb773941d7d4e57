/**
 * Opening a price gap between two pools, so that tests and demos have real arbitrage to find.
 *
 * The gap is made the way a market makes one: a large swap on `pool`, signed by the simulator's
 * market-mover trader (the last genesis trader) and sent as an ordinary transaction, so it lands in
 * the next slot through the runtime, moves the pool's vaults and state as every swap does, and
 * reaches the block stream like any other transaction (a scanner sees it and refetches the pool).
 *
 * Target: the pool's spot price (token B atoms per token A atom) after the swap is `reference × (1 ±
 * gapBps / 10,000)`, where `reference` is the spot price of the `reference` pool (which must trade
 * the same two mints) or, without one, the pool's own price before the swap. `up` buys token A
 * (swap B → A), `down` sells it. The input is the smallest amount whose exact quote on the current
 * state moves the spot to the target (a binary search over integers; DLMM moves bin by bin, so it
 * lands on the first bin at or past the target).
 */
import { Dex, SwapFailure, quoteSwap, type DecodedPool, type SwapQuote } from '../dex/index.js';
import type { SimChain } from './chain.js';
import { spotPrice } from './pool-prices.js';
import { swapTransaction } from './swap-transaction.js';
import { ErrorCode, TpError } from '../errors.js';

export const GapDirection = { Up: 'up', Down: 'down' } as const;
export type GapDirection = (typeof GapDirection)[keyof typeof GapDirection];

export interface PriceGapRequest {
  pool: string;
  /** A pool of the same two mints whose price is the reference; default: `pool` before the swap. */
  reference?: string;
  /** Size of the gap, basis points, 1 to 5,000. */
  gapBps: number;
  /** `up`: the pool's price of A in B rises; `down`: it falls. Default `up`. */
  direction?: GapDirection;
}

export interface PriceGapResult {
  signature: string;
  pool: string;
  aToB: boolean;
  inputMint: string;
  amountIn: bigint;
  expectedOut: bigint;
  spotBefore: number;
  referenceSpot: number;
  targetSpot: number;
  expectedSpotAfter: number;
  /** The slot the transaction was sent in (it lands in the next one). */
  sentAtSlot: bigint;
}

/** A request the chain cannot carry out, with a message for the caller (HTTP 400 / 404). */
export class PriceGapError extends TpError {
  constructor(
    readonly kind: 'unknown_pool' | 'invalid',
    message: string,
    /** `unknown_pool`: the address that is not a pool. */
    pool = '',
  ) {
    super(kind === 'unknown_pool' ? ErrorCode.NotFound : ErrorCode.BadParameter, message, { context: kind === 'unknown_pool' ? { address: pool } : { parameter: 'request' } });
  }
}

/** The pool state after `q` on `pool`, as far as its spot price goes. */
function poolAfter(pool: DecodedPool, q: SwapQuote, aToB: boolean): DecodedPool {
  switch (pool.dex) {
    case Dex.Amm: {
      const inAmount = q.transferFees?.poolAmountIn ?? q.amountIn;
      const outAmount = q.transferFees?.poolAmountOut ?? q.amountOut;
      return aToB
        ? { ...pool, reserveA: pool.reserveA + inAmount, reserveB: pool.reserveB - outAmount }
        : { ...pool, reserveB: pool.reserveB + inAmount, reserveA: pool.reserveA - outAmount };
    }
    case Dex.Clmm:
    case Dex.Whirlpool:
      return { ...pool, sqrtPrice: q.sqrtPriceAfter ?? pool.sqrtPrice };
    case Dex.Dlmm:
      return { ...pool, activeId: q.activeIdAfter ?? pool.activeId };
  }
}

export function openPriceGap(chain: SimChain, req: PriceGapRequest): PriceGapResult {
  if (!Number.isInteger(req.gapBps) || req.gapBps < 1 || req.gapBps > 5_000) throw new PriceGapError('invalid', `gapBps must be an integer from 1 to 5000, got ${String(req.gapBps)}`);
  const direction = req.direction ?? GapDirection.Up;
  if (direction !== GapDirection.Up && direction !== GapDirection.Down) throw new PriceGapError('invalid', `direction must be up or down, got ${String(direction)}`);
  const view = chain.pool(req.pool);
  const info = chain.poolInfo(req.pool);
  if (view === undefined || info === undefined) throw new PriceGapError('unknown_pool', `${req.pool} is not a pool of the simulator`, req.pool);
  if (view.transferFees !== undefined) throw new PriceGapError('invalid', `${req.pool} trades a Token-2022 mint with transfer fees; pick another pool`);
  let referenceSpot = spotPrice(view.pool);
  if (req.reference !== undefined) {
    const ref = chain.pool(req.reference);
    if (ref === undefined) throw new PriceGapError('unknown_pool', `${req.reference} is not a pool of the simulator`, req.reference);
    if (ref.pool.tokenA === view.pool.tokenA && ref.pool.tokenB === view.pool.tokenB) referenceSpot = spotPrice(ref.pool);
    else if (ref.pool.tokenA === view.pool.tokenB && ref.pool.tokenB === view.pool.tokenA) referenceSpot = 1 / spotPrice(ref.pool);
    else throw new PriceGapError('invalid', `${req.reference} does not trade the two mints of ${req.pool}`);
  }
  const spotBefore = spotPrice(view.pool);
  const up = direction === GapDirection.Up;
  const targetSpot = referenceSpot * (1 + ((up ? 1 : -1) * req.gapBps) / 10_000);
  if (up ? spotBefore >= targetSpot : spotBefore <= targetSpot) {
    throw new PriceGapError('invalid', `the pool's price ${spotBefore} is already ${up ? 'at or above' : 'at or below'} the target ${targetSpot}`);
  }
  const aToB = !up; // buying A (B in) raises the price of A
  const trader = chain.genesis.actors.traders[chain.genesis.actors.traders.length - 1]!;
  const inputMint = aToB ? info.tokenA.mint : info.tokenB.mint;
  const balance = chain.getTokenBalance(trader.tokenAccounts.get(inputMint)!)?.amount ?? 0n;

  /** 'short': the swap is too small; 'refused': the math refuses it (past the known ranges). */
  const outcome = (amount: bigint): SwapQuote | 'short' | 'refused' => {
    const q = quoteSwap(view.pool, { aToB, mode: 'ExactIn', amount }, view.ctx);
    if (!q.ok) return q.reason === SwapFailure.ZeroAmount ? 'short' : 'refused';
    const after = spotPrice(poolAfter(view.pool, q, aToB));
    return (up ? after >= targetSpot : after <= targetSpot) ? q : 'short';
  };
  const tooMuch = (): PriceGapError =>
    new PriceGapError('invalid', `a gap of ${req.gapBps} bps on ${req.pool} needs more than the market mover's ${balance} atoms of ${inputMint} or more liquidity than the pool's known ranges`);
  // Double up to the first size that reaches the target, then bisect: the spot after a swap moves
  // monotonically with its size.
  let hi = 1n;
  for (;;) {
    if (hi > balance) throw tooMuch();
    const o = outcome(hi);
    if (o === 'refused') throw tooMuch();
    if (o !== 'short') break;
    hi *= 2n;
  }
  let lo = hi / 2n;
  while (hi - lo > 1n) {
    const mid = (lo + hi) / 2n;
    if (typeof outcome(mid) === 'object') hi = mid;
    else lo = mid;
  }
  const quote = outcome(hi) as SwapQuote;
  const sentAtSlot = chain.slot();
  const signature = chain.sendTransaction(swapTransaction(chain, trader, info, { aToB, exactIn: true, amount: hi, threshold: 0n }));
  return {
    signature,
    pool: req.pool,
    aToB,
    inputMint,
    amountIn: hi,
    expectedOut: quote.amountOut,
    spotBefore,
    referenceSpot,
    targetSpot,
    expectedSpotAfter: spotPrice(poolAfter(view.pool, quote, aToB)),
    sentAtSlot,
  };
}
