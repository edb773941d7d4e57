/**
 * Token-bucket rate limiting per client (docs/architecture.md §3): `rps` tokens a second, burst 2 × rps.
 *
 * The client key must be something the client cannot forge (issue 11 item 3): the HTTP adapter
 * passes the remote address, or the verified JWT subject when auth is on, never a header the
 * client picks. Memory is bounded in bytes, not just entries: each bucket is charged its key's
 * UTF-16 size plus a fixed overhead, a key longer than MAX_KEY_CHARS is stored as its SHA-256, and
 * past `maxBytes` (or `maxClients`) the oldest buckets go first. A bucket idle long enough to have
 * refilled to the burst is the same as no bucket, so `sweep` drops every such one: the map shrinks
 * when clients go idle (the server runs `sweep` on a timer, `startSweeping`). An evicted client
 * simply starts again full.
 */
import { createHash } from 'node:crypto';
import { invalidArgument } from '../errors.js';

export const DEFAULT_RATE_LIMIT_RPS = 20;
export const DEFAULT_MAX_CLIENTS = 10_000;
/** Default memory bound of the buckets (keys and overhead), in bytes. */
export const DEFAULT_RATE_LIMIT_MAX_BYTES = 2 * 1024 * 1024;
/** Keys longer than this (characters) are kept as their SHA-256 (44 base64 characters). */
export const MAX_KEY_CHARS = 128;
/** Charged per bucket beside its key: the Map entry, the bucket object and its two numbers. */
const BUCKET_OVERHEAD_BYTES = 96;
export const DEFAULT_SWEEP_INTERVAL_MS = 10_000;

export interface RateLimiterOptions {
  /** Spec 02 `RateLimitRPS` (`RATE_LIMIT_RPS`); default 20. */
  rps?: number;
  /** Bucket capacity; default 2 × rps. */
  burst?: number;
  /** Buckets kept at most (oldest dropped first). */
  maxClients?: number;
  /** Bytes the buckets may take at most (oldest dropped first); default 2 MiB. */
  maxBytes?: number;
  now?: () => number;
}

interface Bucket {
  tokens: number;
  at: number;
  /** What this bucket is charged in `bytes`. */
  readonly size: number;
}

export class RateLimiter {
  readonly rps: number;
  readonly burst: number;
  readonly maxClients: number;
  readonly maxBytes: number;
  private readonly now: () => number;
  /** Insertion-ordered: the first entries are the oldest clients. */
  private buckets = new Map<string, Bucket>();
  private charged = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: RateLimiterOptions = {}) {
    const rps = options.rps ?? DEFAULT_RATE_LIMIT_RPS;
    if (!Number.isFinite(rps) || rps <= 0) throw invalidArgument('rps', rps, `rate limit rps must be > 0, got ${rps}`);
    this.rps = rps;
    this.burst = options.burst ?? 2 * rps;
    this.now = options.now ?? Date.now;
    this.maxClients = options.maxClients ?? DEFAULT_MAX_CLIENTS;
    this.maxBytes = options.maxBytes ?? DEFAULT_RATE_LIMIT_MAX_BYTES;
  }

  /**
   * Takes one token for `client`. Returns 0 when allowed, else the whole seconds (>= 1) after which
   * a token will be available: the `Retry-After` value.
   */
  take(client: string): number {
    const key = client.length > MAX_KEY_CHARS ? `sha256:${createHash('sha256').update(client).digest('base64')}` : client;
    const now = this.now();
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = { tokens: this.burst, at: now, size: key.length * 2 + BUCKET_OVERHEAD_BYTES };
      this.makeRoom(bucket.size);
      this.buckets.set(key, bucket);
      this.charged += bucket.size;
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

  /**
   * Drops every bucket that has refilled to the burst by now (idle at least burst / rps seconds):
   * dropping it changes no answer. Returns how many were dropped.
   */
  sweep(): number {
    const now = this.now();
    let dropped = 0;
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + (Math.max(0, now - bucket.at) / 1000) * this.rps >= this.burst) {
        this.buckets.delete(key);
        this.charged -= bucket.size;
        dropped++;
      }
    }
    // A Map keeps its grown table after deletes; a fresh one gives the memory back.
    if (dropped > 0 && this.buckets.size < 64) this.buckets = new Map(this.buckets);
    return dropped;
  }

  /** Runs `sweep` every `intervalMs` (unref'd) until `stopSweeping`. */
  startSweeping(intervalMs = DEFAULT_SWEEP_INTERVAL_MS): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => this.sweep(), intervalMs);
    this.timer.unref();
  }

  stopSweeping(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Clients currently tracked. */
  get clients(): number {
    return this.buckets.size;
  }

  /** Bytes charged to the buckets now (at most `maxBytes`). */
  get bytes(): number {
    return this.charged;
  }

  private makeRoom(size: number): void {
    while (this.buckets.size > 0 && (this.buckets.size >= this.maxClients || this.charged + size > this.maxBytes)) {
      const [oldest, bucket] = this.buckets.entries().next().value as [string, Bucket];
      this.buckets.delete(oldest);
      this.charged -= bucket.size;
    }
  }
}
