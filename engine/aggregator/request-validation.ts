/**
 * Validation of the aggregator's requests by the rules written in quote.proto (BatchQuoteRequest,
 * QuoteRequest): 1 to 1,000 pairs, base58 public-key mints, different mints, amount a u64 > 0,
 * exact in (the aggregator does not merge exact-out quotes), slippage 0 to 10,000 bps. A violation is TpError(TP_ERR_BAD_PARAMETER) naming the field; the gRPC
 * server answers it with INVALID_ARGUMENT.
 */
import { isPubkey } from '../chain/index.js';
import { ErrorCode, TpError } from '../errors.js';
import { WireSwapMode, type WireBatchQuoteRequest, type WirePairAmount, type WireQuoteRequest } from '../quote/index.js';
import { pairId } from './swap-route-event.js';

export const MAX_PAIRS_PER_REQUEST = 1000;
export const MAX_SLIPPAGE_BPS = 10_000;
/** quote.proto: 0 means the server's default; below 10 is raised to 10. */
export const DEFAULT_UPDATE_INTERVAL_MS = 1000;
export const MIN_UPDATE_INTERVAL_MS = 10;

const U64_MAX = (1n << 64n) - 1n;

/** One validated pair: the wire form plus its pairID and the amount as bigint. */
export interface PairKey {
  pairId: string;
  inputMint: string;
  outputMint: string;
  amount: bigint;
}

export interface ValidBatchRequest {
  /** Deduplicated by pairID, in request order. */
  pairs: PairKey[];
  slippageBps: number;
  updateIntervalMs: number;
}

function bad(parameter: string, message: string): TpError {
  return new TpError(ErrorCode.BadParameter, `${parameter}: ${message}`, { context: { parameter } });
}

function validPair(field: string, p: WirePairAmount | WireQuoteRequest | null | undefined, amount: unknown): PairKey {
  if (p === null || p === undefined) throw bad(field, 'missing');
  // The aggregator merges exact-in quotes only: an exact-out pair is refused, not quoted the wrong way.
  const mode = (p as Partial<WirePairAmount>).swapMode;
  if (mode !== undefined && mode !== WireSwapMode.Unspecified && mode !== WireSwapMode.ExactIn) {
    throw bad(`${field}.swap_mode`, `${String(mode)} is not served by the aggregator (exact in only)`);
  }
  if (!isPubkey(p.inputMint)) throw bad(`${field}.input_mint`, 'not a base58 public key');
  if (!isPubkey(p.outputMint)) throw bad(`${field}.output_mint`, 'not a base58 public key');
  if (p.inputMint === p.outputMint) throw bad(`${field}.output_mint`, 'same as input_mint');
  let value: bigint;
  try {
    value = BigInt(String(amount));
  } catch {
    throw bad(`${field}.amount`, 'not an integer');
  }
  if (value <= 0n || value > U64_MAX) throw bad(`${field}.amount`, 'must be > 0 and a u64');
  return { pairId: pairId(p.inputMint, p.outputMint, value), inputMint: p.inputMint, outputMint: p.outputMint, amount: value };
}

function validSlippage(field: string, bps: unknown): number {
  const n = Number(bps ?? 0);
  if (!Number.isInteger(n) || n < 0 || n > MAX_SLIPPAGE_BPS) throw bad(field, `must be 0 to ${MAX_SLIPPAGE_BPS}`);
  return n;
}

/** BatchQuoteRequest of StreamAggregatedQuotes. */
export function validateBatchRequest(request: WireBatchQuoteRequest | null | undefined): ValidBatchRequest {
  const pairs = request?.pairs ?? [];
  if (pairs.length === 0) throw bad('pairs', 'at least one pair is required');
  if (pairs.length > MAX_PAIRS_PER_REQUEST) throw bad('pairs', `at most ${MAX_PAIRS_PER_REQUEST} pairs, got ${pairs.length}`);
  const seen = new Set<string>();
  const out: PairKey[] = [];
  for (let i = 0; i < pairs.length; i++) {
    const key = validPair(`pairs[${i}]`, pairs[i], pairs[i]?.amount);
    if (seen.has(key.pairId)) continue; // quote.proto: entries with the same pairID are quoted once
    seen.add(key.pairId);
    out.push(key);
  }
  const interval = Number(request?.updateIntervalMs ?? 0);
  const updateIntervalMs = interval === 0 ? DEFAULT_UPDATE_INTERVAL_MS : Math.max(MIN_UPDATE_INTERVAL_MS, interval);
  return { pairs: out, slippageBps: validSlippage('slippage_bps', request?.slippageBps), updateIntervalMs };
}

/** QuoteRequest of GetAggregatedQuote (and ConfidenceRequest.quote). */
export function validateQuoteRequest(request: WireQuoteRequest | null | undefined, field = 'request'): { pair: PairKey; slippageBps: number } {
  const pair = validPair(field, request, request?.amount);
  return { pair, slippageBps: validSlippage(`${field === 'request' ? '' : `${field}.`}slippage_bps`, request?.slippageBps) };
}
