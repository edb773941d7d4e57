import { Dex } from '../../dex/index.js';
import type { ProgramHandler } from '../invoke-context.js';
import { createSwapProgram, decodeSwapData } from '../swap-program.js';
import { IxError } from '../tx-errors.js';
import { meteoraDlmmSwap } from './meteora-dlmm.js';
import { orcaWhirlpoolSwap } from './orca-whirlpool.js';
import { raydiumAmmV4Swap } from './raydium-amm-v4.js';
import { raydiumClmmSwap } from './raydium-clmm.js';
import { AnchorError, anchorFail } from './program-support.js';

/**
 * A DEX program of the simulated chain: the simulator's own swap format (swap-program.ts: tag 9,
 * 19 bytes, flags 0/1), which the generated flow uses, and the program's real swap instructions
 * (this folder). Data that is neither fails as the real program fails on an unknown instruction:
 * Anchor's InstructionFallbackNotFound for the three Anchor programs, InvalidInstructionData for
 * AMM v4.
 */

const REAL: Readonly<Record<Dex, (ctx: Parameters<ProgramHandler>[0]) => ReturnType<ProgramHandler> | undefined>> = {
  [Dex.Amm]: raydiumAmmV4Swap,
  [Dex.Clmm]: raydiumClmmSwap,
  [Dex.Whirlpool]: orcaWhirlpoolSwap,
  [Dex.Dlmm]: meteoraDlmmSwap,
};

export function createDexProgram(dex: Dex): ProgramHandler {
  const own = createSwapProgram(dex);
  const real = REAL[dex];
  return (ctx) => {
    if (decodeSwapData(ctx.data) !== null) return own(ctx);
    const result = real(ctx);
    if (result !== undefined) return result;
    return dex === Dex.Amm ? IxError.InvalidInstructionData : anchorFail(ctx, AnchorError.InstructionFallbackNotFound);
  };
}
