import { ErrorCode, TpError } from '../errors.js';

/**
 * A counting semaphore (spec 03: "concurrency is bounded by a semaphore"): at most `permits`
 * holders at once, the others wait in arrival order.
 */
export class Semaphore {
  private available: number;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly permits: number) {
    if (!Number.isInteger(permits) || permits < 1) {
      throw new TpError(ErrorCode.ConfigInvalid, `permits must be a positive integer, got ${permits}`, { context: { setting: 'executor.maxConcurrentTrades', value: permits } });
    }
    this.available = permits;
  }

  /** Holders right now. */
  get inUse(): number {
    return this.permits - this.available;
  }

  /** Resolves when a permit is held; call the returned function once to give it back. */
  async acquire(): Promise<() => void> {
    if (this.available > 0) this.available--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next !== undefined) next();
      else this.available++;
    };
  }
}
