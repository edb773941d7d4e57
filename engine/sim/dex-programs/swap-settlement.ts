import {
  SwapMode,
  type DecodedPool,
  type SwapQuote,
} from '../../dex/index.js';
import type { AccountRecord } from '../chain-backend.js';
import type { InvokeContext } from '../invoke-context.js';
import { writePoolState, type ArrayAccount } from '../swap-program.js';
import type { quoteDlmmWithBins } from '../../dex/index.js';
import type { InstructionErrorValue } from '../tx-errors.js';
import { transferTokens } from './program-support.js';

/**
 * The end of every real-format swap once the quote passed its checks: the two token transfers
 * (user → input vault signed by the user, output vault → user signed by the pool's authority) and
 * the pool's new state written back (swap-program.ts writePoolState: price, tick and liquidity;
 * DLMM active bin, volatility, protocol fees and bins).
 */
export interface Settlement {
  ctx: InvokeContext;
  /** Instruction positions. */
  userIn: number;
  userOut: number;
  vaultIn: number;
  vaultOut: number;
  /** Signs the input transfer. */
  user: string;
  /** Owner of the vaults (the program signs for it). */
  poolAuthority: string;
  amountIn: bigint;
  amountOut: bigint;
  poolIndex: number;
  poolRecord: AccountRecord;
  /** The pool as decoded from its account (without an AmmConfig's fee). */
  decoded: DecodedPool;
  aToB: boolean;
  quote: SwapQuote;
  dlmm?: ReturnType<typeof quoteDlmmWithBins>;
  arrays: readonly ArrayAccount[];
}

export function settleSwap(s: Settlement): InstructionErrorValue | null {
  const err =
    transferTokens(s.ctx, s.userIn, s.vaultIn, s.user, s.amountIn) ?? transferTokens(s.ctx, s.vaultOut, s.userOut, s.poolAuthority, s.amountOut);
  if (err !== null) return err;
  const written = writePoolState(s.poolRecord, s.decoded, s.aToB, s.quote, s.dlmm, s.ctx, s.arrays, s.poolIndex);
  if (written === null && s.ctx.collectingLogs) s.ctx.log(`swap: in ${s.quote.amountIn} out ${s.quote.amountOut} fee ${s.quote.fee}`);
  return written;
}

export function modeOf(exactIn: boolean): SwapMode {
  return exactIn ? SwapMode.ExactIn : SwapMode.ExactOut;
}
