/**
 * The RPC fallback's global bound (issue 11 item 8): a `PoolLoader` around the fallback's loader
 * that every fallback of the process reads through, whatever its client or stream.
 *
 * - **Coalescing.** A read of the same pool list as one already in flight shares its answer
 *   (no second RPC call): a thousand clients asking one pair while the cache fails make one read.
 * - **Concurrency cap.** At most `maxConcurrent` reads in flight; one more is refused at once.
 * - **Rate cap.** At most `maxPerSecond` reads started a second (token bucket, burst = the rate);
 *   beyond it, refused at once.
 * - **Backoff.** A read that fails as a whole (every pool's result an RPC failure, or the loader
 *   rejecting) counts as a failure of the dependency; after one, no read starts for a backoff
 *   window (`backoffBaseMs` doubled per consecutive failure, at most `backoffMaxMs`); then one
 *   probe read goes out while the others are still refused; a probe that succeeds ends the
 *   backoff. So a failing provider sees a trickle, and its recovery (while the quote breaker is
 *   still open and every quote asks for a fallback) meets the rate cap, not a retry storm.
 *
 * A refused read answers every pool with an 'rpc' failure whose message says why (the RPC quoter
 * turns it into TP_ERR_RPC_FALLBACK_FAILED 503 with that message); nothing queues, so a refused
 * quote costs microseconds and never holds memory.
 */
import { performance } from 'node:perf_hooks';

import { Backoff } from '../common/index.js';
import type { PoolLoadResult, PoolLoader } from '../pools/index.js';

export const DEFAULT_FALLBACK_CONCURRENCY = 8;
export const DEFAULT_FALLBACK_RPS = 50;
export const DEFAULT_FALLBACK_BACKOFF_BASE_MS = 250;
export const DEFAULT_FALLBACK_BACKOFF_MAX_MS = 10_000;

export interface FallbackLimitsOptions {
  /** Reads in flight at most; default 8. */
  maxConcurrent?: number;
  /** Reads started per second at most; default 50. */
  maxPerSecond?: number;
  /** First backoff window after a failed read, doubled per consecutive failure; default 250 ms. */
  backoffBaseMs?: number;
  /** Longest backoff window; default 10 s. */
  backoffMaxMs?: number;
  /** Monotonic ms clock; default performance.now. */
  now?: () => number;
}

/** What the limiter did, for /health and tests. */
export interface FallbackLimiterStats {
  /** Reads handed to the loader. */
  started: number;
  /** Reads answered by a read already in flight. */
  coalesced: number;
  /** Reads refused: concurrency cap, rate cap, backoff. */
  refusedConcurrency: number;
  refusedRate: number;
  refusedBackoff: number;
  inflight: number;
  consecutiveFailures: number;
}

function refusal(addresses: readonly string[], message: string): PoolLoadResult[] {
  return addresses.map((address) => ({ ok: false, error: { address, reason: 'rpc', message } }));
}

/** A read failed as a whole: nothing loaded and at least one pool's RPC call failed. */
function failedAsWhole(results: readonly PoolLoadResult[]): boolean {
  return results.length > 0 && results.every((r) => !r.ok && r.error.reason === 'rpc');
}

export class LimitedPoolLoader implements PoolLoader {
  readonly maxConcurrent: number;
  readonly maxPerSecond: number;
  private readonly backoff: Backoff;
  private readonly now: () => number;
  private readonly inflight = new Map<string, Promise<PoolLoadResult[]>>();
  private tokens: number;
  private tokensAt: number;
  private failures = 0;
  private backoffUntil = -Infinity;
  private probing = false;
  private readonly counts = { started: 0, coalesced: 0, refusedConcurrency: 0, refusedRate: 0, refusedBackoff: 0 };

  constructor(
    private readonly inner: PoolLoader,
    options: FallbackLimitsOptions = {},
  ) {
    this.maxConcurrent = options.maxConcurrent ?? DEFAULT_FALLBACK_CONCURRENCY;
    this.maxPerSecond = options.maxPerSecond ?? DEFAULT_FALLBACK_RPS;
    this.backoff = Backoff.doubling(options.backoffBaseMs ?? DEFAULT_FALLBACK_BACKOFF_BASE_MS, options.backoffMaxMs ?? DEFAULT_FALLBACK_BACKOFF_MAX_MS);
    this.now = options.now ?? performance.now.bind(performance);
    this.tokens = this.maxPerSecond;
    this.tokensAt = this.now();
  }

  load(addresses: readonly string[]): Promise<PoolLoadResult[]> {
    const key = addresses.join(',');
    const same = this.inflight.get(key);
    if (same !== undefined) {
      this.counts.coalesced++;
      return same;
    }
    const now = this.now();
    let probe = false;
    if (this.failures > 0) {
      if (now < this.backoffUntil || this.probing) {
        this.counts.refusedBackoff++;
        const waitMs = Math.max(0, Math.ceil(this.backoffUntil - now));
        return Promise.resolve(refusal(addresses, `RPC fallback backing off after ${this.failures} failed reads (next try in ${waitMs} ms)`));
      }
      probe = true;
    }
    if (this.inflight.size >= this.maxConcurrent) {
      this.counts.refusedConcurrency++;
      return Promise.resolve(refusal(addresses, `RPC fallback busy: ${this.maxConcurrent} reads in flight (rpc.fallbackConcurrency)`));
    }
    this.refill(now);
    if (this.tokens < 1) {
      this.counts.refusedRate++;
      return Promise.resolve(refusal(addresses, `RPC fallback rate limit of ${this.maxPerSecond} reads per second reached (rpc.fallbackRps)`));
    }
    this.tokens -= 1;
    this.counts.started++;
    if (probe) this.probing = true;
    const read = this.inner
      .load(addresses)
      .catch((err: unknown) => refusal(addresses, err instanceof Error ? err.message : String(err)))
      .then((results) => {
        this.inflight.delete(key);
        if (probe) this.probing = false;
        this.record(failedAsWhole(results));
        return results;
      });
    this.inflight.set(key, read);
    return read;
  }

  get stats(): FallbackLimiterStats {
    return { ...this.counts, inflight: this.inflight.size, consecutiveFailures: this.failures };
  }

  private record(failed: boolean): void {
    if (!failed) {
      this.failures = 0;
      this.backoff.reset();
      this.backoffUntil = -Infinity;
      return;
    }
    this.failures++;
    const window = this.backoff.next();
    this.backoffUntil = this.now() + window;
  }

  private refill(now: number): void {
    const elapsed = Math.max(0, now - this.tokensAt) / 1000;
    this.tokens = Math.min(this.maxPerSecond, this.tokens + elapsed * this.maxPerSecond);
    this.tokensAt = now;
  }
}
