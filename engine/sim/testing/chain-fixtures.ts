import { keypairFromSeed, type Keypair } from '../../chain/transaction-builder.js';
import { SwapMode, quoteDlmmWithBins, quoteSwap, type DecodedPool, type Dex, type DlmmPool, type SwapResult } from '../../dex/index.js';
import type { Trader } from '../actors.js';
import type { LookupTableExtension } from '../address-lookup-tables.js';
import { SimChain, type SimChainOptions } from '../chain.js';
import { USDC_MINT, WSOL_MINT } from '../known-accounts.js';
import type { SimPoolInfo } from '../pool-genesis.js';
import { SimRandom } from '../prng.js';

/** Test support: chains, swap transactions in the documented format, quotes on the chain's view. */

/** A manual chain (no clock); no generated flow unless `txRate` is given. */
export function testChain(options: Partial<SimChainOptions> = {}): SimChain {
  return new SimChain({ seed: 3, manual: true, txRate: 0, tokens: 4, poolsPerKind: 2, ...options });
}

export function solUsdcPool(chain: SimChain, dex: Dex): SimPoolInfo {
  const view = chain.pools().find(
    (p) => p.dex === dex && new Set([p.pool.tokenA, p.pool.tokenB]).has(WSOL_MINT) && new Set([p.pool.tokenA, p.pool.tokenB]).has(USDC_MINT),
  )!;
  return chain.poolInfo(view.address)!;
}

export function trader(chain: SimChain, i = 0): Trader {
  return chain.genesis.actors.traders[i]!;
}

export { currentLookupTables, swapTransaction, type SwapArgs } from '../swap-transaction.js';

/** The tables a router would compile a swap on `pool` with: the pool's table, then the shared one. */
export function poolLookupTables(chain: SimChain, pool: string): string[] {
  const own = chain.lookupTableOf(pool);
  const shared = chain.lookupTableAddresses()[0]!;
  return own === undefined ? [shared] : [own, shared];
}

/**
 * Appends a pool's swap accounts (the pool address first, then vaults, AmmConfig, arrays) to a
 * lookup table, default the shared table (which holds no pool at genesis), as a router adding a
 * new pool to its table would. A swap compiled with that table first then loads the pool through
 * the new indexes (see SwapArgs.lookupTables).
 */
export function addPoolToLookupTable(chain: SimChain, pool: string, table = chain.lookupTableAddresses()[0]!): LookupTableExtension {
  return chain.addPoolToLookupTable(pool, table);
}

/**
 * The quote the next slot's execution must match: the chain's view at the next block time, with
 * the pool's transfer fees at the next block's epoch (amounts the trader sends and receives).
 */
export function quoteOnChain(chain: SimChain, info: SimPoolInfo, aToB: boolean, exactIn: boolean, amount: bigint): SwapResult {
  const view = chain.pool(info.address)!;
  const req = { aToB, mode: exactIn ? SwapMode.ExactIn : SwapMode.ExactOut, amount };
  if (view.pool.dex === 'dexb_dlmm' && view.transferFees === undefined) return quoteDlmmWithBins(view.pool as DlmmPool, req, view.ctx);
  return quoteSwap(view.pool as DecodedPool, req, view.ctx, view.transferFees);
}

/** A keypair no genesis account knows. */
export function strangerKeypair(seed = 1): Keypair {
  return keypairFromSeed(new SimRandom(seed).bytes(32));
}

/**
 * The accounts that hold a pool's tradable state: the pool account, and for a Raydium AMM v4 pool
 * its two vaults instead (AmmInfo holds no reserves: a swap changes only the vaults).
 */
export function poolStateAddresses(info: SimPoolInfo): string[] {
  return info.dex === 'dexa_amm' ? [info.vaultA, info.vaultB] : [info.address];
}

/** Whether a swap moved the pool since genesis: any of its state accounts differs. */
export function poolMovedSinceGenesis(chain: SimChain, info: SimPoolInfo): boolean {
  return poolStateAddresses(info).some((address) => !Buffer.from(chain.getAccount(address)!.data).equals(Buffer.from(chain.genesis.accounts.get(address)!.data)));
}
