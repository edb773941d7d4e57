/**
 * Shared constants of the simulator's aggregator-style quote API (leaf module: type imports only).
 */
import type { Dex } from '../../dex/index.js';

/** Wrapped SOL. */
export const WSOL_MINT = 'So11111111111111111111111111111111111111112';
/** USDC (mainnet mint). */
export const USDC_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';

/** The intermediates `restrictIntermediateTokens=true` (the default) allows, in search order. */
export const RESTRICTED_INTERMEDIATES: readonly string[] = [WSOL_MINT, USDC_MINT];

/** Paths the API answers on: bare, Swap API v1 (`/swap/v1`) and v6 (`/v6`) bases. */
export const QUOTE_API_PATHS: readonly string[] = ['/quote', '/swap/v1/quote', '/v6/quote'];

export const DEFAULT_SLIPPAGE_BPS = 50;
/** Basis points in one whole: slippage and platform fees are at most this. */
export const BPS_DENOMINATOR = 10_000;
export const MAX_HOPS = 3;
/** The real API's default `maxAccounts`. */
export const DEFAULT_MAX_ACCOUNTS = 64;

export const U64_MAX = (1n << 64n) - 1n;
export const U16_MAX = 0xffff;

/**
 * Rough account counts for `maxAccounts`, which the real API also treats as a rough budget: what a
 * route needs besides its hops (aggregator program, token programs, user authority, source and
 * destination token accounts, platform fee account, event authority), and what one hop of each
 * DEX adds (its swap instruction's accounts, including the usual tick or bin arrays).
 */
export const ROUTE_BASE_ACCOUNTS = 8;
export const HOP_ACCOUNTS: Readonly<Record<Dex, number>> = {
  dexa_amm: 18,
  dexa_clmm: 14,
  dexb_dlmm: 18,
  dexc_whirlpool: 12,
};
