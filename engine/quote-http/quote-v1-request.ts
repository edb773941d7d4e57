/**
 * The JSON bodies of `POST /v1/quote` and `POST /v1/quote/batch`, validated into the engine's
 * `QuoteRequest` (400 TP_ERR_BAD_PARAMETER naming the field, as a value: no exception). The route
 * filter's fields (`dexes`, `excludeDexes`, `onlyDirectRoutes`) are read as every transport reads
 * them (engine/quote route-filter.ts).
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
import { SwapMode } from '../dex/index.js';
import { MAX_BATCH_QUOTES, MAX_SLIPPAGE_BPS, badParameter, parseDexList, routeFilterOf, type PubkeyCheck, type QuoteFailure, type QuoteRequest } from '../quote/index.js';

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
