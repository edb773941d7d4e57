/**
 * Token-bucket rate limiting per client (docs/architecture.md §3): `rps` tokens a second, burst 2 × rps.
 * Buckets live in an LRU bounded by `maxClients`; an evicted client simply starts again full.
 */
import { LRUCache } from 'lru-cache';

export const DEFAULT_RATE_LIMIT_RPS = 20;
export const DEFAULT_MAX_CLIENTS = 10_000;

export interface RateLimiterOptions {
  /** Spec 02 `RateLimitRPS` (`RATE_LIMIT_RPS`); default 20. */
  rps?: number;
  /** Bucket capacity; default 2 × rps. */
  burst?: number;
  /** Buckets kept at most (least recently used dropped first). */
  maxClients?: number;
  now?: () => number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  readonly rps: number;
  readonly burst: number;
  private readonly now: () => number;
  private readonly buckets: LRUCache<string, Bucket>;

  constructor(options: RateLimiterOptions = {}) {
    const rps = options.rps ?? DEFAULT_RATE_LIMIT_RPS;
    if (!Number.isFinite(rps) || rps <= 0) throw new RangeError(`rate limit rps must be > 0, got ${rps}`);
    this.rps = rps;
    this.burst = options.burst ?? 2 * rps;
    this.now = options.now ?? Date.now;
    this.buckets = new LRUCache<string, Bucket>({ max: options.maxClients ?? DEFAULT_MAX_CLIENTS });
  }

  /**
   * Takes one token for `client`. Returns 0 when allowed, else the whole seconds (>= 1) after which
   * a token will be available: the `Retry-After` value.
   */
  take(client: string): number {
    const now = this.now();
    let bucket = this.buckets.get(client);
    if (bucket === undefined) {
      bucket = { tokens: this.burst, at: now };
      this.buckets.set(client, bucket);
    } else {
      const elapsed = Math.max(0, now - bucket.at) / 1000;
      bucket.tokens = Math.min(this.burst, bucket.tokens + elapsed * this.rps);
      bucket.at = now;
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.rps));
  }

  /** Clients currently tracked. */
  get clients(): number {
    return this.buckets.size;
  }
}
