/**
 * The body of a successful public swap API quote (Jupiter Swap API v1 `GET /quote`, reference
 * docs/wire-formats.md §7), as both of tidepool's servers of it write it: the simulator's quote API
 * (engine/sim/quote-api) and the quote service's `GET /swap/v1/quote` (engine/quote). u64 amounts
 * are decimal strings, `priceImpactPct` a decimal-string fraction, `contextSlot` and `timeTaken`
 * (seconds) numbers, one route-plan step per hop (`percent: 100`: no split routes).
 */

/** One hop of a route plan. */
export interface SwapInfo {
  /** The pool's account. */
  ammKey: string;
  /** The DEX's label (dex-labels.ts). */
  label: string;
  inputMint: string;
  outputMint: string;
  inAmount: string;
  outAmount: string;
  /** The hop's DEX fee, in atoms of feeMint. */
  feeAmount: string;
  feeMint: string;
}

export interface RoutePlanStep {
  swapInfo: SwapInfo;
  /** Share of the amount through this step: always 100 (no split routes). */
  percent: number;
  /** `percent` in basis points (newer API versions); 10000. */
  bps?: number;
}

export interface PlatformFee {
  amount: string;
  feeBps: number;
}

export type SwapApiSwapMode = 'ExactIn' | 'ExactOut';

export interface QuoteResponse {
  inputMint: string;
  inAmount: string;
  outputMint: string;
  outAmount: string;
  /** ExactIn: the least output; ExactOut: the most input (slippage applied). */
  otherAmountThreshold: string;
  swapMode: SwapApiSwapMode;
  slippageBps: number;
  platformFee: PlatformFee | null;
  priceImpactPct: string;
  routePlan: RoutePlanStep[];
  contextSlot: number;
  timeTaken: number;
}

function clampFraction(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}

/** A fraction as plain decimal text, never in exponent notation ("0.00000012", not "1.2e-7"). */
export function formatFraction(x: number): string {
  const v = clampFraction(x);
  if (v === 0) return '0';
  // JavaScript switches to exponent notation below 1e-6; the real API (Rust) never does.
  if (v >= 1e-6) return String(v);
  const fixed = v.toFixed(20);
  let end = fixed.length;
  while (end > 0 && fixed.charCodeAt(end - 1) === 0x30 /* 0 */) end--;
  // Below 1e-20 nothing but zeros is left.
  return fixed.charCodeAt(end - 1) === 0x2e /* . */ ? '0' : fixed.slice(0, end);
}
