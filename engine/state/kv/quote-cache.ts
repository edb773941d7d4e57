import { LogThrottle } from '../../obs/index.js';
import type { Logger } from '../../obs/index.js';
import type { KvEntry } from './kv-store.js';
import type { KeySpace } from './key-space.js';

/**
 * The quote service's side of the key space: `quote:` and `price:` keys written as it quotes, and
 * `quote:` read by a replica before it goes to RPC.
 *
 * QuoteCacheWriter keeps the quote path free of I/O: `offerQuote` / `offerPrice` only put the
 * entry in a map (the newest value per key wins) and arm a timer; every `flushIntervalMs` the
 * pending entries go to the store in one pipelined round trip, one flush at a time. While the
 * store is slow or down at most `maxPending` keys wait; new keys beyond that are dropped and
 * counted (a cache may miss; the quote path must not grow without bound or wait).
 *
 * `offerLazy` defers the encoding too: the quote path hands over a function, called at flush time
 * (once per coalescing key per flush), so a quote served a thousand times in 50 ms is serialized once.
 */

/** An entry, or what makes entries at flush time. */
type PendingWrite = KvEntry | (() => readonly KvEntry[]);

export interface QuoteCacheWriterOptions {
  /** Default 50 ms. */
  flushIntervalMs?: number;
  /** Keys waiting at most. Default 10,000. */
  maxPending?: number;
  logger?: Logger;
}

export interface QuoteCacheWriterStats {
  offered: number;
  written: number;
  /** Offers refused because `maxPending` keys were waiting, plus entries of failed flushes. */
  dropped: number;
  flushes: number;
  errors: number;
  pending: number;
}

export class QuoteCacheWriter {
  private pending = new Map<unknown, PendingWrite>();
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private closed = false;
  private readonly flushIntervalMs: number;
  private readonly maxPending: number;
  private readonly logger: Logger | undefined;
  private readonly throttle = new LogThrottle();
  private readonly counts = { offered: 0, written: 0, dropped: 0, flushes: 0, errors: 0 };

  constructor(
    private readonly keys: KeySpace,
    options: QuoteCacheWriterOptions = {},
  ) {
    this.flushIntervalMs = options.flushIntervalMs ?? 50;
    this.maxPending = options.maxPending ?? 10_000;
    this.logger = options.logger;
  }

  /** Queues `quote:{input}:{output}:{amount}` = `quoteJson` (5 min). Never waits. */
  offerQuote(input: string, output: string, amount: bigint, quoteJson: string): void {
    this.offer(this.keys.quoteEntry(input, output, amount, quoteJson));
  }

  /** Queues `price:{token}:{dex}` = {price, timestamp} (5 min). Never waits. */
  offerPrice(token: string, dex: string, price: number, timestamp: number): void {
    this.offer(this.keys.priceEntry(token, dex, { price, timestamp }));
  }

  /**
   * Queues the entries `produce` makes at flush time, coalesced by `coalesceKey` (an object or a
   * key; the newest offer per coalescing key wins). `produce` runs off the caller's path; if it
   * throws, nothing of it is written and one drop is counted. Never waits.
   */
  offerLazy(coalesceKey: unknown, produce: () => readonly KvEntry[]): void {
    this.put(coalesceKey, produce);
  }

  /** Whether something is queued under `coalesceKey` (a caller may then skip building its offer). */
  isPending(coalesceKey: unknown): boolean {
    return this.pending.has(coalesceKey);
  }

  private offer(entry: KvEntry): void {
    this.put(entry.key, entry);
  }

  private put(coalesceKey: unknown, write: PendingWrite): void {
    if (this.closed) return;
    this.counts.offered++;
    if (this.pending.size >= this.maxPending && !this.pending.has(coalesceKey)) {
      this.counts.dropped++;
      return;
    }
    this.pending.set(coalesceKey, write);
    if (this.timer === undefined && this.inFlight === undefined) this.arm();
  }

  private arm(): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.flushIntervalMs);
    this.timer.unref();
  }

  /** Writes what is pending now (after the flush in flight, if any). Never throws. */
  async flush(): Promise<void> {
    while (this.inFlight !== undefined) await this.inFlight;
    if (this.pending.size === 0) return;
    const batch = this.entriesOf(this.pending);
    this.pending = new Map();
    if (batch.length === 0) return;
    this.inFlight = this.write(batch);
    try {
      await this.inFlight;
    } finally {
      this.inFlight = undefined;
      if (this.pending.size > 0 && this.timer === undefined && !this.closed) this.arm();
    }
  }

  private entriesOf(pending: Map<unknown, PendingWrite>): KvEntry[] {
    const out: KvEntry[] = [];
    for (const write of pending.values()) {
      if (typeof write !== 'function') {
        out.push(write);
        continue;
      }
      try {
        out.push(...write());
      } catch (err) {
        this.counts.dropped++;
        const suppressed = this.throttle.take('encode');
        if (suppressed >= 0) this.logger?.warn({ err, suppressed }, 'quote cache entry could not be encoded');
      }
    }
    return out;
  }

  private async write(batch: KvEntry[]): Promise<void> {
    this.counts.flushes++;
    try {
      await this.keys.store.setMany(batch);
      this.counts.written += batch.length;
    } catch (err) {
      this.counts.errors++;
      this.counts.dropped += batch.length;
      const suppressed = this.throttle.take('flush');
      if (suppressed >= 0) this.logger?.warn({ err, entries: batch.length, suppressed }, 'quote cache write failed');
    }
  }

  stats(): QuoteCacheWriterStats {
    return { ...this.counts, pending: this.pending.size };
  }

  /** Flushes what is pending and stops taking offers. */
  async close(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
    this.closed = true;
  }
}

export interface QuoteCacheReaderStats {
  hits: number;
  misses: number;
  errors: number;
}

/**
 * Reads `quote:` keys for a quote service replica, before it goes to RPC. A failing or slow store
 * is a miss, never an error of the quote: the read gives up after `timeoutMs` (default 20 ms).
 */
export class QuoteCacheReader {
  private readonly counts: QuoteCacheReaderStats = { hits: 0, misses: 0, errors: 0 };
  private readonly timeoutMs: number;

  constructor(
    private readonly keys: KeySpace,
    options: { timeoutMs?: number } = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 20;
  }

  /** The cached quote response (JSON text), or null on a miss, an error or a timeout. */
  async get(input: string, output: string, amount: bigint): Promise<string | null> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.timeoutMs);
    });
    try {
      const value = await Promise.race([this.keys.getQuoteText(input, output, amount), timeout]);
      if (value === 'timeout') {
        this.counts.errors++;
        return null;
      }
      if (value === null) this.counts.misses++;
      else this.counts.hits++;
      return value;
    } catch {
      this.counts.errors++;
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  stats(): QuoteCacheReaderStats {
    return { ...this.counts };
  }
}
