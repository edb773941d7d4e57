/**
 * The JSON bodies of `POST /v1/quote` and `POST /v1/quote/batch`, validated into the engine's
 * `QuoteRequest` (400 TP_ERR_BAD_PARAMETER naming the field, as a value: no exception), and the
 * route filter (`dexes`, `excludeDexes`, `onlyDirectRoutes`) every REST path shares.
 *
 * Body of one quote (u64 amounts as decimal strings, so no client loses precision in a JSON number):
 * ```json
 * { "inputMint": "<base58>", "outputMint": "<base58>", "amount": "1000000",
 *   "swapMode": "ExactIn", "slippageBps": 50, "dexes": ["Raydium", "dexc_whirlpool"],
 *   "excludeDexes": [], "onlyDirectRoutes": false, "maxStateAgeMs": 5000 }
 * ```
 * A batch is `{ "requests": [ <one quote>, ... ] }`, 1 to MAX_BATCH_QUOTES items; each item is
 * validated on its own, so one bad item is that item's error, never the batch's.
 */
import { U64_MAX } from '../cache/index.js';
import { SwapMode, type Dex } from '../dex/index.js';
import { DEX_LABELS, dexOfLabel } from '../swap-api/index.js';
import { badParameter, type QuoteFailure } from './quote-failure.js';
import type { PubkeyCheck } from './quote-json.js';
import type { QuoteRequest, RouteFilter } from './quote-request.js';
import { MAX_SLIPPAGE_BPS } from './slippage.js';

/** Most requests in one `POST /v1/quote/batch`. */
export const MAX_BATCH_QUOTES = 100;

const KNOWN_DEXES = (Object.entries(DEX_LABELS) as [Dex, string][]).map(([dex, label]) => `${dex} (${label})`).join(', ');

/**
 * A DEX list: an array of names, or one comma-separated string (the query form). Each name is a DEX
 * kind (`dexa_amm`) or its public label (`Raydium`, any case). `strict`: an unknown name is a 400
 * naming the parameter (the /v1 paths); otherwise it is dropped and matches nothing, as the public
 * swap API does (`GET /swap/v1/quote`). Undefined for absent or empty (no filter).
 */
export function parseDexList(raw: unknown, parameter: string, strict: boolean): ReadonlySet<string> | undefined | QuoteFailure {
  if (raw === undefined || raw === null) return undefined;
  let names: unknown[];
  if (typeof raw === 'string') names = raw.split(',');
  else if (Array.isArray(raw)) names = raw;
  else return badParameter(parameter, `parameter ${parameter} must be an array of DEX names or a comma-separated string`);
  const set = new Set<string>();
  let given = 0;
  for (const name of names) {
    if (typeof name !== 'string') return badParameter(parameter, `parameter ${parameter} must hold strings`);
    if (name.trim() === '') continue;
    given++;
    const dex = dexOfLabel(name);
    if (dex !== undefined) set.add(dex);
    else if (strict) return badParameter(parameter, `parameter ${parameter}: unknown DEX ${JSON.stringify(name.trim())} (known: ${KNOWN_DEXES})`);
  }
  // Names given but none known (lenient form): an empty set, which admits no pool.
  return given === 0 ? undefined : set;
}

/** The route filter of the three parameters; undefined when none narrows anything. */
export function routeFilterOf(dexes: ReadonlySet<string> | undefined, excludeDexes: ReadonlySet<string> | undefined, onlyDirectRoutes: boolean): RouteFilter | undefined {
  if (dexes === undefined && excludeDexes === undefined && !onlyDirectRoutes) return undefined;
  return { dexes, excludeDexes, onlyDirectRoutes };
}

/** A JSON object (not an array, not null). */
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseMint(body: Record<string, unknown>, field: string, pubkeys: PubkeyCheck): string | QuoteFailure {
  const value = body[field];
  if (value === undefined || value === null || value === '') return badParameter(field, `missing field: ${field}`);
  if (typeof value !== 'string' || !pubkeys.isPubkey(value)) return badParameter(field, `field ${field} is not a base58 public key`);
  return value;
}

/**
 * One quote body into a QuoteRequest, or the failure of its first bad field. `defaultSlippageBps`
 * is the service's SLIPPAGE_BPS.
 */
export function parseQuoteBody(body: unknown, defaultSlippageBps: number, pubkeys: PubkeyCheck): QuoteRequest | QuoteFailure {
  if (!isObject(body)) return badParameter('body', 'the request body must be a JSON object');
  const inputMint = parseMint(body, 'inputMint', pubkeys);
  if (typeof inputMint !== 'string') return inputMint;
  const outputMint = parseMint(body, 'outputMint', pubkeys);
  if (typeof outputMint !== 'string') return outputMint;
  if (outputMint === inputMint) return badParameter('outputMint', 'field outputMint must differ from inputMint');

  const amount = body['amount'];
  if (amount === undefined || amount === null || amount === '') return badParameter('amount', 'missing field: amount');
  if (typeof amount !== 'string') return badParameter('amount', 'field amount must be a decimal string (u64 amounts are strings in JSON)');
  if (!/^[0-9]{1,20}$/.test(amount)) return badParameter('amount', 'field amount is not an unsigned 64-bit integer');
  const value = BigInt(amount);
  if (value > U64_MAX) return badParameter('amount', 'field amount is not an unsigned 64-bit integer');
  if (value === 0n) return badParameter('amount', 'field amount must be greater than zero');

  let mode: SwapMode = SwapMode.ExactIn;
  const swapMode = body['swapMode'];
  if (swapMode !== undefined && swapMode !== null) {
    if (swapMode === SwapMode.ExactOut) mode = SwapMode.ExactOut;
    else if (swapMode !== SwapMode.ExactIn) return badParameter('swapMode', 'field swapMode must be ExactIn or ExactOut');
  }

  let slippageBps = defaultSlippageBps;
  const bps = body['slippageBps'];
  if (bps !== undefined && bps !== null) {
    if (typeof bps !== 'number' || !Number.isInteger(bps) || bps < 0 || bps > MAX_SLIPPAGE_BPS) {
      return badParameter('slippageBps', `field slippageBps is not an integer from 0 to ${MAX_SLIPPAGE_BPS}`);
    }
    slippageBps = bps;
  }

  let maxStateAgeMs: number | undefined;
  const age = body['maxStateAgeMs'];
  if (age !== undefined && age !== null) {
    if (typeof age !== 'number' || !Number.isSafeInteger(age) || age < 0) {
      return badParameter('maxStateAgeMs', 'field maxStateAgeMs is not a non-negative integer of milliseconds');
    }
    maxStateAgeMs = age;
  }

  const dexes = parseDexList(body['dexes'], 'dexes', true);
  if (isFailure(dexes)) return dexes;
  const excludeDexes = parseDexList(body['excludeDexes'], 'excludeDexes', true);
  if (isFailure(excludeDexes)) return excludeDexes;
  const direct = body['onlyDirectRoutes'];
  if (direct !== undefined && direct !== null && typeof direct !== 'boolean') {
    return badParameter('onlyDirectRoutes', 'field onlyDirectRoutes must be true or false');
  }
  const routeFilter = routeFilterOf(dexes, excludeDexes, direct === true);

  return {
    inputMint,
    outputMint,
    mode,
    amount: value,
    amountText: amount,
    maxStateAgeMs,
    slippageBps,
    ...(routeFilter === undefined ? {} : { routeFilter }),
  };
}

function isFailure(value: unknown): value is QuoteFailure {
  return isObject(value) && value['ok'] === false;
}

/**
 * The items of a batch body, or the failure of the batch itself (not an object, no `requests`
 * array, empty, or more than MAX_BATCH_QUOTES: 400 naming the limit).
 */
export function batchItemsOf(body: unknown): unknown[] | QuoteFailure {
  if (!isObject(body)) return badParameter('body', 'the request body must be a JSON object {"requests": [...]}');
  const requests = body['requests'];
  if (!Array.isArray(requests)) return badParameter('requests', 'field requests must be an array of quote requests');
  if (requests.length === 0) return badParameter('requests', 'field requests must hold at least one quote request');
  if (requests.length > MAX_BATCH_QUOTES) {
    return badParameter('requests', `field requests holds ${requests.length} quote requests; the limit is ${MAX_BATCH_QUOTES}`);
  }
  return requests;
}
