/**
 * A client's quote budget (issue 11 item 1): the quotes a second all the streams of one client may
 * be pushed, shared by those streams (a token bucket). Streams × pairs ÷ interval is what a client
 * asks; the budget is what it gets at most, so the heaviest load the stream limits allow is
 * bounded in amount of work, not only in its shape.
 *
 * A stream that finds the bucket empty leaves its pairs flagged (quote-subscription.ts): a pair
 * asked for again before it was served is still one flag, so the unserved pushes are coalesced to
 * the latest per pair, never queued; the stream resumes where it stopped once tokens are back
 * (`msUntil`), so every pair gets its turn. Every quote pushed takes a token: the first quotes of a
 * new stream, the pushes of changed pairs and the interval pushes alike.
 *
 * The bucket holds `burst` tokens at most (default a tenth of a second of the rate): a small burst
 * keeps the work of a client spread over time instead of done in lumps. A leaf: no I/O.
 */
import { performance } from 'node:perf_hooks';
import { invalidArgument } from '../errors.js';

/**
 * Default quotes a second per client: see README "Limits" for what it allows. A pair quoted afresh
 * (route search, BigInt swap math, encoding, GC, HTTP/2) costs the process 0.3-0.4 ms of CPU on
 * the 2-core bench box: at 500 a second one client's streams take about a fifth of a core (server
 * CPU 33% against 11% with no stream), and GET /quote's p99 beside them stayed under 5 ms.
 */
export const DEFAULT_MAX_QUOTES_PER_SECOND_PER_CLIENT = 500;
/** The burst, as seconds of the rate. */
export const BUDGET_BURST_SECONDS = 0.1;

export class QuoteBudget {
  readonly perSecond: number;
  readonly burst: number;
  private readonly now: () => number;
  private tokens: number;
  private at: number;

  constructor(perSecond: number, now: () => number = performance.now.bind(performance), burst = Math.max(1, perSecond * BUDGET_BURST_SECONDS)) {
    if (!Number.isFinite(perSecond) || perSecond <= 0) throw invalidArgument('perSecond', perSecond, `quote budget must be > 0 a second, got ${perSecond}`);
    this.perSecond = perSecond;
    this.burst = burst;
    this.now = now;
    this.tokens = burst;
    this.at = now();
  }

  /** Whole tokens available now (refilled from the clock). */
  available(): number {
    const now = this.now();
    if (now > this.at) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) * this.perSecond) / 1000);
      this.at = now;
    }
    return Math.floor(this.tokens);
  }

  /** Takes `n` tokens (at most what `available` said). */
  spend(n: number): void {
    this.tokens -= n;
  }

  /** Milliseconds until `n` whole tokens (capped at the burst) are available; 0 when they are. */
  msUntil(n: number): number {
    const want = Math.min(n, Math.floor(this.burst));
    const missing = want - this.available();
    return missing <= 0 ? 0 : (missing * 1000) / this.perSecond;
  }
}
