/**
 * What a transport asks the quote engine (quote-engine.ts): one pair, one amount, exact in or exact
 * out, a slippage tolerance. Adapters build it from their wire format (GET /quote's query, a
 * StreamBatchQuotes pair) once it is validated; the engine trusts it.
 *
 * Extension points (the engine's, not the adapters'): a route filter (`dexes` / `excludeDexes` /
 * `onlyDirectRoutes`) narrows the candidates the engine reads from the cache and must be part of
 * the memo's key; a source restriction (`cache` / `rpc` / `external`) chooses among the engine's
 * paths in `QuoteEngine.quote`.
 */

import { isPubkey } from '../chain/index.js';
import type { SwapMode } from '../dex/index.js';

export interface QuoteRequest {
  /** Mint sold, base58 (validated). */
  readonly inputMint: string;
  /** Mint bought, base58 (validated, not inputMint). */
  readonly outputMint: string;
  /** ExactIn: `amount` is sold; ExactOut: `amount` is bought. */
  readonly mode: SwapMode;
  /** Atoms to sell (ExactIn) or to buy (ExactOut): 0 < amount <= u64 max. */
  readonly amount: bigint;
  /**
   * `amount` in decimal as the client wrote it (leading zeros allowed): the memo's key, so a repeated
   * request costs no bigint-to-text conversion.
   */
  readonly amountText: string;
  /** Oldest pool state the answer may use, in ms; undefined: the cache's staleness threshold. */
  readonly maxStateAgeMs: number | undefined;
  /** Tolerance of the answer's bounds (minimum output / maximum input), 0 to 10,000 bps. */
  readonly slippageBps: number;
  /** Which pools and route shapes the answer may use; undefined: every DEX, multi-hop allowed. */
  readonly routeFilter?: RouteFilter | undefined;
}

/**
 * Narrows the candidates of a request. Part of the memo's key: two requests with different filters
 * never share an answer.
 */
export interface RouteFilter {
  /** Only pools of these DEXes (engine DEX names: `dexa_amm`, ...); undefined: every DEX. */
  readonly dexes: ReadonlySet<string> | undefined;
  /** Never pools of these DEXes; undefined: none excluded. */
  readonly excludeDexes: ReadonlySet<string> | undefined;
  /** Direct pools of the pair only: no route through an intermediate token. */
  readonly onlyDirectRoutes: boolean;
}

/** Most requests in one batch (spec 03: `POST /v1/quote/batch`, up to 100; gRPC GetQuotes alike). */
export const MAX_BATCH_QUOTES = 100;

/** Tells base58 public keys from other strings. */
export interface PubkeyCheck {
  isPubkey(text: string): boolean;
}

/**
 * `isPubkey` (a base58 decode) with a memory of the strings it accepted, so the mints that every
 * request names are decoded once. Bounded: forgets them all when `max` are held.
 */
export class ValidatedPubkeys implements PubkeyCheck {
  private readonly known = new Set<string>();

  constructor(private readonly max = 4096) {}

  isPubkey(text: string): boolean {
    if (this.known.has(text)) return true;
    if (!isPubkey(text)) return false;
    if (this.known.size >= this.max) this.known.clear();
    this.known.add(text);
    return true;
  }
}
