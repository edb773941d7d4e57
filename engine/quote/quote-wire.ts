/**
 * The messages of proto/tidepool/v1/quote.proto as loadTidepoolProto() reads and writes them
 * (camelCase fields, u64 and int64 as decimal strings, enums by name, absent messages as null when
 * read), and the proto's min_output_amount formula. The one definition shared by the local quote
 * service (engine/quote), the external quote service (engine/external) and the aggregator
 * (engine/aggregator, which adds aggregator.proto's messages in its wire-types.ts).
 *
 * Also the pairID rule of docs/architecture.md §3, which names a quote's pair on every side.
 *
 * A leaf: it imports only node:crypto, so every layer may use it.
 */
import { createHash } from 'node:crypto';

/**
 * docs/architecture.md §3: first 16 hex chars of SHA-256 of `inputMint:outputMint:amount` (amount in
 * decimal). An exact-out pair hashes `inputMint:outputMint:amount:ExactOut` (quote.proto), so the
 * two modes of one amount are two pairs; exact-in pairIDs are unchanged.
 */
export function pairId(inputMint: string, outputMint: string, amount: bigint, exactOut = false): string {
  const text = exactOut ? `${inputMint}:${outputMint}:${amount}:ExactOut` : `${inputMint}:${outputMint}:${amount}`;
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/** quote.proto `SwapMode` as the loader reads and writes it (UNSPECIFIED means exact in). */
export const WireSwapMode = {
  Unspecified: 'SWAP_MODE_UNSPECIFIED',
  ExactIn: 'SWAP_MODE_EXACT_IN',
  ExactOut: 'SWAP_MODE_EXACT_OUT',
} as const;
export type WireSwapMode = (typeof WireSwapMode)[keyof typeof WireSwapMode];

export const QuoteSourceName = {
  Unspecified: 'QUOTE_SOURCE_UNSPECIFIED',
  Local: 'QUOTE_SOURCE_LOCAL',
  External: 'QUOTE_SOURCE_EXTERNAL',
} as const;
export type QuoteSourceName = (typeof QuoteSourceName)[keyof typeof QuoteSourceName];

export interface WirePairAmount {
  inputMint: string;
  outputMint: string;
  /** u64, decimal: the input (exact in) or the output (exact out). */
  amount: string;
  /** Absent or UNSPECIFIED: exact in. */
  swapMode?: WireSwapMode;
}

export interface WireBatchQuoteRequest {
  pairs: WirePairAmount[];
  slippageBps: number;
  updateIntervalMs: number;
}

export interface WireQuoteRequest {
  inputMint: string;
  outputMint: string;
  amount: string;
  slippageBps: number;
}

export interface WireRouteHop {
  pool: string;
  dex: string;
  inputMint: string;
  outputMint: string;
  inAmount: string;
  outAmount: string;
  fee: string;
  slot: string;
  /** Absent when the provider does not know it (proto3 optional). */
  poolAgeSeconds?: number;
}

export interface WireQuoteError {
  code: string;
  grpcStatus: number;
  message: string;
}

/** A Quote as read (every field present; `error` null when unset). */
export interface WireQuote {
  pairId: string;
  inputMint: string;
  outputMint: string;
  inputAmount: string;
  outputAmount: string;
  minOutputAmount: string;
  slippageBps: number;
  priceImpact: number;
  route: WireRouteHop[];
  slot: string;
  contextSlot: string;
  stateAgeMs: number;
  source: string;
  origin: string;
  provider: string;
  providerUptime?: number;
  quotedAtUnixMs: string;
  receivedAtUnixMs: string;
  routeHash: string;
  error: WireQuoteError | null;
  /** The request's mode; UNSPECIFIED from an upstream that predates it (exact in). */
  swapMode: WireSwapMode;
  /** Exact out: input_amount plus slippage, rounded up; exact in: input_amount. '0' with an error. */
  maxInputAmount: string;
}

/**
 * A Quote as an upstream quote service (local or external) writes it: without the fields the
 * aggregator stamps on receipt (received_at_unix_ms, route_hash), and `error` absent unless the
 * pair could not be quoted.
 */
export type UpstreamQuote = Omit<WireQuote, 'receivedAtUnixMs' | 'routeHash' | 'error'> & { error?: WireQuoteError };

/** Least output after slippage, quote.proto's formula: floor(out × (10,000 − bps) / 10,000). */
export function minOutputAmount(outputAmount: bigint, slippageBps: number): bigint {
  return (outputAmount * BigInt(10_000 - slippageBps)) / 10_000n;
}

const U64_MAX = (1n << 64n) - 1n;

/**
 * Most input after slippage, quote.proto's formula: ceil(in × (10,000 + bps) / 10,000), at most the
 * u64 maximum (a swap instruction's amount is a u64). Rounded up, as the minimum output is rounded
 * down: the tolerance given is never below the one asked for.
 */
export function maxInputAmount(inputAmount: bigint, slippageBps: number): bigint {
  const max = (inputAmount * BigInt(10_000 + slippageBps) + 9_999n) / 10_000n;
  return max > U64_MAX ? U64_MAX : max;
}
