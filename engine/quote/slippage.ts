/**
 * Slippage tolerance of a quote (spec 02 `SlippageBps`): the bound the swap may accept, on the side
 * the request did not fix. Exact in: the least output, floor(out × (10,000 − bps) / 10,000). Exact
 * out: the most input, ceil(in × (10,000 + bps) / 10,000), at most the u64 maximum. The other bound
 * is the fixed amount itself. Both roundings give at least the tolerance asked for (quote.proto's
 * formulas, quote-wire.ts).
 */
import { SwapMode } from '../dex/index.js';
import { maxInputAmount, minOutputAmount } from './quote-wire.js';

/** Default of `slippageBps` when a request names none (SLIPPAGE_BPS). */
export const DEFAULT_SLIPPAGE_BPS = 50;
export const MAX_SLIPPAGE_BPS = 10_000;

export interface Slippage {
  /** 0 to 10,000 basis points. */
  readonly bps: number;
  /** Least output the swap may accept, atoms of the output mint. */
  readonly minOutputAmount: bigint;
  /** Most input the swap may take, atoms of the input mint. */
  readonly maxInputAmount: bigint;
  /** The two bounds in decimal, written once. */
  readonly minOutputText: string;
  readonly maxInputText: string;
}

/** The bounds of a `mode` quote of `inputAmount` for `outputAmount` at `bps`. */
export function slippageOf(mode: SwapMode, inputAmount: bigint, outputAmount: bigint, bps: number): Slippage {
  const exactIn = mode === SwapMode.ExactIn;
  const min = exactIn ? minOutputAmount(outputAmount, bps) : outputAmount;
  const max = exactIn ? inputAmount : maxInputAmount(inputAmount, bps);
  return { bps, minOutputAmount: min, maxInputAmount: max, minOutputText: min.toString(), maxInputText: max.toString() };
}
