import { randomUUID } from 'node:crypto';

import { ErrorCode, TpError } from '../../errors.js';
import { Dex, SwapMode, buildSwapRouteTransaction, createDecoderRegistry, planSwapRoute } from '../../dex/index.js';
import type { TradeOpportunity } from '../../messages/index.js';
import { orderOpportunity } from '../../planner/index.js';
import { RpcPoolLoader, swapPoolOfLoaded, type LoadedPool } from '../../pools/index.js';
import { AccountFetcher } from '../../rpc/account-fetcher.js';
import { ChainClient } from '../../rpc/index.js';
import { RpcClient } from '../../rpc/rpc-client.js';
import type { Trader } from '../../sim/actors.js';
import type { Genesis } from '../../sim/genesis.js';
import { USDC_MINT, WSOL_MINT } from '../../sim/known-accounts.js';

/**
 * What submitter-sim.ts and engine/app/testing/executor.ts build from an in-process chain, built
 * over a simulator's JSON-RPC instead (a simulator in another process, sim-process.ts): the
 * SOL/USDC AMM pool read and decoded as an executor reads it, a DCA sell on it as a
 * TradeOpportunity, and signed swaps on it.
 */
export class SimRpcTrades {
  /** The wrapped SOL / USDC AMM pool of the genesis. */
  readonly ammPool: string;
  private readonly registry = createDecoderRegistry();
  private readonly rpc: RpcClient;
  private readonly loader: RpcPoolLoader;
  private readonly chain: ChainClient;

  constructor(rpcUrl: string, genesis: Genesis) {
    const pool = genesis.market.pools.find((p) => p.dex === Dex.Amm && new Set([p.tokenA.mint, p.tokenB.mint, WSOL_MINT, USDC_MINT]).size === 2);
    if (pool === undefined) throw new TpError(ErrorCode.NotFound, 'the genesis has no SOL/USDC AMM pool');
    this.ammPool = pool.address;
    this.rpc = new RpcClient({ endpoints: [rpcUrl] });
    this.loader = new RpcPoolLoader({ fetcher: new AccountFetcher(this.rpc), registry: this.registry });
    this.chain = new ChainClient({ url: rpcUrl });
  }

  /** The AMM pool as the chain holds it now (processed). */
  async loadPool(): Promise<LoadedPool> {
    const [result] = await this.loader.load([this.ammPool]);
    if (result === undefined || !result.ok) throw new TpError(ErrorCode.Unavailable, `pool ${this.ammPool} not loaded: ${result?.ok === false ? result.error.message : 'no result'}`);
    return result.value;
  }

  /** A DCA sell of `amount` wrapped SOL on the AMM pool (direct path), quoted on its current state. */
  async orderOpportunity(amount: bigint): Promise<TradeOpportunity> {
    const loaded = await this.loadPool();
    const now = Date.now();
    const op = orderOpportunity({ id: randomUUID(), strategy: 'dca', strategyId: 'dca-test', side: 'sell', loaded, inputMint: WSOL_MINT, amount, slippageBps: 50, ttlMs: 30_000, now, stateAgeMs: 0, details: {} });
    if (typeof op === 'string') throw new TpError(ErrorCode.Internal, `no order on ${this.ammPool}: ${op}`);
    return op;
  }

  /**
   * Signed SOL → USDC swaps of `amounts` lamports on the AMM pool by `trader`, on one read of the
   * pool and the confirmed blockhash (distinct amounts: distinct signatures), as wire bytes.
   */
  async swapTransactions(trader: Trader, amounts: readonly bigint[]): Promise<Uint8Array[]> {
    const pool = swapPoolOfLoaded(await this.loadPool(), this.registry);
    const { blockhash } = await this.chain.getLatestBlockhash();
    return amounts.map((amount) => {
      const plan = planSwapRoute({ owner: trader.keypair.address, inputMint: WSOL_MINT, hops: [pool], mode: SwapMode.ExactIn, amount, slippageBps: 100 });
      return buildSwapRouteTransaction(plan, { payer: trader.keypair, recentBlockhash: blockhash, computeUnitPrice: 1_000n }).bytes;
    });
  }

  async close(): Promise<void> {
    await this.chain.close();
    await this.rpc.close();
  }
}
