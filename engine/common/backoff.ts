/**
 * Reconnect delays: exponential backoff with jitter, capped (spec 02: "reconnects with exponential
 * backoff"). Jitter spreads the reconnects of several scanner replicas so that a restarted upstream
 * is not hit by all of them at the same instant.
 *
 * - `full`: a uniform draw in [0, min(cap, base * factor^attempt)] (AWS "full jitter").
 * - `decorrelated`: a uniform draw in [base, previous * factor], capped (AWS "decorrelated jitter");
 *   never below `base`, so a flapping upstream is never hammered with zero delays.
 * - `none`: min(cap, base * factor^attempt), for tests and tools.
 */
import { invalidArgument } from '../errors.js';

export const Jitter = {
  None: 'none',
  Full: 'full',
  Decorrelated: 'decorrelated',
} as const;
export type Jitter = (typeof Jitter)[keyof typeof Jitter];

export const DEFAULT_BACKOFF_BASE_MS = 100;
export const DEFAULT_BACKOFF_FACTOR = 2;
export const DEFAULT_BACKOFF_CAP_MS = 10_000;

export interface BackoffOptions {
  /** First delay ceiling, in ms. Default 100. */
  baseMs?: number;
  /** Growth per attempt. Default 2. */
  factor?: number;
  /** No delay exceeds this, in ms. Default 10 000. */
  capMs?: number;
  /** Default `decorrelated`. */
  jitter?: Jitter;
  /** A uniform draw in [0, 1); injectable so tests repeat. Default Math.random. */
  random?: () => number;
}

export class Backoff {
  readonly baseMs: number;
  readonly factor: number;
  readonly capMs: number;
  readonly jitter: Jitter;
  private readonly random: () => number;
  private attempt = 0;
  private previousMs: number;

  constructor(options: BackoffOptions = {}) {
    this.baseMs = options.baseMs ?? DEFAULT_BACKOFF_BASE_MS;
    this.factor = options.factor ?? DEFAULT_BACKOFF_FACTOR;
    this.capMs = options.capMs ?? DEFAULT_BACKOFF_CAP_MS;
    this.jitter = options.jitter ?? Jitter.Decorrelated;
    this.random = options.random ?? Math.random;
    if (!(Number.isFinite(this.baseMs) && this.baseMs > 0)) throw invalidArgument('baseMs', this.baseMs, `backoff baseMs must be > 0, got ${this.baseMs}`);
    if (!(Number.isFinite(this.factor) && this.factor >= 1)) throw invalidArgument('factor', this.factor, `backoff factor must be >= 1, got ${this.factor}`);
    if (!(Number.isFinite(this.capMs) && this.capMs >= this.baseMs)) {
      throw invalidArgument('capMs', this.capMs, `backoff capMs must be >= baseMs (${this.baseMs}), got ${this.capMs}`);
    }
    this.previousMs = this.baseMs;
  }

  /** `baseMs`, doubling, at most `capMs`, no jitter: the delays of a retry loop inside one process. */
  static doubling(baseMs: number, capMs: number): Backoff {
    return new Backoff({ baseMs, factor: 2, capMs: Math.max(baseMs, capMs), jitter: Jitter.None });
  }

  /** Delays handed out since the last reset. */
  get attempts(): number {
    return this.attempt;
  }

  /** The delay before the next attempt, in whole ms; each call moves one attempt further. */
  next(): number {
    const attempt = this.attempt++;
    let ms: number;
    switch (this.jitter) {
      case Jitter.None:
        ms = this.ceiling(attempt);
        break;
      case Jitter.Full:
        ms = this.random() * this.ceiling(attempt);
        break;
      case Jitter.Decorrelated: {
        const upper = Math.min(this.capMs, this.previousMs * this.factor);
        ms = Math.min(this.capMs, this.baseMs + this.random() * (upper - this.baseMs));
        this.previousMs = ms;
        break;
      }
    }
    return Math.round(ms);
  }

  /** Back to the first delay: called once a connection has proved stable. */
  reset(): void {
    this.attempt = 0;
    this.previousMs = this.baseMs;
  }

  /** min(cap, base * factor^attempt) without overflowing to Infinity on long outages. */
  private ceiling(attempt: number): number {
    const grown = this.baseMs * Math.pow(this.factor, attempt);
    return Number.isFinite(grown) ? Math.min(this.capMs, grown) : this.capMs;
  }
}
