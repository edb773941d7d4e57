/**
 * The query of `GET /quote`, parsed and checked the way the real swap API does it (docs/wire-formats.md §7):
 * every parameter is parsed first, in declaration order, and the first one that fails answers 400
 * INVALID_REQUEST with the real API's wording (`Query parameter amount cannot be parsed: invalid
 * digit found in string`, Rust's parse errors); then equal mints answer
 * CIRCULAR_ARBITRAGE_IS_DISABLED. Unknown parameters are ignored, as the real API does.
 */
import { base58 } from '../chain/index.js';
import { SwapMode } from '../dex/index.js';
import {
  BPS_DENOMINATOR,
  DEFAULT_MAX_ACCOUNTS,
  DEFAULT_SLIPPAGE_BPS,
  U16_MAX,
  U64_MAX,
} from './constants.js';
import type { QueryValues } from './query-values.js';
import { quoteApiError, QuoteErrorCode, unparsable } from './swap-api-errors.js';

export const InstructionVersion = { V1: 'V1', V2: 'V2' } as const;
export type InstructionVersion = (typeof InstructionVersion)[keyof typeof InstructionVersion];

export interface QuoteParams {
  inputMint: string;
  outputMint: string;
  /** Input atoms for ExactIn, output atoms for ExactOut. */
  amount: bigint;
  slippageBps: number;
  swapMode: SwapMode;
  /** Only these DEX labels (lower case); undefined: all. */
  dexes: ReadonlySet<string> | undefined;
  /** Never these DEX labels (lower case); undefined: none excluded. */
  excludeDexes: ReadonlySet<string> | undefined;
  onlyDirectRoutes: boolean;
  restrictIntermediateTokens: boolean;
  /** Rough bound on the accounts a route may use. */
  maxAccounts: number;
  /** undefined when the query has no platformFeeBps (the response then says `platformFee: null`). */
  platformFeeBps: number | undefined;
  /** Accepted; it changes nothing here (there is no transaction to build). */
  asLegacyTransaction: boolean;
  /** Accepted; it changes nothing here. */
  instructionVersion: InstructionVersion | undefined;
}

const MAX_PUBKEY_CHARS = 44;
const PUBKEY_BYTES = 32;

/**
 * Parses the query (URLSearchParams, or query-values.ts `QueryReader`'s values). `isKnownMint` lets
 * the caller skip base58 decoding for mints it already knows to be valid (the market's tokens).
 * Throws QuoteApiError (400) on the first bad parameter.
 */
export function parseQuoteParams(query: QueryValues, isKnownMint: (mint: string) => boolean = () => false): QuoteParams {
  const inputMint = parseMint(query, 'inputMint', isKnownMint);
  const outputMint = parseMint(query, 'outputMint', isKnownMint);
  const amount = parseUnsigned('amount', required(query, 'amount'), U64_MAX);
  const slippageBps = parseBps(query, 'slippageBps');
  const swapMode = parseSwapMode(query.get('swapMode'));
  const dexes = parseLabels(query.get('dexes'));
  const excludeDexes = parseLabels(query.get('excludeDexes'));
  const onlyDirectRoutes = parseBool(query, 'onlyDirectRoutes', false);
  const restrictIntermediateTokens = parseBool(query, 'restrictIntermediateTokens', true);
  const asLegacyTransaction = parseBool(query, 'asLegacyTransaction', false);
  const platformFeeBps = parseBps(query, 'platformFeeBps');
  const maxAccountsText = query.get('maxAccounts');
  const maxAccounts =
    maxAccountsText === null
      ? DEFAULT_MAX_ACCOUNTS
      : Number(parseUnsigned('maxAccounts', maxAccountsText, BigInt(Number.MAX_SAFE_INTEGER)));
  const instructionVersion = parseInstructionVersion(query.get('instructionVersion'));

  if (inputMint === outputMint) {
    throw quoteApiError(QuoteErrorCode.CircularArbitrageIsDisabled, 'Input and output mints are not allowed to be equal');
  }
  return {
    inputMint,
    outputMint,
    amount,
    slippageBps: slippageBps ?? DEFAULT_SLIPPAGE_BPS,
    swapMode,
    dexes,
    excludeDexes,
    onlyDirectRoutes,
    restrictIntermediateTokens,
    maxAccounts,
    platformFeeBps,
    asLegacyTransaction,
    instructionVersion,
  };
}

function required(query: QueryValues, name: string): string {
  const value = query.get(name);
  if (value === null) {
    throw quoteApiError(QuoteErrorCode.InvalidRequest, `Failed to deserialize query string: missing field \`${name}\``);
  }
  return value;
}

/** A base58 public key; the reasons are those of Solana's `Pubkey::from_str` (WrongSize, Invalid). */
function parseMint(query: QueryValues, name: string, isKnownMint: (mint: string) => boolean): string {
  const text = required(query, name);
  if (isKnownMint(text)) return text;
  if (text.length > MAX_PUBKEY_CHARS) throw unparsable(name, 'WrongSize');
  let bytes: Uint8Array;
  try {
    bytes = base58.decode(text);
  } catch {
    throw unparsable(name, 'Invalid');
  }
  if (bytes.length !== PUBKEY_BYTES) throw unparsable(name, 'WrongSize');
  return text;
}

/** An unsigned integer at most `max`, with the messages of Rust's `ParseIntError`. */
function parseUnsigned(name: string, text: string, max: bigint): bigint {
  if (text.length === 0) throw unparsable(name, 'cannot parse integer from empty string');
  const digits = text.charCodeAt(0) === 0x2b /* + */ ? text.slice(1) : text;
  if (digits.length === 0 || !/^[0-9]+$/.test(digits)) throw unparsable(name, 'invalid digit found in string');
  const value = BigInt(digits);
  if (value > max) throw unparsable(name, 'number too large to fit in target type');
  return value;
}

/** A u16 basis-point count, at most 10000; undefined when absent. */
function parseBps(query: QueryValues, name: string): number | undefined {
  const text = query.get(name);
  if (text === null) return undefined;
  const value = Number(parseUnsigned(name, text, BigInt(U16_MAX)));
  if (value > BPS_DENOMINATOR) {
    throw quoteApiError(QuoteErrorCode.InvalidRequest, `${name} must be at most ${BPS_DENOMINATOR}, got ${value}`);
  }
  return value;
}

function parseSwapMode(text: string | null): SwapMode {
  if (text === null || text === SwapMode.ExactIn) return SwapMode.ExactIn;
  if (text === SwapMode.ExactOut) return SwapMode.ExactOut;
  throw unparsable('swapMode', `unknown variant \`${text}\`, expected \`ExactIn\` or \`ExactOut\``);
}

function parseInstructionVersion(text: string | null): InstructionVersion | undefined {
  if (text === null) return undefined;
  if (text === InstructionVersion.V1 || text === InstructionVersion.V2) return text;
  throw unparsable('instructionVersion', `unknown variant \`${text}\`, expected \`V1\` or \`V2\``);
}

/** `true` or `false` exactly, like Rust's `bool::from_str`. */
function parseBool(query: QueryValues, name: string, fallback: boolean): boolean {
  const text = query.get(name);
  if (text === null) return fallback;
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw unparsable(name, 'provided string was not `true` or `false`');
}

/**
 * Comma-separated DEX labels, compared without case (`Meteora+DLMM` arrives as `Meteora DLMM`).
 * Empty text means no filter. Labels no pool carries are accepted and match nothing.
 */
function parseLabels(text: string | null): ReadonlySet<string> | undefined {
  if (text === null) return undefined;
  const labels = new Set<string>();
  for (const part of text.split(',')) {
    const label = part.trim().toLowerCase();
    if (label.length > 0) labels.add(label);
  }
  return labels.size > 0 ? labels : undefined;
}
