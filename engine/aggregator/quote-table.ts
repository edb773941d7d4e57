/**
 * One source's quote table (spec 01: one for local quotes, one for external quotes, keyed by
 * pairID). It holds the latest quote, or the latest "cannot quote" error, per pair.
 *
 * Duplicate rule: a quote with the same route hash and the same output amount as the held one is a
 * duplicate: counted, not pushed downstream; it only refreshes the held quote's receipt time (an
 * upstream re-sends unchanged quotes every update interval, and that is what keeps them fresh).
 * Freshness rule: a held entry older than the staleness window (max(3 × update interval, 2 s)) is
 * not used, nor is anything held from an upstream whose stream is down.
 * Quote age rule: a held quote computed (`quoted_at_unix_ms`, or a later duplicate's) more than
 * MAX_QUOTE_AGE_MS ago is not used either, however recently it arrived. The external quote
 * service re-sends a pair's last poll result every update interval with its original quoted_at, so
 * a pair its provider's rate limit lets it poll only every 30 s, or a provider paused by a 429,
 * would otherwise be compared, scored and published on prices minutes old. The bound tolerates
 * modest clock skew between the upstream's host and ours.
 */
import type { WireQuote, WireQuoteError } from '../quote/index.js';

/** Spec rule: the staleness window for an upstream update interval. */
export function staleAfterMs(updateIntervalMs: number): number {
  return Math.max(3 * updateIntervalMs, 2000);
}

/** Quote age rule: the oldest quote (by when its upstream computed it) the aggregator uses. */
export const MAX_QUOTE_AGE_MS = 10_000;

export interface HeldEntry {
  /** The quote; undefined when the upstream reported it cannot quote the pair (see error). */
  readonly quote: WireQuote | undefined;
  readonly error: WireQuoteError | undefined;
  readonly outputAmount: bigint;
  /** When the entry (or a duplicate of it) last arrived, Unix ms. */
  receivedAtMs: number;
  /** When the upstream computed the quote or its newest duplicate (`quoted_at_unix_ms`), Unix ms. */
  quotedAtMs: number;
}

export const OfferResult = { Changed: 'changed', Duplicate: 'duplicate' } as const;
export type OfferResult = (typeof OfferResult)[keyof typeof OfferResult];

export class QuoteTable {
  private readonly entries = new Map<string, HeldEntry>();
  /** Duplicates seen since start. */
  duplicates = 0;

  constructor(
    private readonly staleAfter: number,
    private readonly maxQuoteAge: number = MAX_QUOTE_AGE_MS,
  ) {}

  /** Takes a quote from the upstream; says whether it changed the held entry. */
  offer(quote: WireQuote, now: number): OfferResult {
    const held = this.entries.get(quote.pairId);
    const error = quote.error ?? undefined;
    const quotedAtMs = Number(quote.quotedAtUnixMs);
    if (error !== undefined) {
      if (held !== undefined && held.quote === undefined && held.error?.code === error.code) {
        held.receivedAtMs = now;
        held.quotedAtMs = Math.max(held.quotedAtMs, quotedAtMs);
        this.duplicates++;
        return OfferResult.Duplicate;
      }
      this.entries.set(quote.pairId, { quote: undefined, error, outputAmount: 0n, receivedAtMs: now, quotedAtMs });
      return OfferResult.Changed;
    }
    const output = BigInt(quote.outputAmount);
    if (held?.quote !== undefined && held.quote.routeHash === quote.routeHash && held.outputAmount === output) {
      // The same quote computed again (a new poll with the same answer) confirms it as of then.
      held.receivedAtMs = now;
      held.quotedAtMs = Math.max(held.quotedAtMs, quotedAtMs);
      this.duplicates++;
      return OfferResult.Duplicate;
    }
    this.entries.set(quote.pairId, { quote, error: undefined, outputAmount: output, receivedAtMs: now, quotedAtMs });
    return OfferResult.Changed;
  }

  /** The held entry, whatever its age. */
  get(pairId: string): HeldEntry | undefined {
    return this.entries.get(pairId);
  }

  /** The held entry when it may be used: not stale, a quote not too old, and its upstream connected. */
  fresh(pairId: string, now: number, upstreamConnected: boolean): HeldEntry | undefined {
    if (!upstreamConnected) return undefined;
    const entry = this.entries.get(pairId);
    if (entry === undefined || now - entry.receivedAtMs > this.staleAfter) return undefined;
    // Quote age rule (a quote with no quoted_at, 0, is judged by its receipt alone).
    if (entry.quote !== undefined && entry.quotedAtMs > 0 && now - entry.quotedAtMs > this.maxQuoteAge) return undefined;
    return entry;
  }

  delete(pairId: string): void {
    this.entries.delete(pairId);
  }

  /** Forgets entries that last arrived before `cutoffMs`, except those `keep` names. */
  dropOlderThan(cutoffMs: number, keep: (pairId: string) => boolean): void {
    for (const [pairId, entry] of this.entries) {
      if (entry.receivedAtMs < cutoffMs && !keep(pairId)) this.entries.delete(pairId);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
