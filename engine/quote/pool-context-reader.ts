/**
 * Swap contexts for the split quote service. A PoolStateUpdateEvent carries a pool's reserves, slot,
 * fee and (with `state.rawData`) its account, but not the accounts beside it that concentrated and
 * DLMM swap math walks: tick arrays, bin arrays. In one process the scanner hands the cache those
 * along with the state; over the bus the quote service reads them itself: after an event for such a
 * pool is stored, the pool is read through the quote service's RPC loader (batched and coalesced:
 * one read in flight per pool, one more queued behind it whatever the number of events meanwhile)
 * and the result goes into the cache under the slot rule:
 *   - read at a newer slot than the cache holds → the whole loaded state replaces the entry;
 *   - read at the same slot → only the context is attached (the state is the event's, identical);
 *   - read at an older slot → dropped (a newer event already arrived; its own read follows).
 * So the split service quotes a concentrated or DLMM pool from the same state and context as the
 * one-process engine does, one RPC round trip later. AMM pools need no read (the event has all).
 */
import { poolStateOfLoaded } from '../cache/index.js';
import type { PoolCache } from '../cache/index.js';
import type { Dex } from '../dex/index.js';
import type { Logger } from '../obs/index.js';
import type { PoolLoader } from '../pools/index.js';

/** DEXes whose swap math needs accounts beyond the pool account. */
const CONTEXT_DEXES: ReadonlySet<Dex> = new Set<Dex>(['dexa_clmm', 'dexc_whirlpool', 'dexb_dlmm']);

export interface PoolContextReaderOptions {
  loader: PoolLoader;
  cache: PoolCache;
  logger?: Logger;
  /** Pools per load() call. Default 100. */
  batchSize?: number;
}

export interface PoolContextReaderStats {
  reads: number;
  replaced: number;
  contexts: number;
  older: number;
  failed: number;
}

export class PoolContextReader {
  private readonly options: PoolContextReaderOptions;
  private readonly queued = new Set<string>();
  private readonly inFlight = new Set<string>();
  private readonly again = new Set<string>();
  private flushScheduled = false;
  private readonly running = new Set<Promise<void>>();
  private closed = false;
  private readonly counters: PoolContextReaderStats = { reads: 0, replaced: 0, contexts: 0, older: 0, failed: 0 };

  constructor(options: PoolContextReaderOptions) {
    this.options = options;
  }

  get stats(): PoolContextReaderStats {
    return { ...this.counters };
  }

  /** True when the pool's DEX needs a context read after each event. */
  static needsContext(dex: string): boolean {
    return CONTEXT_DEXES.has(dex as Dex);
  }

  /** An event for `address` was stored: read its context when its DEX needs one. */
  request(address: string): void {
    if (this.closed) return;
    const entry = this.options.cache.get(address);
    if (entry === undefined || !CONTEXT_DEXES.has(entry.dex)) return;
    if (this.inFlight.has(address)) {
      this.again.add(address);
      return;
    }
    this.queued.add(address);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Resolves when every read in flight has landed. */
  async idle(): Promise<void> {
    while (this.running.size > 0 || this.flushScheduled) {
      await Promise.all([...this.running]);
      if (this.flushScheduled) await new Promise((r) => setImmediate(r));
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.idle();
  }

  private flush(): void {
    this.flushScheduled = false;
    const size = this.options.batchSize ?? 100;
    const all = [...this.queued];
    this.queued.clear();
    for (let i = 0; i < all.length; i += size) {
      const batch = all.slice(i, i + size);
      for (const a of batch) this.inFlight.add(a);
      const p = this.read(batch).finally(() => {
        this.running.delete(p);
        for (const a of batch) {
          this.inFlight.delete(a);
          if (this.again.delete(a)) this.request(a);
        }
      });
      this.running.add(p);
    }
  }

  private async read(addresses: string[]): Promise<void> {
    const { cache, loader } = this.options;
    this.counters.reads++;
    let results;
    try {
      results = await loader.load(addresses);
    } catch (err) {
      this.counters.failed += addresses.length;
      this.options.logger?.warn({ err, pools: addresses.length }, 'pool context read failed');
      return;
    }
    for (const result of results) {
      if (!result.ok) {
        this.counters.failed++;
        continue;
      }
      const loaded = result.value;
      const held = cache.slotOf(loaded.address);
      if (held === undefined) continue; // evicted meanwhile
      if (loaded.slot > held) {
        cache.upsert(poolStateOfLoaded(loaded));
        this.counters.replaced++;
      } else if (loaded.slot === held) {
        cache.updateContext(loaded.address, loaded.context, loaded.transferFees);
        this.counters.contexts++;
      } else {
        this.counters.older++;
      }
    }
  }
}
