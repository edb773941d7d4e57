/**
 * The wire side of `tidepool.v1.QuoteService.StreamBatchQuotes` (proto/tidepool/v1/quote.proto,
 * quote_service.proto) for the local quote service: validation of a BatchQuoteRequest, its error
 * Quote. The message types themselves are in quote-wire.ts; gRPC statuses come from the code table
 * (engine/error-status.ts).
 */
import { U64_MAX } from '../cache/index.js';
import { isPubkey } from '../chain/index.js';
import { SwapMode } from '../dex/index.js';
import { clientErrorOf } from '../error-status.js';
import { type QuoteFailure, MAX_SLIPPAGE_BPS, WireSwapMode, pairId, type UpstreamQuote, type WireBatchQuoteRequest, type WirePairAmount, type WireQuoteError } from '../quote/index.js';
import { ErrorCode, TpError } from '../errors.js';


/** BatchQuoteRequest.pairs: 1 to 1,000 entries. */
export const MAX_STREAM_PAIRS = 1000;
/** update_interval_ms 0 means this. */
export const DEFAULT_STREAM_INTERVAL_MS = 1000;
/** update_interval_ms below this is raised to it. */
export const MIN_STREAM_INTERVAL_MS = 10;

/** A BatchQuoteRequest as received, before validation: any field may be missing, an amount may be a number. */
export type BatchQuoteRequestMessage = Partial<Omit<WireBatchQuoteRequest, 'pairs'>> & {
  pairs?: (Partial<Omit<WirePairAmount, 'amount' | 'swapMode'>> & { amount?: string | number; swapMode?: string | number })[];
};

/** One requested pair, validated. */
export interface StreamPair {
  readonly pairId: string;
  readonly inputMint: string;
  readonly outputMint: string;
  /** ExactIn: `amount` is sold; ExactOut: `amount` is bought. */
  readonly mode: SwapMode;
  readonly amount: bigint;
  /** `amount` in canonical decimal (the pairID's amount; the Quote's input_amount or output_amount). */
  readonly amountText: string;
}

/** What a service accepts beyond quote.proto's rules. */
export interface StreamRequestOptions {
  /** False: a pair asking for exact out is refused (INVALID_ARGUMENT naming its swap_mode). Default true. */
  exactOut?: boolean;
}

/** A validated request: distinct pairs (by pairID, first occurrence kept), slippage, interval. */
export interface StreamRequest {
  readonly pairs: readonly StreamPair[];
  readonly slippageBps: number;
  readonly intervalMs: number;
}

/** A malformed request: answered with INVALID_ARGUMENT and `message`, which names the field. */
export class StreamRequestError extends TpError<typeof ErrorCode.BadParameter> {
  /** `message` starts with the field at fault, `field: why`. */
  constructor(message: string) {
    super(ErrorCode.BadParameter, message, { context: { parameter: message.slice(0, Math.max(0, message.indexOf(':'))) || 'request' } });
  }
}

function parseAmount(raw: unknown, field: string): bigint {
  const text = typeof raw === 'number' ? String(raw) : raw;
  if (typeof text !== 'string' || !/^[0-9]+$/.test(text)) throw new StreamRequestError(`${field}: not a u64 decimal amount`);
  const amount = BigInt(text);
  if (amount === 0n) throw new StreamRequestError(`${field}: must be greater than 0`);
  if (amount > U64_MAX) throw new StreamRequestError(`${field}: above the u64 maximum`);
  return amount;
}

function parseSwapMode(raw: unknown, field: string, exactOut: boolean): SwapMode {
  if (raw === undefined || raw === null || raw === WireSwapMode.Unspecified || raw === WireSwapMode.ExactIn) return SwapMode.ExactIn;
  if (raw === WireSwapMode.ExactOut) {
    if (!exactOut) throw new StreamRequestError(`${field}: SWAP_MODE_EXACT_OUT is not served here (exact in only)`);
    return SwapMode.ExactOut;
  }
  throw new StreamRequestError(`${field}: unknown swap mode ${String(raw)}`);
}

function parseMint(raw: unknown, field: string): string {
  if (typeof raw !== 'string' || !isPubkey(raw)) throw new StreamRequestError(`${field}: not a base58 32-byte public key`);
  return raw;
}

/**
 * Validates a BatchQuoteRequest (quote.proto rules): 1..1,000 pairs, base58 32-byte mints, input ≠
 * output, 0 < amount ≤ u64 max, a known swap_mode (exact out only where `options.exactOut`),
 * slippage_bps ≤ 10,000; update_interval_ms 0 → 1,000, below 10 → 10. Throws StreamRequestError
 * naming the first bad field (`pairs[3].amount: ...`).
 */
export function parseStreamRequest(request: BatchQuoteRequestMessage, options: StreamRequestOptions = {}): StreamRequest {
  const exactOut = options.exactOut ?? true;
  const raw = request.pairs ?? [];
  if (raw.length === 0) throw new StreamRequestError('pairs: at least one pair is required');
  if (raw.length > MAX_STREAM_PAIRS) throw new StreamRequestError(`pairs: ${raw.length} pairs, at most ${MAX_STREAM_PAIRS}`);
  const slippageBps = request.slippageBps ?? 0;
  if (!Number.isInteger(slippageBps) || slippageBps < 0 || slippageBps > MAX_SLIPPAGE_BPS) {
    throw new StreamRequestError(`slippage_bps: ${slippageBps} is outside 0..${MAX_SLIPPAGE_BPS}`);
  }
  const requested = request.updateIntervalMs ?? 0;
  const intervalMs = requested === 0 ? DEFAULT_STREAM_INTERVAL_MS : Math.max(MIN_STREAM_INTERVAL_MS, requested);
  const pairs: StreamPair[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < raw.length; i++) {
    const p = raw[i]!;
    const inputMint = parseMint(p.inputMint, `pairs[${i}].input_mint`);
    const outputMint = parseMint(p.outputMint, `pairs[${i}].output_mint`);
    if (inputMint === outputMint) throw new StreamRequestError(`pairs[${i}].output_mint: equals input_mint`);
    const amount = parseAmount(p.amount, `pairs[${i}].amount`);
    const mode = parseSwapMode(p.swapMode, `pairs[${i}].swap_mode`, exactOut);
    const id = pairId(inputMint, outputMint, amount, mode === SwapMode.ExactOut);
    if (seen.has(id)) continue;
    seen.add(id);
    pairs.push({ pairId: id, inputMint, outputMint, mode, amount, amountText: amount.toString() });
  }
  return { pairs, slippageBps, intervalMs };
}

/** Provider name of local quotes. */
export const LOCAL_PROVIDER = 'tidepool';

/**
 * The QuoteError of a failed quote: the same code and message /quote would answer with, and its
 * gRPC status from the code table (engine/error-status.ts).
 */
export function quoteErrorOf(failure: QuoteFailure): WireQuoteError {
  const e = clientErrorOf(failure.code, failure.message);
  return { code: e.code, grpcStatus: e.grpc, message: e.message };
}

/** The wire name of a swap mode. */
export function wireSwapModeOf(mode: SwapMode): WireSwapMode {
  return mode === SwapMode.ExactOut ? WireSwapMode.ExactOut : WireSwapMode.ExactIn;
}

/** A Quote carrying only `error` for `pair`: the requested amount on its side, the rest zero, no route. */
export function errorQuoteMessage(pair: StreamPair, slippageBps: number, error: WireQuoteError, nowMs: number): UpstreamQuote {
  const exactOut = pair.mode === SwapMode.ExactOut;
  return {
    pairId: pair.pairId,
    inputMint: pair.inputMint,
    outputMint: pair.outputMint,
    swapMode: wireSwapModeOf(pair.mode),
    inputAmount: exactOut ? '0' : pair.amountText,
    outputAmount: exactOut ? pair.amountText : '0',
    minOutputAmount: '0',
    maxInputAmount: '0',
    slippageBps,
    priceImpact: 0,
    route: [],
    slot: '0',
    contextSlot: '0',
    stateAgeMs: 0,
    source: 'QUOTE_SOURCE_LOCAL',
    origin: 'QUOTE_ORIGIN_UNSPECIFIED',
    provider: LOCAL_PROVIDER,
    quotedAtUnixMs: String(nowMs),
    error,
  };
}
