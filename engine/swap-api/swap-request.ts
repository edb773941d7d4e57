/**
 * The body of `POST /swap` and `POST /swap-instructions` (Jupiter Swap API v1: the official
 * client's `SwapRequest`), read and checked: the user's key, the quote response the client got from
 * `GET /quote` (taken back as it was given), and the options of the transaction. Every refusal is
 * a 400 INVALID_REQUEST naming the field, in the API's error shape.
 *
 * Options and what becomes of them:
 * - `wrapAndUnwrapSol` (default true): SOL in is wrapped into the user's wSOL account before the
 *   swap, SOL out unwrapped after it (the account closed).
 * - `prioritizationFeeLamports`: a number of lamports (priority fee over the compute unit limit),
 *   `"auto"` (the default), `{priorityLevelWithMaxLamports: {priorityLevel, maxLamports}}` (a
 *   percentile of the recent prioritization fees of the swap's writable accounts, capped), or
 *   `{jitoTipLamports}` (a tip transfer to a Jito tip account instead of a priority fee).
 *   `computeUnitPriceMicroLamports` sets the price outright and wins over it.
 * - `asLegacyTransaction`: a legacy transaction; otherwise a versioned (v0) one, as the API does.
 * - `dynamicComputeUnitLimit`: the limit is what a simulation of the transaction used, plus a
 *   margin; otherwise the route's budget.
 * - `skipUserAccountsRpcCalls`: no account is read; every token account the route receives is
 *   created idempotently.
 * - `payer`: pays the fees and the rent of the accounts created; default the user.
 * - `destinationTokenAccount`: the account the output goes to (must exist).
 * - `useSharedAccounts`, `trackingAccount`, `dynamicSlippage`, `blockhashSlotsToExpiry`: accepted
 *   and ignored (there is no router program whose shared accounts could be used; the
 *   transaction's slippage is the quote's).
 * - Refused (400): `feeAccount` and a quote with a platform fee (tidepool takes no platform fee),
 *   `nativeDestinationAccount`.
 */
import { base58 } from '../chain/index.js';
import { SwapMode } from '../dex/index.js';
import { BPS_DENOMINATOR, U64_MAX } from './constants.js';
import { quoteApiError, type QuoteApiError, QuoteErrorCode } from './swap-api-errors.js';

export const PriorityLevel = { Medium: 'medium', High: 'high', VeryHigh: 'veryHigh' } as const;
export type PriorityLevel = (typeof PriorityLevel)[keyof typeof PriorityLevel];

export type PrioritizationFee =
  | { kind: 'auto' }
  | { kind: 'lamports'; lamports: bigint }
  | { kind: 'level'; level: PriorityLevel; maxLamports: bigint }
  | { kind: 'jitoTip'; lamports: bigint };

/** One hop of the quote's route plan, as the transaction must trade it. */
export interface QuotedHop {
  /** The pool (`swapInfo.ammKey`). */
  pool: string;
  inputMint: string;
  outputMint: string;
  inAmount: bigint;
  outAmount: bigint;
}

/** The quote response, read back. */
export interface QuotedRoute {
  inputMint: string;
  outputMint: string;
  inAmount: bigint;
  outAmount: bigint;
  /** ExactIn: the least output; ExactOut: the most input. */
  otherAmountThreshold: bigint;
  swapMode: SwapMode;
  slippageBps: number;
  /** The slot of the state the quote was made on. */
  contextSlot: bigint;
  hops: QuotedHop[];
}

export interface SwapRequest {
  userPublicKey: string;
  payer: string;
  wrapAndUnwrapSol: boolean;
  prioritizationFee: PrioritizationFee;
  computeUnitPriceMicroLamports: bigint | undefined;
  asLegacyTransaction: boolean;
  dynamicComputeUnitLimit: boolean;
  skipUserAccountsRpcCalls: boolean;
  destinationTokenAccount: string | undefined;
  quote: QuotedRoute;
}

/** The default cap of `"auto"` prioritization: 0.001 SOL. */
export const AUTO_PRIORITY_MAX_LAMPORTS = 1_000_000n;

function invalid(field: string, message: string): QuoteApiError {
  return quoteApiError(QuoteErrorCode.InvalidRequest, `${field}: ${message}`);
}

function object(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(field, 'must be a JSON object');
  return value as Record<string, unknown>;
}

function pubkey(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length < 32 || value.length > 44) throw invalid(field, 'must be a base58 public key');
  let bytes: Uint8Array;
  try {
    bytes = base58.decode(value);
  } catch {
    throw invalid(field, 'must be a base58 public key');
  }
  if (bytes.length !== 32) throw invalid(field, 'must be a base58 public key (32 bytes)');
  return value;
}

function optionalPubkey(value: unknown, field: string): string | undefined {
  return value === undefined || value === null ? undefined : pubkey(value, field);
}

/** A u64 as the API writes amounts: a decimal string (a JSON number is taken when it is an exact integer). */
function u64(value: unknown, field: string): bigint {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) text = String(value);
  else throw invalid(field, 'must be an unsigned 64-bit integer as a decimal string');
  if (!/^(0|[1-9][0-9]{0,19})$/.test(text)) throw invalid(field, 'must be an unsigned 64-bit integer as a decimal string');
  const v = BigInt(text);
  if (v > U64_MAX) throw invalid(field, 'must be an unsigned 64-bit integer as a decimal string');
  return v;
}

function bool(value: unknown, field: string, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'boolean') throw invalid(field, 'must be true or false');
  return value;
}

function prioritizationOf(value: unknown): PrioritizationFee {
  const field = 'prioritizationFeeLamports';
  if (value === undefined || value === null || value === 'auto') return { kind: 'auto' };
  if (typeof value === 'number' || typeof value === 'string') return { kind: 'lamports', lamports: u64(value, field) };
  const o = object(value, field);
  if ('jitoTipLamports' in o) return { kind: 'jitoTip', lamports: u64(o['jitoTipLamports'], `${field}.jitoTipLamports`) };
  if ('priorityLevelWithMaxLamports' in o) {
    const p = object(o['priorityLevelWithMaxLamports'], `${field}.priorityLevelWithMaxLamports`);
    const level = p['priorityLevel'];
    if (level !== PriorityLevel.Medium && level !== PriorityLevel.High && level !== PriorityLevel.VeryHigh) {
      throw invalid(`${field}.priorityLevelWithMaxLamports.priorityLevel`, 'must be medium, high or veryHigh');
    }
    return { kind: 'level', level, maxLamports: u64(p['maxLamports'], `${field}.priorityLevelWithMaxLamports.maxLamports`) };
  }
  throw invalid(field, 'must be a number of lamports, "auto", {priorityLevelWithMaxLamports} or {jitoTipLamports}');
}

function quoteOf(value: unknown): QuotedRoute {
  const q = object(value, 'quoteResponse');
  const inputMint = pubkey(q['inputMint'], 'quoteResponse.inputMint');
  const outputMint = pubkey(q['outputMint'], 'quoteResponse.outputMint');
  const swapMode = q['swapMode'] ?? SwapMode.ExactIn;
  if (swapMode !== SwapMode.ExactIn && swapMode !== SwapMode.ExactOut) throw invalid('quoteResponse.swapMode', 'must be ExactIn or ExactOut');
  const slippageBps = q['slippageBps'];
  if (typeof slippageBps !== 'number' || !Number.isInteger(slippageBps) || slippageBps < 0 || slippageBps > BPS_DENOMINATOR) {
    throw invalid('quoteResponse.slippageBps', `must be an integer from 0 to ${BPS_DENOMINATOR}`);
  }
  const platformFee = q['platformFee'];
  if (platformFee !== undefined && platformFee !== null) throw invalid('quoteResponse.platformFee', 'tidepool takes no platform fee: quote without platformFeeBps');
  const plan = q['routePlan'];
  if (!Array.isArray(plan) || plan.length === 0) throw invalid('quoteResponse.routePlan', 'must list the route\'s hops');
  const hops = plan.map((step, i): QuotedHop => {
    const s = object(object(step, `quoteResponse.routePlan[${i}]`)['swapInfo'], `quoteResponse.routePlan[${i}].swapInfo`);
    const percent = object(step, `quoteResponse.routePlan[${i}]`)['percent'];
    if (percent !== undefined && percent !== null && percent !== 100) throw invalid(`quoteResponse.routePlan[${i}].percent`, 'split routes are not built: every step carries 100');
    return {
      pool: pubkey(s['ammKey'], `quoteResponse.routePlan[${i}].swapInfo.ammKey`),
      inputMint: pubkey(s['inputMint'], `quoteResponse.routePlan[${i}].swapInfo.inputMint`),
      outputMint: pubkey(s['outputMint'], `quoteResponse.routePlan[${i}].swapInfo.outputMint`),
      inAmount: u64(s['inAmount'], `quoteResponse.routePlan[${i}].swapInfo.inAmount`),
      outAmount: u64(s['outAmount'], `quoteResponse.routePlan[${i}].swapInfo.outAmount`),
    };
  });
  // The hops must chain from the input mint to the output mint.
  let mint = inputMint;
  for (const [i, h] of hops.entries()) {
    if (h.inputMint !== mint) throw invalid(`quoteResponse.routePlan[${i}].swapInfo.inputMint`, `must be ${mint}, what the route holds at this hop`);
    mint = h.outputMint;
  }
  if (mint !== outputMint) throw invalid('quoteResponse.routePlan', `ends in ${mint}, not the output mint ${outputMint}`);
  const contextSlot = q['contextSlot'];
  if (typeof contextSlot !== 'number' || !Number.isSafeInteger(contextSlot) || contextSlot < 0) throw invalid('quoteResponse.contextSlot', 'must be the slot the quote was made at');
  return {
    inputMint,
    outputMint,
    inAmount: u64(q['inAmount'], 'quoteResponse.inAmount'),
    outAmount: u64(q['outAmount'], 'quoteResponse.outAmount'),
    otherAmountThreshold: u64(q['otherAmountThreshold'], 'quoteResponse.otherAmountThreshold'),
    swapMode,
    slippageBps,
    contextSlot: BigInt(contextSlot),
    hops,
  };
}

/** Reads a `SwapRequest` body (parsed JSON). Throws QuoteApiError (400 INVALID_REQUEST) naming the first bad field. */
export function parseSwapRequest(body: unknown): SwapRequest {
  const o = object(body, 'body');
  const userPublicKey = pubkey(o['userPublicKey'], 'userPublicKey');
  if (o['feeAccount'] !== undefined && o['feeAccount'] !== null) throw invalid('feeAccount', 'tidepool takes no platform fee');
  if (o['nativeDestinationAccount'] !== undefined && o['nativeDestinationAccount'] !== null) throw invalid('nativeDestinationAccount', 'is not supported: the SOL goes to the user');
  const price = o['computeUnitPriceMicroLamports'];
  return {
    userPublicKey,
    payer: optionalPubkey(o['payer'], 'payer') ?? userPublicKey,
    wrapAndUnwrapSol: bool(o['wrapAndUnwrapSol'], 'wrapAndUnwrapSol', true),
    prioritizationFee: prioritizationOf(o['prioritizationFeeLamports']),
    computeUnitPriceMicroLamports: price === undefined || price === null ? undefined : u64(price, 'computeUnitPriceMicroLamports'),
    asLegacyTransaction: bool(o['asLegacyTransaction'], 'asLegacyTransaction', false),
    dynamicComputeUnitLimit: bool(o['dynamicComputeUnitLimit'], 'dynamicComputeUnitLimit', false),
    skipUserAccountsRpcCalls: bool(o['skipUserAccountsRpcCalls'], 'skipUserAccountsRpcCalls', false),
    destinationTokenAccount: optionalPubkey(o['destinationTokenAccount'], 'destinationTokenAccount'),
    quote: quoteOf(o['quoteResponse']),
  };
}
