/**
 * The cluster's current epoch for transfer-fee quotes (a Token-2022 mint's fee changes at an epoch
 * boundary), read with getEpochInfo and kept for `maxAgeMs`: an epoch lasts two days on mainnet, so
 * one call a few times a minute is plenty. Concurrent callers share one call in flight. Within
 * `refreshAheadMs` of an answer's expiry, a caller still gets it at once and a refresh starts
 * behind it, so a steady stream of pool loads never waits for getEpochInfo; an answer is never
 * served older than `maxAgeMs` while refreshes succeed. When a refresh fails, the last epoch read is returned while it is younger than `staleLimitMs`; with
 * none, the call rejects with the RPC failure.
 */
import type { EpochInfo } from '../rpc/index.js';
import { invalidArgument } from '../errors.js';

/** Where the current epoch comes from (RpcPoolLoader's `epochs`). */
export interface EpochSource {
  current(): Promise<bigint>;
}

export interface EpochClockOptions {
  /** Reads the epoch: `RpcClient.getEpochInfo`. */
  getEpochInfo: () => Promise<EpochInfo>;
  /** Reuse an answer this long. Default 30 s. */
  maxAgeMs?: number;
  /** Refresh in the background when an answer is this close to maxAgeMs. Default maxAgeMs / 3. */
  refreshAheadMs?: number;
  /** After a failed refresh, keep answering with an answer this old at most. Default 10 min. */
  staleLimitMs?: number;
  /** Milliseconds clock (tests). Default performance.now. */
  now?: () => number;
}

export interface EpochClockStats {
  /** getEpochInfo calls made. */
  calls: number;
  /** Calls that failed. */
  failures: number;
  /** Answers served from an answer older than maxAgeMs because the refresh failed. */
  staleAnswers: number;
}

export class EpochClock implements EpochSource {
  readonly stats: EpochClockStats = { calls: 0, failures: 0, staleAnswers: 0 };
  private readonly read: () => Promise<EpochInfo>;
  private readonly maxAgeMs: number;
  private readonly refreshAheadMs: number;
  private readonly staleLimitMs: number;
  private readonly now: () => number;
  private last: { info: EpochInfo; at: number } | undefined;
  private inFlight: Promise<bigint> | undefined;

  constructor(options: EpochClockOptions) {
    this.read = options.getEpochInfo;
    this.maxAgeMs = options.maxAgeMs ?? 30_000;
    this.refreshAheadMs = Math.min(options.refreshAheadMs ?? this.maxAgeMs / 3, this.maxAgeMs);
    this.staleLimitMs = options.staleLimitMs ?? 600_000;
    this.now = options.now ?? (() => performance.now());
    if (!(this.maxAgeMs >= 0) || !(this.staleLimitMs >= this.maxAgeMs)) {
      throw invalidArgument('maxAgeMs', this.maxAgeMs, `EpochClock: need 0 <= maxAgeMs <= staleLimitMs, got ${this.maxAgeMs} and ${this.staleLimitMs}`);
    }
  }

  /** The last getEpochInfo answer, if any. */
  get info(): EpochInfo | undefined {
    return this.last?.info;
  }

  current(): Promise<bigint> {
    const last = this.last;
    if (last !== undefined) {
      const age = this.now() - last.at;
      if (age <= this.maxAgeMs) {
        // A failed background refresh is counted in stats; the next caller past maxAgeMs retries.
        if (age >= this.maxAgeMs - this.refreshAheadMs && this.refreshAheadMs > 0) this.shared().catch(() => undefined);
        return Promise.resolve(last.info.epoch);
      }
    }
    return this.shared();
  }

  /** The refresh in flight, started if none is. */
  private shared(): Promise<bigint> {
    this.inFlight ??= this.refresh().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async refresh(): Promise<bigint> {
    this.stats.calls++;
    try {
      const info = await this.read();
      this.last = { info, at: this.now() };
      return info.epoch;
    } catch (err) {
      this.stats.failures++;
      const last = this.last;
      if (last !== undefined && this.now() - last.at <= this.staleLimitMs) {
        this.stats.staleAnswers++;
        return last.info.epoch;
      }
      throw err;
    }
  }
}
