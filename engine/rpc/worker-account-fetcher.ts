import { AccountFetcher, type AccountFetcherOptions, type AccountFetchOptions, type AccountFetcherStats, type AccountReader } from './account-fetcher.js';
import type { AccountData, RpcClientOptions } from './rpc-client.js';
import { RpcThread, rpcWorkerUnavailable, type RpcThreadOptions, type RpcThreadStats } from './rpc-thread.js';

/** The fetcher's batching options and the worker's ring and concurrency options. */
export interface WorkerAccountFetcherOptions extends AccountFetcherOptions, RpcThreadOptions {}

/**
 * AccountFetcher whose getMultipleAccounts calls are made by an RPC worker thread (RpcThread):
 * the same contract and the same batching and coalescing (it is an AccountFetcher over the
 * thread: queued and in-flight sharing, `fresh` joins only unsent requests, batches of at most
 * batchSize keys, flushed on the next turn or after maxDelayMs, FetchQueueFull beyond maxQueued),
 * while the HTTP exchange, JSON.parse and base64 decoding run off the calling thread.
 *
 * Differences a caller can see: a call refused because the request ring is full rejects its
 * waiters with RpcRequestRingFull (a FetchQueueFull; also counted in stats.failedCalls); a call
 * the worker could not answer (it died, or the fetcher was closed) rejects with
 * RpcWorkerUnavailable; an RpcFailure from the worker has no `cause`. A fetch's signal works as
 * AccountFetcher's: once every fetch a call serves has aborted, the worker aborts the call's HTTP
 * request (or never sends one it had not taken yet). The worker is started by the constructor;
 * call close() when done.
 */
export class WorkerAccountFetcher implements AccountReader {
  private readonly thread: RpcThread;
  private readonly fetcher: AccountFetcher;
  private closed: Promise<void> | null = null;

  /** `rpc`: the options of the RpcClient the worker builds (endpoints, timeout, commitment, connections). */
  constructor(rpc: RpcClientOptions, options: WorkerAccountFetcherOptions = {}) {
    this.thread = new RpcThread(rpc, options);
    try {
      this.fetcher = new AccountFetcher(this.thread, options);
    } catch (err) {
      void this.thread.close();
      throw err;
    }
  }

  get batchSize(): number {
    return this.fetcher.batchSize;
  }
  get maxDelayMs(): number {
    return this.fetcher.maxDelayMs;
  }
  get maxQueued(): number {
    return this.fetcher.maxQueued;
  }
  get stats(): AccountFetcherStats {
    return this.fetcher.stats;
  }
  /** Addresses waiting to be sent. */
  get queued(): number {
    return this.fetcher.queued;
  }
  /** Addresses queued or in flight. */
  get outstanding(): number {
    return this.fetcher.outstanding;
  }

  /** The account at `address` (null when it does not exist). See AccountFetcher.fetch. */
  fetch(address: string, options?: AccountFetchOptions): Promise<AccountData | null> {
    if (this.closed !== null) return Promise.reject(rpcWorkerUnavailable('closed', `fetch ${address}: the account fetcher is closed`));
    return this.fetcher.fetch(address, options);
  }

  /** Sends everything queued now, in batches of batchSize. */
  flush(): void {
    this.fetcher.flush();
  }

  /** The worker's counters and its rings'. */
  threadStats(): RpcThreadStats {
    return this.thread.statistics();
  }

  /**
   * Sends what is queued, lets the worker answer every call already sent (their waiters get their
   * answers), then ends the worker. Later fetches reject with RpcWorkerUnavailable. Idempotent.
   */
  close(): Promise<void> {
    this.closed ??= (async () => {
      this.fetcher.flush();
      await this.thread.close();
    })();
    return this.closed;
  }
}
