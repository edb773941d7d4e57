/**
 * A one-hop order as a TradeOpportunity (grid and DCA): sell `amount` of `inputMint` on `pool` for
 * its other mint, quoted with the exact swap math on the pool's current state. No flash loan, no tip
 * (these are orders for the direct executor, spec 03's selection rule), quoted fees = one signature;
 * expectedProfit 0; minimumOutput = expectedOutput less `slippageBps`.
 *
 * Prices of grid and DCA parameters are raw: quote-token atoms per token atom, the pool's spot price
 * with the fee not applied (`priceOf`).
 */

import { quoteSwap } from '../dex/index.js';
import type { LoadedPool } from '../pools/index.js';
import { rawSpotPrice } from '../market/index.js';
import { LAMPORTS_PER_SIGNATURE, TRADE_OPPORTUNITY_VERSION, type Strategy, type TradeOpportunity } from '../messages/index.js';

/** The price of `token` in the pool's other mint (raw atoms), or undefined when the pool does not trade it. */
export function priceOf(loaded: LoadedPool, token: string): number | undefined {
  const p = rawSpotPrice(loaded.pool);
  if (loaded.pool.tokenA === token) return p;
  if (loaded.pool.tokenB === token) return p > 0 ? 1 / p : undefined;
  return undefined;
}

export interface OrderRequest {
  id: string;
  strategy: Strategy;
  strategyId: string;
  side: 'buy' | 'sell';
  loaded: LoadedPool;
  inputMint: string;
  amount: bigint;
  slippageBps: number;
  ttlMs: number;
  now: number;
  stateAgeMs: number;
  sourceEvent?: { id: string; receivedAt: number };
  details: Record<string, unknown>;
}

/** The opportunity of an order, or undefined when the pool's math refuses it (the reason). */
export function orderOpportunity(r: OrderRequest): TradeOpportunity | string {
  const pool = r.loaded.pool;
  const aToB = pool.tokenA === r.inputMint;
  const outputMint = aToB ? pool.tokenB : pool.tokenA;
  const q = quoteSwap(pool, { aToB, mode: 'ExactIn', amount: r.amount }, r.loaded.context, r.loaded.transferFees);
  if (!q.ok) return q.reason;
  if (q.amountOut === 0n) return 'zero_output';
  const quotedFees = LAMPORTS_PER_SIGNATURE;
  const minimumOutput = (q.amountOut * BigInt(10_000 - r.slippageBps)) / 10_000n;
  const op: TradeOpportunity = {
    version: TRADE_OPPORTUNITY_VERSION,
    id: r.id,
    strategy: r.strategy,
    strategyId: r.strategyId,
    createdAt: r.now,
    expiresAt: r.now + r.ttlMs,
    slot: r.loaded.slot,
    stateAgeMs: r.stateAgeMs,
    side: r.side,
    inputMint: r.inputMint,
    outputMint,
    inputAmount: q.amountIn,
    expectedOutput: q.amountOut,
    minimumOutput,
    expectedProfit: 0n,
    profitMint: outputMint,
    flashLoan: false,
    costs: { poolFees: [q.fee], quotedFees, flashLoanFee: 0n, tip: 0n, total: quotedFees },
    route: [
      {
        step: 0,
        pool: r.loaded.address,
        dex: r.loaded.dex,
        inputMint: r.inputMint,
        outputMint,
        inputAmount: q.amountIn,
        outputAmount: q.amountOut,
        fee: q.fee,
        feeMint: q.feeInOutput === true ? outputMint : r.inputMint,
        priceImpact: q.priceImpact,
        slot: r.loaded.slot,
      },
    ],
    details: r.details,
  };
  if (r.sourceEvent !== undefined) op.sourceEvent = r.sourceEvent;
  return op;
}
