import { ErrorCode, TpError } from '../errors.js';
import { ammV4Keys } from './amm/amm-info.js';
import { buildSwapState, swapAccountAddresses, type FetchedAccount, type PoolAccountsOptions } from './pool-accounts.js';
import type { DecoderRegistry } from './registry.js';
import type { SwapPool } from './swap-instruction.js';
import { Dex } from './types.js';

/**
 * A pool ready for a swap instruction and its quote (SwapPool), from its accounts as read from
 * the chain: the pool account decoded by its owner, then the accounts its quote needs (tick or bin
 * arrays, Raydium's AmmConfig; swapAccountAddresses) decoded into its context, and for dexa_amm
 * the AmmInfo keys. Two reads: the pool, then its context accounts (`loadSwapPool` does both over
 * any getMultipleAccounts).
 */

export interface SwapPoolOptions extends PoolAccountsOptions {
  /** Unix seconds (DLMM volatility, Raydium dynamic fee); default the pool's last update. */
  nowSeconds?: bigint;
  /** Token programs of token A / B; default SPL Token. */
  tokenProgramA?: string;
  tokenProgramB?: string;
}

/** The pool account decoded, and the addresses of the accounts its swap state needs. */
export function swapPoolPlan(registry: DecoderRegistry, address: string, account: FetchedAccount, options: PoolAccountsOptions = {}) {
  const decoded = registry.decodeAccount(account.owner, account.data, address);
  if (decoded.kind !== 'pool') throw new TpError(ErrorCode.AccountInvalid, `${address} is a ${decoded.kind}, not a pool`, { context: { address } });
  const programId = account.owner;
  return { pool: decoded.pool, programId, addresses: swapAccountAddresses(decoded.pool, programId, options) };
}

/** The SwapPool from the pool account and the context accounts read at `plan.addresses`. */
export function swapPoolFrom(
  registry: DecoderRegistry,
  address: string,
  account: FetchedAccount,
  contextAccounts: readonly (FetchedAccount | null | undefined)[],
  options: SwapPoolOptions = {},
): SwapPool {
  const plan = swapPoolPlan(registry, address, account, options);
  const state = buildSwapState(registry, plan.pool, plan.addresses, contextAccounts, options.nowSeconds);
  const pool: SwapPool = { programId: plan.programId, state };
  if (plan.pool.dex === Dex.Amm) pool.ammKeys = ammV4Keys(plan.programId, address, account.data);
  if (options.tokenProgramA !== undefined) pool.tokenProgramA = options.tokenProgramA;
  if (options.tokenProgramB !== undefined) pool.tokenProgramB = options.tokenProgramB;
  return pool;
}

/** Reads a pool and its context through `getMultipleAccounts` (request order, null when absent). */
export async function loadSwapPool(
  registry: DecoderRegistry,
  address: string,
  getMultipleAccounts: (addresses: readonly string[]) => Promise<readonly (FetchedAccount | null)[]>,
  options: SwapPoolOptions = {},
): Promise<SwapPool> {
  const [account] = await getMultipleAccounts([address]);
  if (account === null || account === undefined) throw new TpError(ErrorCode.NotFound, `pool ${address} not found`, { context: { address } });
  const plan = swapPoolPlan(registry, address, account, options);
  const context = plan.addresses.length === 0 ? [] : await getMultipleAccounts(plan.addresses);
  return swapPoolFrom(registry, address, account, context, options);
}
