/**
 * Constants of the simulator's aggregator-style quote API (routing bounds, served paths).
 */
import type { Dex } from '../../dex/index.js';

// The public API's own constants (bounds, default slippage, mints) are engine/swap-api's.

/** Paths the API answers on: bare, Swap API v1 (`/swap/v1`) and v6 (`/v6`) bases. */
export const QUOTE_API_PATHS: readonly string[] = ['/quote', '/swap/v1/quote', '/v6/quote'];

export const MAX_HOPS = 3;

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
