/**
 * The engine's hook to a quote cache shared between quote service replicas (spec 03's `quote:` and
 * `price:` keys): every answer is offered to it, and a replica whose own pool cache cannot answer
 * asks it before going to RPC. The interface lives here so the engine needs nothing above it; the
 * implementation over the platform's key space is engine/state `KvQuoteCache`, and engine/app
 * wires one in (Redis when REDIS_URL is set).
 *
 * The stored value is the GET /quote response (answer-json.ts) plus what a replica needs to trust it
 * again: `cachedAt` (Unix ms of the answer) and each hop's `slot`. Only exact-in quotes without a
 * route filter are shared: the spec's key `quote:{input}:{output}:{amount}` names neither a swap
 * mode nor a filter, so any other answer under it could be read back as the wrong quote.
 */
import { SwapMode } from '../dex/index.js';
import { QuoteSource, quoteOfAnswer, type QuoteAnswer, type RouteHop, type RouteQuote } from './quote-answer.js';
import { quoteToJson } from './answer-json.js';
import type { QuoteRequest } from './quote-request.js';
import { slippageOf } from './slippage.js';

export interface SharedQuoteCache {
  /**
   * Offered every answer the engine gives, synchronously, on the quote path. Must not do I/O, wait,
   * or throw, and should cost O(1): queue and return. `answer` may be the engine's reused object
   * (rewritten by its next quote): read its fields now; what it points to (route, slippage) is
   * immutable and may be kept.
   */
  record(request: QuoteRequest, answer: QuoteAnswer): void;
  /**
   * Asked when the engine's own cache failed and before the RPC fallback runs: an answer another
   * replica stored whose pool states are at most `maxStateAgeMs` old now, labelled
   * `source: 'shared'`, or null. Bounded in time by the implementation; never rejects.
   */
  lookup(request: QuoteRequest, maxStateAgeMs: number): Promise<QuoteAnswer | null>;
}

/** Whether an answer to `request` may be stored under, and read from, the spec's quote key. */
export function isSharedQuoteRequest(request: QuoteRequest): boolean {
  if (request.mode !== SwapMode.ExactIn) return false;
  const f = request.routeFilter;
  return f === undefined || (f.dexes === undefined && f.excludeDexes === undefined && !f.onlyDirectRoutes);
}

/** The stored value of `answer` (read its fields before the engine's next quote), answered at `cachedAt` (Unix ms). */
export function encodeSharedQuote(answer: QuoteAnswer, cachedAt: number): string {
  const json = quoteToJson(quoteOfAnswer(answer));
  const hops = json.route as Record<string, unknown>[];
  answer.quote.hops.forEach((hop, i) => {
    hops[i]!.slot = hop.slot.toString();
  });
  json.cachedAt = cachedAt;
  return JSON.stringify(json);
}

/**
 * The answer a stored value gives `request` at `now` (Unix ms): null when it is not one (malformed,
 * another pair, amount or mode) or its states are older than `maxStateAgeMs` (age when stored plus
 * the time since). The slippage bounds are the request's own; `source` is `shared`.
 */
export function decodeSharedQuote(text: string, request: QuoteRequest, now: number, maxStateAgeMs: number): QuoteAnswer | null {
  let v: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed === null || typeof parsed !== 'object') return null;
    v = parsed as Record<string, unknown>;
  } catch {
    return null;
  }
  if (v.swapMode !== SwapMode.ExactIn || v.inputMint !== request.inputMint || v.outputMint !== request.outputMint) return null;
  const inputAmount = u64(v.inputAmount);
  const outputAmount = u64(v.outputAmount);
  const slot = u64(v.slot);
  const contextSlot = u64(v.contextSlot);
  const { stateAgeMs, cachedAt, priceImpact } = v;
  if (inputAmount !== request.amount || outputAmount === undefined || slot === undefined || contextSlot === undefined) return null;
  if (!isCount(stateAgeMs) || !isCount(cachedAt) || typeof priceImpact !== 'number') return null;
  const age = stateAgeMs + Math.max(0, now - cachedAt);
  if (age > maxStateAgeMs) return null;
  if (!Array.isArray(v.route) || v.route.length === 0) return null;
  const hops: RouteHop[] = [];
  for (const h of v.route as unknown[]) {
    const hop = hopOf(h, slot);
    if (hop === undefined) return null;
    hops.push(hop);
  }
  if (hops[0]!.inputMint !== request.inputMint || hops[hops.length - 1]!.outputMint !== request.outputMint) return null;
  const quote: RouteQuote = { mode: SwapMode.ExactIn, inputMint: request.inputMint, outputMint: request.outputMint, inputAmount, outputAmount, priceImpact, hops, slot };
  const slippage = slippageOf(SwapMode.ExactIn, inputAmount, outputAmount, request.slippageBps);
  return { ok: true, quote, source: QuoteSource.Shared, stateAgeMs: age, contextSlot, slippage, body: undefined };
}

function hopOf(h: unknown, routeSlot: bigint): RouteHop | undefined {
  if (h === null || typeof h !== 'object') return undefined;
  const o = h as Record<string, unknown>;
  const inAmount = u64(o.inAmount);
  const outAmount = u64(o.outAmount);
  const fee = u64(o.fee);
  const slot = o.slot === undefined ? routeSlot : u64(o.slot);
  if (inAmount === undefined || outAmount === undefined || fee === undefined || slot === undefined) return undefined;
  if (typeof o.pool !== 'string' || typeof o.dex !== 'string' || typeof o.inputMint !== 'string' || typeof o.outputMint !== 'string' || typeof o.feeMint !== 'string') {
    return undefined;
  }
  return { pool: o.pool, dex: o.dex, inputMint: o.inputMint, outputMint: o.outputMint, inAmount, outAmount, fee, feeMint: o.feeMint, slot };
}

const U64_TEXT = /^(0|[1-9][0-9]{0,19})$/;
const U64_MAX = (1n << 64n) - 1n;

function u64(value: unknown): bigint | undefined {
  if (typeof value !== 'string' || !U64_TEXT.test(value)) return undefined;
  const n = BigInt(value);
  return n <= U64_MAX ? n : undefined;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}
