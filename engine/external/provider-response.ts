/**
 * Strict reading of the provider's `GET /quote` answers (Jupiter Swap API shape, reference
 * docs/wire-formats.md §7; the simulator's engine/sim/quote-api serves the same). Anything not of the
 * documented shape is a ProviderResponseError, never an exception from deep inside: the poller
 * turns it into an error quote and carries on.
 *
 * - u64 amounts are decimal strings and stay bigint; `contextSlot` is a JSON number, read from the
 *   raw text when it is above 2^53 (JSON.parse would round it).
 * - `priceImpactPct` is a fraction written as a string ("0.0012" = 0.12 %).
 * - `feeAmount`, `feeMint` (dropped from the public schema in Nov 2025), `percent` and `bps` are
 *   optional; split plans (several steps of the same leg) are accepted as listed.
 * - The answer must be for the pair asked: input and output mints equal, `inAmount` = amount
 *   (ExactIn; `outAmount` = amount for ExactOut), the plan starting at the input mint and ending at the output mint.
 */
import { U64_MAX } from '../cache/index.js';
import { isPubkey } from '../chain/index.js';
import { ErrorCode, TpError } from '../errors.js';

/** The provider's answer is not the documented /quote shape; the message names the field. */
export class ProviderResponseError extends TpError<typeof ErrorCode.ExternalMalformed> {
  constructor(message: string) {
    super(ErrorCode.ExternalMalformed, message);
  }
}

/** One `routePlan[].swapInfo`. */
export interface ProviderHop {
  ammKey: string;
  label: string;
  inputMint: string;
  outputMint: string;
  inAmount: bigint;
  outAmount: bigint;
  /** Absent when the provider does not report it. */
  feeAmount?: bigint;
  feeMint?: string;
}

/** A 200 answer of `GET /quote`, read. */
export interface ProviderQuote {
  inputMint: string;
  outputMint: string;
  inAmount: bigint;
  outAmount: bigint;
  otherAmountThreshold: bigint;
  /** A fraction (0.01 = 1 %). */
  priceImpact: number;
  hops: ProviderHop[];
  /** 0 when the provider does not say. */
  contextSlot: bigint;
}

/** What the quote was asked for, to check the answer against. */
export interface QuoteAsked {
  inputMint: string;
  outputMint: string;
  /** The input (ExactIn) or the output (ExactOut) asked. */
  amount: bigint;
  /** Default ExactIn. */
  swapMode?: 'ExactIn' | 'ExactOut';
}

type Json = Record<string, unknown>;

function fail(why: string): never {
  throw new ProviderResponseError(why);
}

function object(value: unknown, field: string): Json {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) fail(`${field} is not an object`);
  return value as Json;
}

function u64(value: unknown, field: string): bigint {
  if (typeof value !== 'string' || !/^(0|[1-9][0-9]*)$/.test(value)) fail(`${field} is not a u64 decimal string`);
  const n = BigInt(value);
  if (n > U64_MAX) fail(`${field} is above the u64 maximum`);
  return n;
}

function optionalU64(value: unknown, field: string): bigint | undefined {
  return value === undefined || value === null ? undefined : u64(value, field);
}

function mint(value: unknown, field: string): string {
  if (typeof value !== 'string' || !isPubkey(value)) fail(`${field} is not a base58 public key`);
  return value;
}

function text(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') fail(`${field} is not a non-empty string`);
  return value;
}

function fraction(value: unknown, field: string): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : typeof value === 'number' ? value : NaN;
  if (!Number.isFinite(n)) fail(`${field} is not a number`);
  return n;
}

const CONTEXT_SLOT_RE = /"contextSlot"\s*:\s*(\d+)/;

function contextSlotOf(value: unknown, raw: string): bigint {
  if (value === undefined || value === null) return 0n;
  if (typeof value === 'string') return u64(value, 'contextSlot');
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) fail('contextSlot is not an unsigned integer');
  if (Number.isSafeInteger(value)) return BigInt(value);
  // Above 2^53 the parsed number is rounded: take the digits as written.
  const m = CONTEXT_SLOT_RE.exec(raw);
  if (m === null) fail('contextSlot is not an unsigned integer');
  return u64(m[1], 'contextSlot');
}

function hopOf(step: unknown, i: number): ProviderHop {
  const s = object(step, `routePlan[${i}]`);
  const info = object(s['swapInfo'], `routePlan[${i}].swapInfo`);
  const f = `routePlan[${i}].swapInfo`;
  const hop: ProviderHop = {
    ammKey: mint(info['ammKey'], `${f}.ammKey`),
    label: text(info['label'], `${f}.label`),
    inputMint: mint(info['inputMint'], `${f}.inputMint`),
    outputMint: mint(info['outputMint'], `${f}.outputMint`),
    inAmount: u64(info['inAmount'], `${f}.inAmount`),
    outAmount: u64(info['outAmount'], `${f}.outAmount`),
  };
  const feeAmount = optionalU64(info['feeAmount'], `${f}.feeAmount`);
  if (feeAmount !== undefined) hop.feeAmount = feeAmount;
  if (info['feeMint'] !== undefined && info['feeMint'] !== null) hop.feeMint = mint(info['feeMint'], `${f}.feeMint`);
  return hop;
}

/** Reads a 200 body. Throws ProviderResponseError naming the first bad field. */
export function parseQuoteResponse(raw: string, asked: QuoteAsked): ProviderQuote {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    fail('the body is not JSON');
  }
  const body = object(json, 'the body');
  const inputMint = mint(body['inputMint'], 'inputMint');
  const outputMint = mint(body['outputMint'], 'outputMint');
  if (inputMint !== asked.inputMint || outputMint !== asked.outputMint) fail('the answer is for another pair');
  const inAmount = u64(body['inAmount'], 'inAmount');
  const exactOut = asked.swapMode === 'ExactOut';
  if (!exactOut && inAmount !== asked.amount) fail(`inAmount ${inAmount} is not the amount asked (${asked.amount})`);
  const outAmount = u64(body['outAmount'], 'outAmount');
  if (exactOut && outAmount !== asked.amount) fail(`outAmount ${outAmount} is not the amount asked (${asked.amount})`);
  const otherAmountThreshold = u64(body['otherAmountThreshold'], 'otherAmountThreshold');
  const priceImpact = fraction(body['priceImpactPct'], 'priceImpactPct');
  const plan = body['routePlan'];
  if (!Array.isArray(plan) || plan.length === 0) fail('routePlan is not a non-empty array');
  const hops = plan.map(hopOf);
  if (hops[0]!.inputMint !== inputMint) fail('routePlan does not start at inputMint');
  if (hops[hops.length - 1]!.outputMint !== outputMint) fail('routePlan does not end at outputMint');
  return { inputMint, outputMint, inAmount, outAmount, otherAmountThreshold, priceImpact, hops, contextSlot: contextSlotOf(body['contextSlot'], raw) };
}

/** The provider's error body `{"error": "...", "errorCode": "..."}`, or what can be read of it. */
export interface ProviderErrorBody {
  errorCode: string;
  message: string;
}

/** Reads an error body; never throws (an unreadable body gives empty fields). */
export function parseErrorBody(raw: string): ProviderErrorBody {
  try {
    const body = JSON.parse(raw) as unknown;
    if (body !== null && typeof body === 'object') {
      const b = body as Json;
      const message = typeof b['error'] === 'string' ? b['error'] : typeof b['message'] === 'string' ? b['message'] : '';
      return { errorCode: typeof b['errorCode'] === 'string' ? b['errorCode'] : '', message };
    }
  } catch {
    // not JSON: fall through
  }
  return { errorCode: '', message: raw.slice(0, 200) };
}

/** The 400 codes meaning "no route for this pair" (the provider is up; not a breaker failure). */
export const NO_ROUTE_ERROR_CODES: ReadonlySet<string> = new Set(['COULD_NOT_FIND_ANY_ROUTE', 'TOKEN_NOT_TRADABLE']);

/**
 * Fee of a hop in units of its input mint (quote.proto RouteHop.fee). A fee charged in the output
 * mint is converted at the hop's own rate: the share of the input that bought it,
 * floor(fee × in / (out + fee)). Unknown (no feeAmount, or a feeMint that is neither side): 0.
 */
export function hopFeeInInputUnits(hop: ProviderHop): bigint {
  const fee = hop.feeAmount;
  if (fee === undefined) return 0n;
  if (hop.feeMint === undefined || hop.feeMint === hop.inputMint) return fee;
  if (hop.feeMint === hop.outputMint) {
    const gross = hop.outAmount + fee;
    return gross === 0n ? 0n : (fee * hop.inAmount) / gross;
  }
  return 0n;
}
