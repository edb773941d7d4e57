/**
 * Constants of the public swap API's quote (Jupiter Swap API v1 `GET /quote`), shared by the
 * simulator's quote API (engine/sim/quote-api) and tidepool's compatible path (engine/quote
 * `GET /swap/v1/quote`).
 */

import { USDC_MINT, WSOL_MINT } from '../chain/index.js';

export { USDC_MINT, WSOL_MINT };

/** The intermediates `restrictIntermediateTokens=true` (the default) allows, in search order. */
export const RESTRICTED_INTERMEDIATES: readonly string[] = [WSOL_MINT, USDC_MINT];

export const DEFAULT_SLIPPAGE_BPS = 50;
/** Basis points in one whole: slippage and platform fees are at most this. */
export const BPS_DENOMINATOR = 10_000;
/** The real API's default `maxAccounts`. */
export const DEFAULT_MAX_ACCOUNTS = 64;

export const U64_MAX = (1n << 64n) - 1n;
export const U16_MAX = 0xffff;
