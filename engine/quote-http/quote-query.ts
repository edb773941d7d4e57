/**
 * The GET /quote query (docs/architecture.md §3), validated into the engine's request: 400 naming the
 * parameter. The answer's JSON is engine/quote's (answer-json.ts).
 */
import { U64_MAX } from '../cache/index.js';
import { isPubkey } from '../chain/index.js';
import { SwapMode } from '../dex/index.js';
import { badParameter, isQuoteFailure, type QuoteFailure, DEFAULT_SLIPPAGE_BPS, MAX_SLIPPAGE_BPS, type PubkeyCheck, type QuoteRequest, parseDexList, routeFilterOf } from '../quote/index.js';


const DECODE_PUBKEYS: PubkeyCheck = { isPubkey };

/** The /quote query's parameters, as read (undefined: absent). */
export interface QuoteQueryParams {
  input: string | undefined;
  output: string | undefined;
  amount: string | undefined;
  maxStateAgeMs?: string | undefined;
  swapMode?: string | undefined;
  slippageBps?: string | undefined;
  /** Comma-separated DEX kinds or labels (quote-v1-request.ts `parseDexList`). */
  dexes?: string | undefined;
  excludeDexes?: string | undefined;
  /** `true` or `false`. */
  onlyDirectRoutes?: string | undefined;
}

/**
 * Validates the /quote query into the engine's request, or the failure (TP_ERR_BAD_PARAMETER, the
 * message naming the parameter) of its first bad parameter. `swapMode` ExactIn (default) or
 * ExactOut: `amount` is then the input sold or the output bought; `slippageBps` 0 to 10,000,
 * default `defaultSlippageBps`.
 */
export function parseQuoteQuery(
  params: QuoteQueryParams,
  defaultSlippageBps: number = DEFAULT_SLIPPAGE_BPS,
  pubkeys: PubkeyCheck = DECODE_PUBKEYS,
): QuoteRequest | QuoteFailure {
  const { input, output, amount, maxStateAgeMs, swapMode, slippageBps } = params;
  if (input === undefined || input === '') return badParameter('input', 'missing parameter: input');
  if (!pubkeys.isPubkey(input)) return badParameter('input', 'parameter input is not a base58 public key');
  if (output === undefined || output === '') return badParameter('output', 'missing parameter: output');
  if (!pubkeys.isPubkey(output)) return badParameter('output', 'parameter output is not a base58 public key');
  if (output === input) return badParameter('output', 'parameter output must differ from input');
  if (amount === undefined || amount === '') return badParameter('amount', 'missing parameter: amount');
  if (!/^[0-9]{1,20}$/.test(amount)) return badParameter('amount', 'parameter amount is not an unsigned 64-bit integer');
  const value = BigInt(amount);
  if (value > U64_MAX) return badParameter('amount', 'parameter amount is not an unsigned 64-bit integer');
  if (value === 0n) return badParameter('amount', 'parameter amount must be greater than zero');
  let age: number | undefined;
  if (maxStateAgeMs !== undefined && maxStateAgeMs !== '') {
    if (!/^[0-9]{1,15}$/.test(maxStateAgeMs)) {
      return badParameter('maxStateAgeMs', 'parameter maxStateAgeMs is not a non-negative integer of milliseconds');
    }
    age = Number(maxStateAgeMs);
  }
  let mode: SwapMode = SwapMode.ExactIn;
  if (swapMode !== undefined && swapMode !== '') {
    if (swapMode === SwapMode.ExactOut) mode = SwapMode.ExactOut;
    else if (swapMode !== SwapMode.ExactIn) return badParameter('swapMode', 'parameter swapMode must be ExactIn or ExactOut');
  }
  let bps = defaultSlippageBps;
  if (slippageBps !== undefined && slippageBps !== '') {
    if (!/^[0-9]{1,5}$/.test(slippageBps) || Number(slippageBps) > MAX_SLIPPAGE_BPS) {
      return badParameter('slippageBps', `parameter slippageBps is not an integer from 0 to ${MAX_SLIPPAGE_BPS}`);
    }
    bps = Number(slippageBps);
  }
  if (params.dexes === undefined && params.excludeDexes === undefined && params.onlyDirectRoutes === undefined) {
    return { inputMint: input, outputMint: output, mode, amount: value, amountText: amount, maxStateAgeMs: age, slippageBps: bps };
  }
  const dexes = parseDexList(params.dexes, 'dexes', true);
  if (isQuoteFailure(dexes)) return dexes;
  const excludeDexes = parseDexList(params.excludeDexes, 'excludeDexes', true);
  if (isQuoteFailure(excludeDexes)) return excludeDexes;
  const direct = params.onlyDirectRoutes;
  if (direct !== undefined && direct !== '' && direct !== 'true' && direct !== 'false') {
    return badParameter('onlyDirectRoutes', 'parameter onlyDirectRoutes must be true or false');
  }
  const routeFilter = routeFilterOf(dexes as ReadonlySet<string> | undefined, excludeDexes as ReadonlySet<string> | undefined, direct === 'true');
  return { inputMint: input, outputMint: output, mode, amount: value, amountText: amount, maxStateAgeMs: age, slippageBps: bps, ...(routeFilter === undefined ? {} : { routeFilter }) };
}
