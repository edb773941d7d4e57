/**
 * Spec 02 `HybridMode.ValidateInterval`: on that interval, a sample of the cached pools is read
 * again over RPC and compared with the cache. A pool whose state read now differs from the cached
 * one is a mismatch: counted (`quote_service_cache_validation_mismatches_total`, beside
 * `quote_service_cache_validation_checks_total` for every pool compared) and refreshed with the
 * state just read.
 *
 * - Sample: `sampleSize` pools per round, taken round-robin over the cache's pools (a cursor that
 *   moves on each round), so every pool is checked within ⌈pools / sampleSize⌉ rounds.
 * - Compared: the decoded pool account (price, tick, liquidity, reserves, active bin, fees: what the
 *   swap math reads of it) and its mints' transfer fees. Tick and bin arrays are not compared.
 * - A read older than the cached state (the RPC node is behind) is skipped: nothing to say.
 * - Refresh: a newer read is stored under the slot rule; a read at the cached slot that differs
 *   overwrites the entry (the cached state is the wrong one: the same slot cannot hold two states).
 * - A failed read is counted in `failed` (the RPC fallback's own errors are not touched).
 */
import type { PoolCache } from '../cache/index.js';
import { poolStateOfLoaded } from '../cache/index.js';
import type { Logger, QuoteMetrics } from '../obs/index.js';
import type { LoadedPool, PoolLoader } from '../pools/index.js';
import { invalidArgument } from '../errors.js';

export const DEFAULT_VALIDATION_SAMPLE_SIZE = 16;

export interface PoolValidatorOptions {
  cache: PoolCache;
  loader: PoolLoader;
  metrics: QuoteMetrics;
  /** `hybridMode.validateInterval` in ms. */
  intervalMs: number;
  /** Pools read per round. Default 16. */
  sampleSize?: number;
  logger?: Logger;
}

/** What one round did. */
export interface ValidationRound {
  /** Pools read and compared. */
  checked: number;
  /** Of those, the ones whose state differed from the cache (each refreshed). */
  mismatches: number;
  /** Reads that failed, or older than the cached state. */
  skipped: number;
  /** The mismatched pools' addresses. */
  pools: string[];
}

/** JSON of a value with bigints as text and byte arrays as lists: the comparable form of a state. */
function comparable(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? Array.from(v) : v));
}

/** True when `loaded` (read now) describes another state than the cache holds for its pool. */
export function differsFromCache(cache: PoolCache, id: number, loaded: LoadedPool): boolean {
  return comparable(cache.poolAt(id)) !== comparable(loaded.pool) || comparable(cache.transferFeesAt(id)) !== comparable(loaded.transferFees);
}

export class PoolValidator {
  readonly sampleSize: number;
  private readonly options: PoolValidatorOptions;
  private cursor = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<ValidationRound> | undefined;
  private closed = false;

  constructor(options: PoolValidatorOptions) {
    this.options = options;
    this.sampleSize = options.sampleSize ?? DEFAULT_VALIDATION_SAMPLE_SIZE;
    if (!(options.intervalMs > 0)) throw invalidArgument('intervalMs', options.intervalMs, `validate interval must be > 0 ms, got ${options.intervalMs}`);
    if (!Number.isInteger(this.sampleSize) || this.sampleSize < 1) throw invalidArgument('sampleSize', this.sampleSize, `validation sample size must be an integer >= 1, got ${this.sampleSize}`);
  }

  /** Runs a round every `intervalMs` (the timer does not keep the process alive). */
  start(): void {
    if (this.timer !== undefined || this.closed) return;
    this.timer = setInterval(() => {
      void this.validateOnce();
    }, this.options.intervalMs);
    this.timer.unref();
  }

  /** One round now (a round already running is joined, not doubled). Never rejects. */
  validateOnce(): Promise<ValidationRound> {
    this.running ??= this.round().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Stops the timer and waits for a round in flight. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private async round(): Promise<ValidationRound> {
    const { cache, loader, metrics, logger } = this.options;
    const result: ValidationRound = { checked: 0, mismatches: 0, skipped: 0, pools: [] };
    const all = cache.pools();
    if (all.length === 0) return result;
    const sample: string[] = [];
    const take = Math.min(this.sampleSize, all.length);
    for (let i = 0; i < take; i++) sample.push(all[(this.cursor + i) % all.length]!);
    this.cursor = (this.cursor + take) % all.length;
    let results;
    try {
      results = await loader.load(sample);
    } catch (err) {
      logger?.warn({ err, pools: sample.length }, 'cache validation read failed');
      result.skipped = sample.length;
      return result;
    }
    for (const r of results) {
      if (!r.ok) {
        result.skipped++;
        continue;
      }
      const loaded = r.value;
      const id = cache.idOf(loaded.address);
      const held = cache.slotOf(loaded.address);
      if (held === undefined || loaded.slot < held) {
        result.skipped++; // evicted meanwhile, or the node is behind the cache
        continue;
      }
      result.checked++;
      metrics.cacheValidationChecks.inc();
      if (!differsFromCache(cache, id, loaded)) continue;
      result.mismatches++;
      result.pools.push(loaded.address);
      metrics.cacheValidationMismatches.inc();
      try {
        cache.upsert(poolStateOfLoaded(loaded), loaded.slot === held);
      } catch (err) {
        logger?.warn({ err, pool: loaded.address }, 'cache validation could not refresh a pool');
      }
    }
    if (result.mismatches > 0) logger?.warn({ mismatches: result.mismatches, checked: result.checked, pools: result.pools }, 'cached pools differed from RPC; refreshed');
    return result;
  }
}
