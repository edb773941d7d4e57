import type { Logger } from '../../obs/index.js';
import { QuoteSource, decodeSharedQuote, encodeSharedQuote, isSharedQuoteRequest } from '../../quote/index.js';
import type { QuoteAnswer, QuoteRequest, RouteQuote, SharedQuoteCache } from '../../quote/index.js';
import type { KvEntry } from './kv-store.js';
import type { KeySpace } from './key-space.js';
import { QuoteCacheReader, QuoteCacheWriter, type QuoteCacheReaderStats, type QuoteCacheWriterStats } from './quote-cache.js';

/**
 * The quote engine's shared quote cache (engine/quote `SharedQuoteCache`) over the platform's key
 * space: every answer becomes a `quote:{input}:{output}:{amount}` key and one
 * `price:{token}:{dex}` key per hop (5 min each), written in batches off the quote path
 * (QuoteCacheWriter); a replica whose pool cache cannot answer reads `quote:` before RPC
 * (QuoteCacheReader, 20 ms budget, any failure a miss).
 *
 * Cost on the quote path: `record` is a Map lookup by the answer's route object (the engine's memo
 * shares one route between all answers of a pair and amount while its pools do not change), and,
 * for the first answer of a route since the last flush, one small closure. Keys and JSON are made
 * at flush time. A Redis that is down or slow costs counted drops, never a wait.
 *
 * `price:` values: `price` = the hop's output atoms per input atom at the quoted size (fee
 * included), `quoteMint` = the hop's output mint, `timestamp` = when its pool state was read (Unix
 * ms). The key names no quote token: the latest pair quoted through that DEX wins.
 *
 * `read: false` (the in-process store) writes the keys but never reads them back: a process reading
 * its own answers gains nothing over its pool cache, and would answer from them where the engine
 * goes to RPC today.
 */

export interface KvQuoteCacheOptions {
  /**
   * Read `quote:` before the RPC fallback. Default: only over Redis (a store other replicas write);
   * the in-process store is written, never read.
   */
  read?: boolean;
  /** Writer batch interval, ms. Default 50. */
  flushIntervalMs?: number;
  /** Routes waiting at most between flushes. Default 10,000. */
  maxPending?: number;
  /** Read budget, ms. Default 20. */
  readTimeoutMs?: number;
  /** Unix ms clock. Default Date.now. */
  now?: () => number;
  logger?: Logger;
}

export interface KvQuoteCacheStats {
  writer: QuoteCacheWriterStats;
  reader: QuoteCacheReaderStats;
  /** Stored answers read but not used: too old for the request, or not one for it. */
  refused: number;
  /** Stored answers used. */
  used: number;
}

export class KvQuoteCache implements SharedQuoteCache {
  readonly writer: QuoteCacheWriter;
  readonly reader: QuoteCacheReader;
  private readonly read: boolean;
  private readonly now: () => number;
  private refused = 0;
  private used = 0;
  /** The memo body revision of each pending write (`record`). */
  private readonly pendingRevision = new WeakMap<object, number>();

  constructor(
    readonly keys: KeySpace,
    options: KvQuoteCacheOptions = {},
  ) {
    this.writer = new QuoteCacheWriter(keys, {
      ...(options.flushIntervalMs === undefined ? {} : { flushIntervalMs: options.flushIntervalMs }),
      ...(options.maxPending === undefined ? {} : { maxPending: options.maxPending }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    });
    this.reader = new QuoteCacheReader(keys, options.readTimeoutMs === undefined ? {} : { timeoutMs: options.readTimeoutMs });
    this.read = options.read ?? keys.store.kind === 'redis';
    this.now = options.now ?? Date.now;
  }

  record(request: QuoteRequest, answer: QuoteAnswer): void {
    // Repeats of one route coalesce. A memoized answer is named by its memo body and that body's
    // revision (the memo rewrites its entry in place, and builds the route anew on every read); an
    // answer without one (RPC, external) by its route.
    const body = answer.body;
    const key: object = body ?? answer.quote;
    const revision = body?.revision ?? 0;
    if (this.writer.isPending(key) && this.pendingRevision.get(key) === revision) return;
    // A shared answer is not written back: its age would restart, and its author wrote it already.
    if (answer.source === QuoteSource.Shared || !isSharedQuoteRequest(request)) return;
    // The engine rewrites its cache answer on the next quote: keep a copy of the fields (the copy
    // holds the route as it is now).
    const copy: QuoteAnswer = { ...answer };
    const route = copy.quote;
    const answeredAt = this.now();
    this.pendingRevision.set(key, revision);
    // A newer revision of the same key replaces the pending write.
    this.writer.offerLazy(key, () => this.entriesOf(route, copy, answeredAt));
  }

  async lookup(request: QuoteRequest, maxStateAgeMs: number): Promise<QuoteAnswer | null> {
    if (!this.read || !isSharedQuoteRequest(request)) return null;
    const text = await this.reader.get(request.inputMint, request.outputMint, request.amount);
    if (text === null) return null;
    const answer = decodeSharedQuote(text, request, this.now(), maxStateAgeMs);
    if (answer === null) this.refused++;
    else this.used++;
    return answer;
  }

  stats(): KvQuoteCacheStats {
    return { writer: this.writer.stats(), reader: this.reader.stats(), refused: this.refused, used: this.used };
  }

  /** Writes what is queued and stops taking answers. */
  close(): Promise<void> {
    return this.writer.close();
  }

  private entriesOf(route: RouteQuote, answer: QuoteAnswer, answeredAt: number): KvEntry[] {
    const out = [this.keys.quoteEntry(route.inputMint, route.outputMint, route.inputAmount, encodeSharedQuote(answer, answeredAt))];
    const readAt = answeredAt - answer.stateAgeMs;
    for (const hop of route.hops) {
      if (hop.inAmount === 0n) continue;
      const price = Number(hop.outAmount) / Number(hop.inAmount);
      out.push(this.keys.priceEntry(hop.inputMint, hop.dex, { price, timestamp: readAt, quoteMint: hop.outputMint }));
    }
    return out;
  }
}
