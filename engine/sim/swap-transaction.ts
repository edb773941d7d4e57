/**
 * Signed swap transactions in the simulator's documented swap format (swap-program.ts), paid by a
 * genesis trader, as tests and the engine's latency probes (sim-worker.ts) send them. (The chain's
 * generated flow builds its own, in flow.ts.)
 */
import { buildTransaction, type InstructionInput, type LookupTableInput } from '../chain/index.js';
import type { Trader } from './actors.js';
import type { SimChain } from './chain.js';
import type { SimPoolInfo } from './pool-genesis.js';
import { swapAccountsOf, swapArrays, swapInstruction } from './swap-program.js';
import { ErrorCode, TpError } from '../errors.js';

export interface SwapArgs {
  aToB: boolean;
  exactIn: boolean;
  amount: bigint;
  threshold: bigint;
  /** Arrays to pass; default: the three from the current one in the swap's direction. */
  arrays?: string[];
  /** Instructions before the swap (compute budget, tips). */
  before?: InstructionInput[];
  blockhash?: string;
  /**
   * Lookup tables to compile a v0 transaction with, in order of preference (each account is loaded
   * through the first that holds it), read from the chain's current state. Legacy when absent.
   */
  lookupTables?: readonly string[];
}

/** A signed swap transaction of the simulator's documented format, paid by the trader. */
export function swapTransaction(chain: SimChain, who: Trader, info: SimPoolInfo, args: SwapArgs): Uint8Array {
  const pool = chain.pool(info.address)!.pool;
  const ix = swapInstruction(
    swapAccountsOf(info, who.keypair.address, who.tokenAccounts.get(info.tokenA.mint)!, who.tokenAccounts.get(info.tokenB.mint)!, args.arrays ?? swapArrays(info, pool, args.aToB)),
    { amount: args.amount, otherAmountThreshold: args.threshold, aToB: args.aToB, exactIn: args.exactIn },
  );
  return buildTransaction({
    payer: who.keypair,
    instructions: [...(args.before ?? []), ix],
    recentBlockhash: args.blockhash ?? chain.latestBlockhash().blockhash,
    ...(args.lookupTables !== undefined ? { lookupTables: currentLookupTables(chain, args.lookupTables) } : {}),
  });
}

/** The tables' current addresses as the transaction builder takes them. */
export function currentLookupTables(chain: SimChain, tables: readonly string[]): LookupTableInput[] {
  return tables.map((address) => {
    const state = chain.lookupTable(address);
    if (state === null) throw new TpError(ErrorCode.AccountInvalid, `${address} is not a lookup table`, { context: { address } });
    return { address, addresses: state.addresses };
  });
}

