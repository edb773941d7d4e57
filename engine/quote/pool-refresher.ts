/**
 * The background refresh of spec 02's `RefreshSeconds` (30 s): every interval, and once at start,
 * the state of every pool the service should know is read from RPC (batched, coalesced
 * getMultipleAccounts through the PoolLoader) and stored under the slot rule. A pool nobody trades
 * stays fresh this way instead of going stale and costing an RPC fallback on the quote path, and a
 * restarted service refills its cache at once rather than when each pool next trades (spec 02:
 * "starts with an empty cache and refills within about 30 s").
 */
import { ErrorCode, TpError } from '../errors.js';
import { poolStateOfLoaded } from '../cache/index.js';
import type { PoolCache } from '../cache/index.js';
import type { UpsertOutcome } from '../cache/index.js';
import type { Logger } from '../obs/index.js';
import type { LoadedPool, PoolLoader } from '../pools/index.js';
import { sharedAbortController } from '../rpc/abortable.js';
import { invalidArgument } from '../errors.js';

/** Pools per load() call: one getMultipleAccounts round of pool accounts. */
const CHUNK = 100;

export interface PoolRefresherOptions {
  loader: PoolLoader;
  cache: PoolCache;
  /** The pools to refresh, asked at every round (the monitored pools, or the pool directory). */
  pools: () => readonly string[];
  intervalMs: number;
  logger: Logger;
  /** After each stored state (count updates, feed the pool directory). */
  onUpsert?: (outcome: UpsertOutcome, loaded: LoadedPool) => void;
}

export interface RefreshRound {
  pools: number;
  stored: number;
  failed: number;
}

export class PoolRefresher {
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<RefreshRound> | undefined;
  /** Aborted at close: the round's loads stop waiting, and their reads are aborted. */
  private readonly stopping = sharedAbortController();
  private closed = false;
  rounds = 0;

  constructor(private readonly options: PoolRefresherOptions) {
    if (!(options.intervalMs > 0)) throw invalidArgument('intervalMs', options.intervalMs, `intervalMs must be > 0, got ${options.intervalMs}`);
  }

  /** Runs a first round now and then one every interval; resolves when the first round is done. */
  start(): Promise<RefreshRound> {
    const first = this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.options.intervalMs);
    this.timer.unref();
    return first;
  }

  /** One round (a round already running is joined, not doubled). */
  refresh(): Promise<RefreshRound> {
    if (this.closed) return Promise.resolve({ pools: 0, stored: 0, failed: 0 });
    this.round ??= this.run().finally(() => {
      this.round = undefined;
    });
    return this.round;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopping.abort(new TpError(ErrorCode.Aborted, 'pool refresh: closed', { context: { reason: 'closed' } }));
    clearInterval(this.timer);
    await this.round?.catch(() => {});
  }

  private async run(): Promise<RefreshRound> {
    const { loader, cache, logger } = this.options;
    const pools = [...new Set(this.options.pools())];
    const out: RefreshRound = { pools: pools.length, stored: 0, failed: 0 };
    for (let i = 0; i < pools.length && !this.closed; i += CHUNK) {
      let results;
      try {
        results = await loader.load(pools.slice(i, i + CHUNK), { signal: this.stopping.signal });
      } catch (err) {
        if (this.closed) break;
        out.failed += Math.min(CHUNK, pools.length - i);
        logger.warn({ err }, 'pool refresh failed');
        continue;
      }
      for (const r of results) {
        if (!r.ok) {
          out.failed++;
          continue;
        }
        const outcome = cache.upsert(poolStateOfLoaded(r.value));
        out.stored++;
        this.options.onUpsert?.(outcome, r.value);
      }
    }
    this.rounds++;
    if (out.failed > 0) logger.warn(out, 'pool refresh: some pools could not be read');
    else logger.debug(out, 'pool refresh done');
    return out;
  }
}
