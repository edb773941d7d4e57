/**
 * The provider's rate limit: a token bucket of `rps` tokens a second holding at most `burst`
 * (default 1, i.e. evenly paced requests). Unlike engine/common/rate-limiter.ts, which answers many
 * clients with a whole-second Retry-After and a 2 × rate burst, the poller needs one bucket, the
 * exact time of the next token (to sleep until then), and no burst: a provider's limit is "N per
 * second", and a 2 × burst would exceed it in the first second.
 */
import { invalidArgument } from '../errors.js';
export class RequestPacer {
  readonly rps: number;
  readonly burst: number;
  private tokens: number;
  private at: number;

  constructor(rps: number, options: { burst?: number; now?: number } = {}) {
    if (!Number.isFinite(rps) || rps <= 0) throw invalidArgument('rps', rps, `rate limit rps must be > 0, got ${rps}`);
    this.rps = rps;
    this.burst = options.burst ?? 1;
    if (!(this.burst >= 1)) throw invalidArgument('burst', this.burst, `burst must be >= 1, got ${this.burst}`);
    this.tokens = this.burst;
    this.at = options.now ?? performance.now();
  }

  private refill(now: number): void {
    if (now > this.at) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) * this.rps) / 1000);
      this.at = now;
    }
  }

  /** Milliseconds until a token is available at `now` (0: one is). */
  msUntilToken(now: number): number {
    this.refill(now);
    // A hair of tolerance: float refills land a few ulps short of 1 exactly when the timer fires.
    if (this.tokens >= 1 - 1e-9) return 0;
    return Math.max(1, Math.ceil(((1 - this.tokens) * 1000) / this.rps));
  }

  /** Takes a token if one is available at `now`. */
  tryTake(now: number): boolean {
    if (this.msUntilToken(now) > 0) return false;
    this.tokens = Math.max(0, this.tokens - 1);
    return true;
  }
}
