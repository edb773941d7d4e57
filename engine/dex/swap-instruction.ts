import { TOKEN_PROGRAM_ID, type InstructionInput } from '../chain/index.js';
import { invalidArgument } from '../errors.js';
import type { AmmV4Keys } from './amm/amm-info.js';
import { ammV4SwapInstruction, type AmmV4MarketKeys } from './amm/swap-instruction.js';
import { clmmPoolSwapInstruction } from './clmm/swap-instruction.js';
import type { DlmmLbPair } from './dlmm/lb-pair.js';
import { dlmmPoolSwapInstruction } from './dlmm/swap-instruction.js';
import type { PoolSwapState } from './pool-accounts.js';
import { Dex, type SwapMode } from './types.js';
import { whirlpoolPoolSwapInstruction } from './whirlpool/swap-instruction.js';

/**
 * One entry point for the real swap instruction of any of the four DEX kinds (each protocol's
 * module documents its layout): Raydium AMM v4 SwapBaseInV2 / SwapBaseOutV2 (V1 with market keys),
 * Raydium CLMM swap_v2, Orca Whirlpool swap_v2, Meteora DLMM swap2 / swap_exact_out2.
 */

/** A pool as a swap instruction needs it. */
export interface SwapPool {
  /** The program that owns the pool. */
  programId: string;
  /**
   * Decoded with its address and ready to quote (pool-accounts.ts buildSwapState: Raydium CLMM
   * with its AmmConfig applied; DLMM decoded as the full LbPair).
   */
  state: PoolSwapState;
  /** dexa_amm only: the AmmInfo keys read from the pool account (amm/amm-info.ts ammV4Keys). */
  ammKeys?: AmmV4Keys;
  /** dexa_amm only: OpenBook market keys, to build the V1 instructions (17/18 accounts). */
  ammMarket?: AmmV4MarketKeys;
  /** Token programs of token A and B. Default SPL Token. */
  tokenProgramA?: string;
  tokenProgramB?: string;
}

export interface SwapLeg {
  pool: SwapPool;
  /** Token A in, token B out. */
  aToB: boolean;
  mode: SwapMode;
  /** ExactIn: the input; ExactOut: the output. */
  amount: bigint;
  /** ExactIn: the minimum output; ExactOut: the maximum input. */
  otherAmountThreshold: bigint;
  /** Signs and owns both token accounts. */
  owner: string;
  tokenAccountA: string;
  tokenAccountB: string;
}

/** The swap instruction of `leg`. Throws TpError ArgumentInvalid when the pool lacks what its kind needs. */
export function swapInstructionFor(leg: SwapLeg): InstructionInput {
  const { pool: swapPool, aToB } = leg;
  const pool = swapPool.state.pool;
  switch (pool.dex) {
    case Dex.Amm: {
      const keys = swapPool.ammKeys;
      if (keys === undefined) throw invalidArgument('leg.pool.ammKeys', null, "a dexa_amm swap needs the pool's AmmInfo keys");
      return ammV4SwapInstruction({
        keys,
        owner: leg.owner,
        userSource: aToB ? leg.tokenAccountA : leg.tokenAccountB,
        userDestination: aToB ? leg.tokenAccountB : leg.tokenAccountA,
        mode: leg.mode,
        amount: leg.amount,
        otherAmountThreshold: leg.otherAmountThreshold,
        ...(swapPool.ammMarket !== undefined ? { market: swapPool.ammMarket } : {}),
      });
    }
    case Dex.Clmm:
      return clmmPoolSwapInstruction({
        programId: swapPool.programId,
        pool,
        owner: leg.owner,
        tokenAccountA: leg.tokenAccountA,
        tokenAccountB: leg.tokenAccountB,
        aToB,
        mode: leg.mode,
        amount: leg.amount,
        otherAmountThreshold: leg.otherAmountThreshold,
      });
    case Dex.Whirlpool:
      return whirlpoolPoolSwapInstruction({
        programId: swapPool.programId,
        pool,
        owner: leg.owner,
        tokenAccountA: leg.tokenAccountA,
        tokenAccountB: leg.tokenAccountB,
        tokenProgramA: swapPool.tokenProgramA ?? TOKEN_PROGRAM_ID,
        tokenProgramB: swapPool.tokenProgramB ?? TOKEN_PROGRAM_ID,
        aToB,
        mode: leg.mode,
        amount: leg.amount,
        otherAmountThreshold: leg.otherAmountThreshold,
      });
    case Dex.Dlmm: {
      if (!('oracle' in pool)) throw invalidArgument('leg.pool.state.pool', pool.address ?? null, 'a dexb_dlmm swap needs the pair decoded as an LbPair (its oracle)');
      return dlmmPoolSwapInstruction({
        programId: swapPool.programId,
        pool: pool as DlmmLbPair,
        owner: leg.owner,
        tokenAccountA: leg.tokenAccountA,
        tokenAccountB: leg.tokenAccountB,
        tokenProgramA: swapPool.tokenProgramA ?? TOKEN_PROGRAM_ID,
        tokenProgramB: swapPool.tokenProgramB ?? TOKEN_PROGRAM_ID,
        aToB,
        mode: leg.mode,
        amount: leg.amount,
        otherAmountThreshold: leg.otherAmountThreshold,
      });
    }
  }
}
