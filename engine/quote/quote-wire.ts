/**
 * The messages of proto/tidepool/v1/quote.proto as loadTidepoolProto() reads and writes them
 * (camelCase fields, u64 and int64 as decimal strings, enums by name, absent messages as null when
 * read), and the proto's min_output_amount formula. The one definition shared by the local quote
 * service (engine/quote), the external quote service (engine/external) and the aggregator
 * (engine/aggregator, which adds aggregator.proto's messages in its wire-types.ts).
 *
 * Also the pairID rule of ARCHITECTURE §3, which names a quote's pair on every side.
 *
 * A leaf: it imports only node:crypto, so every layer may use it.
 */
import { createHash } from 'node:crypto';

/** ARCHITECTURE §3: first 16 hex chars of SHA-256 of `inputMint:outputMint:amount` (amount in decimal). */
export function pairId(inputMint: string, outputMint: string, amount: bigint): string {
  return createHash('sha256').update(`${inputMint}:${outputMint}:${amount}`).digest('hex').slice(0, 16);
}

export const QuoteSourceName = {
  Unspecified: 'QUOTE_SOURCE_UNSPECIFIED',
  Local: 'QUOTE_SOURCE_LOCAL',
  External: 'QUOTE_SOURCE_EXTERNAL',
} as const;
export type QuoteSourceName = (typeof QuoteSourceName)[keyof typeof QuoteSourceName];

export interface WirePairAmount {
  inputMint: string;
  outputMint: string;
  /** u64, decimal. */
  amount: string;
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
