/**
 * What the quote engine answers (quote-engine.ts), whatever the transport: a priced route, where
 * its pool states came from and how fresh they were. Every adapter (GET /quote, the gRPC quote
 * stream, and the ones to come) writes its wire format from these types and nothing else.
 *
 * u64 amounts are bigint here; adapters write them as decimal strings.
 */
import type { SwapMode } from '../dex/index.js';
import type { Slippage } from './slippage.js';

/**
 * A quote's /quote body serialized once (answer-json.ts): its UTF-8 bytes `[0, length)` of `bytes`,
 * the part before the fields that change with every response (`[0, headEnd)`) followed by the part
 * after them. The bytes live outside the V8 heap (an array buffer of their own, never a pooled
 * Buffer's 8 KB slab): a memoized body is not copied by the scavenger when it survives, as a string
 * of ~1 KB was on every recomputation under pool updates. `bytes` may be longer than `length` (room
 * for the next body of the same memo key, which the memo writes in place: see QuoteMemo).
 */
export interface QuoteBodyParts {
  readonly bytes: Uint8Array;
  readonly length: number;
  readonly headEnd: number;
  /**
   * How many times these parts were rewritten (answer-json.ts `routeBodyParts` into an owner's
   * parts): the parts object and this number together name one route, so a cache of what a route
   * renders (swap-api-quote.ts) can key on them.
   */
  readonly revision: number;
}

/** Body parts their owner lets the writer rewrite in place (the quote memo's entry, answer-json.ts `routeBodyParts`). */
export interface OwnedBodyParts extends QuoteBodyParts {
  bytes: Uint8Array;
  length: number;
  headEnd: number;
  revision: number;
}

/** Where the pool states behind an answer came from. */
export const QuoteSource = {
  /** The pool cache (spec 02 source `cache`). */
  Cache: 'cache',
  /** The RPC fallback: pool accounts read now over Solana JSON-RPC (spec 02 source `rpc`). */
  Rpc: 'rpc',
  /** An external aggregator's quote API (the last fallback of the quote API; not wired yet). */
  External: 'external',
  /**
   * A quote another replica answered, read from the shared quote cache (spec 03 `quote:` keys,
   * shared-quote-cache.ts) before the RPC fallback; its `stateAgeMs` counts the time since.
   */
  Shared: 'shared',
} as const;
export type QuoteSource = (typeof QuoteSource)[keyof typeof QuoteSource];

/** One swap through one pool: a route is the ordered list of its hops. */
export interface RouteHop {
  /** Pool account, base58. */
  readonly pool: string;
  /** The engine's DEX name (`dexa_amm`, `dexc_whirlpool`, ...). */
  readonly dex: string;
  /** Mint sold into this hop; hop i's outputMint is hop i+1's inputMint. */
  readonly inputMint: string;
  readonly outputMint: string;
  /** Atoms of inputMint sold into this hop. */
  readonly inAmount: bigint;
  /** Atoms of outputMint bought from this hop. */
  readonly outAmount: bigint;
  /** The pool's trade fee on this hop, in atoms of `feeMint`. */
  readonly fee: bigint;
  /** The mint `fee` is counted in: the input mint, or the output mint for pools that take it there. */
  readonly feeMint: string;
  /** Slot of the pool state this hop was computed from. */
  readonly slot: bigint;
}

/**
 * A priced route: the part of an answer that only the pool states decide (nothing here moves with
 * time), so the memo shares one between many answers. Immutable.
 */
export interface RouteQuote {
  /** ExactIn: inputAmount was asked, outputAmount found; ExactOut: the other way round. */
  readonly mode: SwapMode;
  readonly inputMint: string;
  readonly outputMint: string;
  /** Atoms of inputMint sold along the route. */
  readonly inputAmount: bigint;
  /** Atoms of outputMint bought. */
  readonly outputAmount: bigint;
  /** Over the whole route, as a fraction (0.01 = 1%). */
  readonly priceImpact: number;
  /** At least one hop, in order. */
  readonly hops: readonly RouteHop[];
  /** Slot of the oldest pool state the route used. */
  readonly slot: bigint;
}

/** A successful quote. */
export interface QuoteAnswer {
  readonly ok: true;
  readonly quote: RouteQuote;
  readonly source: QuoteSource;
  /** Age in ms of the oldest pool state used, when answered (0 for state read from RPC now). */
  readonly stateAgeMs: number;
  /** The newest slot the engine had seen when it answered. */
  readonly contextSlot: bigint;
  /** The request's tolerance and the bounds it gives (minimum output, maximum input). */
  readonly slippage: Slippage;
  /**
   * The GET /quote body of this answer without its per-answer fields, serialized once per memoized
   * route (answer-json.ts); undefined when the answer was not memoized (RPC answers).
   */
  readonly body: QuoteBodyParts | undefined;
}

/**
 * The /quote response as data (docs/architecture.md §3 field list); `quoteToJson` writes it. The single-pool
 * fields `pool`, `dex` and `fee` are the first hop's.
 */
export interface Quote {
  inputMint: string;
  outputMint: string;
  swapMode: SwapMode;
  inputAmount: bigint;
  outputAmount: bigint;
  pool: string;
  dex: string;
  priceImpact: number;
  fee: bigint;
  /** Slot of the pool state used. */
  slot: bigint;
  /** Age of that state in ms. */
  stateAgeMs: number;
  /** The newest slot the engine has seen. */
  contextSlot: bigint;
  slippageBps: number;
  /** Exact in: the output less slippage; exact out: the output. */
  minOutputAmount: bigint;
  /** Exact out: the input plus slippage; exact in: the input. */
  maxInputAmount: bigint;
  source: QuoteSource;
  route: RouteHop[];
}

/** The flat /quote model of an answer. */
export function quoteOfAnswer(a: QuoteAnswer): Quote {
  const q = a.quote;
  const first = q.hops[0]!;
  return {
    inputMint: q.inputMint,
    outputMint: q.outputMint,
    swapMode: q.mode,
    inputAmount: q.inputAmount,
    outputAmount: q.outputAmount,
    pool: first.pool,
    dex: first.dex,
    priceImpact: q.priceImpact,
    fee: first.fee,
    slot: q.slot,
    stateAgeMs: a.stateAgeMs,
    contextSlot: a.contextSlot,
    slippageBps: a.slippage.bps,
    minOutputAmount: a.slippage.minOutputAmount,
    maxInputAmount: a.slippage.maxInputAmount,
    source: a.source,
    route: [...q.hops],
  };
}
