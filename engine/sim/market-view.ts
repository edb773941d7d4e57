import type { DecodedPool, Dex, PoolTransferFees, SwapContext } from '../dex/index.js';

/**
 * The simulator's market as its quote API and tests see it (types only): the tokens, and every
 * pool's current decoded state with the extra accounts (tick arrays, bin arrays) its swaps need.
 * The chain (engine/sim/chain.ts) implements it; states are those of the latest processed slot.
 */

export interface SimToken {
  mint: string;
  symbol: string;
  decimals: number;
  /** Reference price in USD per whole token: the oracle of the simulated market. */
  referencePriceUsd: number;
  /** The mint's owner when it is not the SPL Token program: Token-2022. */
  programId?: string;
}

export interface SimPoolView {
  address: string;
  dex: Dex;
  /** The DEX label an aggregator's route plan shows, e.g. `Raydium`, `Raydium CLMM`, `Meteora DLMM`, `Whirlpool`. */
  label: string;
  /** The decoded state, exactly what the engine's decoders read from the pool's account now. */
  pool: DecodedPool;
  /** Tick arrays or bin arrays of the pool (all of them: the simulator knows its whole state). */
  ctx: SwapContext;
  /**
   * For a pool with a Token-2022 mint that charges transfer fees: both mints' TransferFeeConfig (as
   * decoded from the mint accounts) and the epoch of the next block. Quote with
   * `quoteSwap(pool, req, ctx, transferFees)` for what the trader sends and receives.
   */
  transferFees?: PoolTransferFees;
}

export interface MarketView {
  tokens(): readonly SimToken[];
  token(mint: string): SimToken | undefined;
  pools(): readonly SimPoolView[];
  pool(address: string): SimPoolView | undefined;
  /** Pools trading the two mints, in either order. */
  poolsForPair(mintX: string, mintY: string): readonly SimPoolView[];
  /** The newest processed slot. */
  slot(): bigint;
}
