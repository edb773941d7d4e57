/**
 * One pool's recent prices, oldest first, by event time: what the trend model reads its features
 * from. Holds at most `maxPoints` and nothing older than `keepMs` before the newest.
 */

export class PriceHistory {
  private times: number[] = [];
  private logPrices: number[] = [];

  constructor(
    private readonly keepMs: number,
    private readonly maxPoints = 4_096,
  ) {}

  get size(): number {
    return this.times.length;
  }

  /** Adds a price at time `at` (ms); an event older than the newest one is ignored (returns false). */
  add(at: number, price: number): boolean {
    if (!(price > 0) || !Number.isFinite(price)) return false;
    const n = this.times.length;
    if (n > 0 && at < this.times[n - 1]!) return false;
    this.times.push(at);
    this.logPrices.push(Math.log(price));
    let drop = 0;
    while (drop < this.times.length - 1 && (this.times.length - drop > this.maxPoints || this.times[drop + 1]! <= at - this.keepMs)) drop++;
    if (drop > 0) {
      this.times = this.times.slice(drop);
      this.logPrices = this.logPrices.slice(drop);
    }
    return true;
  }

  latestLog(): number | undefined {
    return this.logPrices[this.logPrices.length - 1];
  }

  /** The log price in force at `at`: the last one recorded at or before it; undefined when none is that old. */
  logAt(at: number): number | undefined {
    let lo = 0;
    let hi = this.times.length - 1;
    if (hi < 0 || this.times[0]! > at) return undefined;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.times[mid]! <= at) lo = mid;
      else hi = mid - 1;
    }
    return this.logPrices[lo];
  }
}
