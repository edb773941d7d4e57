import { buildFittedTransaction, type FittedTransaction } from '../../chain/index.js';
import { loadConfig } from '../../config/index.js';
import { Dex, SwapMode, buildSwapRouteTransaction, planSwapRoute, swapInstructionFor, type SwapRoutePlan } from '../../dex/index.js';
import { createLogger } from '../../obs/logger.js';
import type { Trader } from '../../sim/actors.js';
import type { SimChain } from '../../sim/chain.js';
import { USDC_MINT, WSOL_MINT } from '../../sim/known-accounts.js';
import { simSchema } from '../../sim/sim-config.js';
import { createSimulator, type SimEndpoints, type Simulator } from '../../sim/simulator.js';
import { chainSwapPool } from '../../sim/testing/real-swaps.js';
import type { TradeSubmission } from '../submission.js';

/**
 * Test support of the submitters: a running simulator (fast slots, no generated flow) with its
 * servers on port 0, real swaps on its SOL/USDC AMM pool signed by genesis traders, and the
 * balances the chain holds for a trader.
 */

export const SOL = 1_000_000_000n;
export const TRADE_MINTS = [WSOL_MINT, USDC_MINT] as const;

/** The chain of these tests: seed, market size, no generated flow. */
export const SUBMITTER_SIM_MARKET = { seed: 21, tokens: 2, poolsPerKind: 1 } as const;

/** The `tidepool sim` flags of that chain with `slotMs` slots, every server on port 0. */
export function submitterSimFlags(slotMs: number): Record<string, string> {
  return {
    seed: String(SUBMITTER_SIM_MARKET.seed),
    'rpc-port': '0',
    'ws-port': '0',
    'stream-port': '0',
    'geyser-port': '0',
    'http-port': '0',
    'tx-rate': '0',
    'slot-ms': String(slotMs),
    tokens: String(SUBMITTER_SIM_MARKET.tokens),
    'pools-per-kind': String(SUBMITTER_SIM_MARKET.poolsPerKind),
  };
}

export async function startSimulator(slotMs = 25): Promise<{ sim: Simulator; endpoints: SimEndpoints }> {
  const config = loadConfig(simSchema, { env: {}, flags: submitterSimFlags(slotMs) }).values;
  const sim = createSimulator(config, { logger: createLogger({ name: 'sim-test', level: 'silent' }) });
  const endpoints = await sim.start();
  return { sim, endpoints };
}

export function traderOf(chain: SimChain, i: number): Trader {
  return chain.genesis.actors.traders[i]!;
}

function ammPool(chain: SimChain): string {
  return chain.poolsForPair(WSOL_MINT, USDC_MINT).find((p) => p.dex === Dex.Amm)!.address;
}

/** A SOL → USDC swap of `amount` lamports on the AMM pool, signed by `trader` with the confirmed blockhash. */
export function swapSubmission(chain: SimChain, trader: Trader, amount: bigint, extra: Partial<TradeSubmission> = {}): { submission: TradeSubmission; plan: SwapRoutePlan } {
  const { blockhash, lastValidBlockHeight } = chain.latestBlockhash('confirmed');
  const plan = planSwapRoute({ owner: trader.keypair.address, inputMint: WSOL_MINT, hops: [chainSwapPool(chain, ammPool(chain))], mode: SwapMode.ExactIn, amount, slippageBps: 100 });
  const transaction = buildSwapRouteTransaction(plan, { payer: trader.keypair, recentBlockhash: blockhash, computeUnitPrice: 1_000n });
  return { submission: submission(trader, transaction, blockhash, lastValidBlockHeight, extra), plan };
}

/** A swap that asks one atom more than the pool gives: the program fails it (slippage) wherever it runs. */
export function slippageFailingSubmission(chain: SimChain, trader: Trader, amount: bigint): TradeSubmission {
  const { blockhash, lastValidBlockHeight } = chain.latestBlockhash('confirmed');
  const pool = chainSwapPool(chain, ammPool(chain));
  const plan = planSwapRoute({ owner: trader.keypair.address, inputMint: WSOL_MINT, hops: [pool], mode: SwapMode.ExactIn, amount, slippageBps: 0 });
  const hop = plan.hops[0]!;
  const ix = swapInstructionFor({
    pool,
    aToB: hop.aToB,
    mode: SwapMode.ExactIn,
    amount: hop.amount,
    otherAmountThreshold: hop.quote.amountOut + 1n,
    owner: trader.keypair.address,
    tokenAccountA: trader.tokenAccounts.get(pool.state.pool.tokenA)!,
    tokenAccountB: trader.tokenAccounts.get(pool.state.pool.tokenB)!,
  });
  const transaction = buildFittedTransaction({ payer: trader.keypair, recentBlockhash: blockhash, instructions: [ix] });
  return submission(trader, transaction, blockhash, lastValidBlockHeight, {});
}

function submission(trader: Trader, transaction: FittedTransaction, blockhash: string, lastValidBlockHeight: bigint, extra: Partial<TradeSubmission>): TradeSubmission {
  return {
    opportunityId: `opp-${transaction.signature.slice(0, 8)}`,
    transaction,
    blockhash,
    lastValidBlockHeight,
    wallet: trader.keypair,
    mints: TRADE_MINTS,
    ...extra,
  };
}

export interface TraderBalances {
  lamports: bigint;
  sol: bigint;
  usdc: bigint;
}

/** What the chain holds for `trader` at `commitment`: lamports of its account, its WSOL and USDC token accounts. */
export function traderBalances(chain: SimChain, trader: Trader, commitment: 'processed' | 'confirmed' = 'confirmed'): TraderBalances {
  return {
    lamports: chain.getAccount(trader.keypair.address, commitment)?.lamports ?? 0n,
    sol: chain.getTokenBalance(trader.tokenAccounts.get(WSOL_MINT)!, commitment)?.amount ?? 0n,
    usdc: chain.getTokenBalance(trader.tokenAccounts.get(USDC_MINT)!, commitment)?.amount ?? 0n,
  };
}
