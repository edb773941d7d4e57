/**
 * The quote service's circuit breaker (docs/architecture.md §3): closed → open after 5 consecutive
 * failures; open → half-open once the 30 s reset timeout has passed; half-open → closed after 3
 * successes, back to open on any failure. The clock is injectable (tests).
 */
import { CircuitBreakerStateValue } from '../obs/index.js';

export const CircuitState = { Closed: 'closed', Open: 'open', HalfOpen: 'half-open' } as const;
export type CircuitState = (typeof CircuitState)[keyof typeof CircuitState];

export interface CircuitBreakerOptions {
  failureThreshold?: number;
  resetTimeoutMs?: number;
  halfOpenSuccesses?: number;
  now?: () => number;
  /** Called on every state change (e.g. to set the state gauge). */
  onStateChange?: (state: CircuitState) => void;
}

export const DEFAULT_FAILURE_THRESHOLD = 5;
export const DEFAULT_RESET_TIMEOUT_MS = 30_000;
export const DEFAULT_HALF_OPEN_SUCCESSES = 3;

export class CircuitBreaker {
  readonly failureThreshold: number;
  readonly resetTimeoutMs: number;
  readonly halfOpenSuccesses: number;
  private readonly now: () => number;
  private readonly onStateChange: ((state: CircuitState) => void) | undefined;
  private current: CircuitState = CircuitState.Closed;
  private failures = 0;
  private successes = 0;
  private openedAt = 0;

  constructor(options: CircuitBreakerOptions = {}) {
    this.failureThreshold = options.failureThreshold ?? DEFAULT_FAILURE_THRESHOLD;
    this.resetTimeoutMs = options.resetTimeoutMs ?? DEFAULT_RESET_TIMEOUT_MS;
    this.halfOpenSuccesses = options.halfOpenSuccesses ?? DEFAULT_HALF_OPEN_SUCCESSES;
    this.now = options.now ?? Date.now;
    this.onStateChange = options.onStateChange;
  }

  /** The state now (an open breaker past its reset timeout reads as half-open). */
  get state(): CircuitState {
    if (this.current === CircuitState.Open && this.now() - this.openedAt >= this.resetTimeoutMs) {
      this.transition(CircuitState.HalfOpen);
    }
    return this.current;
  }

  /** The state as the `quote_service_circuit_breaker_state` gauge value. */
  get gaugeValue(): CircuitBreakerStateValue {
    const s = this.state;
    return s === CircuitState.Closed
      ? CircuitBreakerStateValue.closed
      : s === CircuitState.HalfOpen
        ? CircuitBreakerStateValue.halfOpen
        : CircuitBreakerStateValue.open;
  }

  /** False while open: the guarded path must fail at once. */
  allow(): boolean {
    return this.state !== CircuitState.Open;
  }

  recordSuccess(): void {
    const s = this.state;
    if (s === CircuitState.HalfOpen) {
      this.successes++;
      if (this.successes >= this.halfOpenSuccesses) this.transition(CircuitState.Closed);
    } else if (s === CircuitState.Closed) {
      this.failures = 0;
    }
  }

  recordFailure(): void {
    const s = this.state;
    if (s === CircuitState.HalfOpen) {
      this.open();
    } else if (s === CircuitState.Closed) {
      this.failures++;
      if (this.failures >= this.failureThreshold) this.open();
    }
  }

  private open(): void {
    this.openedAt = this.now();
    this.transition(CircuitState.Open);
  }

  private transition(next: CircuitState): void {
    this.current = next;
    this.failures = 0;
    this.successes = 0;
    this.onStateChange?.(next);
  }
}
