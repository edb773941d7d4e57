import { invalidArgument } from '../errors.js';
import { MAX_KEYS_PER_CALL, type AccountData, type MultipleAccountsResult } from './rpc-client.js';
import { fetchQueueFull } from './rpc-errors.js';
import { abortable } from './abortable.js';

/** The options of one read. */
export interface AccountFetchOptions {
  /** Join only a request not yet sent (its answer is read after the call). */
  fresh?: boolean;
  /**
   * Stops waiting: the fetch rejects with the signal's reason at the abort. The call that carries
   * the address is aborted too (its connection closed) once every fetch it serves has been
   * aborted; a fetch without a signal keeps it going.
   */
  signal?: AbortSignal;
}


/**
 * Batched, coalesced account reads: `fetch(address)` queues the address; the queue flushes as one
 * getMultipleAccounts call (≤100 keys) when `batchSize` addresses wait or after `maxDelayMs`
 * (0 = as soon as the code that queued it is done: a microtask, so every fetch of one synchronous
 * run, e.g. every pool read a drain of parse results starts, shares the call, and none waits for
 * the event loop to get round to it). Concurrent fetches of one address, queued or in flight, share
 * one request and one key; `fetch(address, { fresh: true })` joins only a request not yet sent, so
 * its answer is read after the call (use it when the state must postdate something just seen). A failed call rejects every waiter of its batch with the client's error
 * (the caller counts it). The number of queued addresses is bounded: beyond `maxQueued`, fetch
 * rejects with FetchQueueFull at once. A fetch with a signal stops waiting at its abort, and the
 * call it rode on is aborted when no fetch it serves is still waiting (AccountFetchOptions.signal).
 */

export interface AccountsSource {
  /** `signal` aborts the call (the request's connection closed): it then rejects with its reason. */
  getMultipleAccounts(addresses: readonly string[], signal?: AbortSignal): Promise<MultipleAccountsResult>;
}

export interface AccountFetcherOptions {
  /** Addresses per call, 1..100. Default 100. */
  batchSize?: number;
  /** Longest wait before a partial batch is sent, ms; 0 = a microtask after the fetch. Default 0. */
  maxDelayMs?: number;
  /** Most addresses waiting to be sent. Default 10,000. */
  maxQueued?: number;
}

export interface AccountFetcherStats {
  /** getMultipleAccounts calls made. */
  calls: number;
  /** Keys sent over all calls. */
  keys: number;
  /** fetch() calls served by a request already queued or in flight. */
  coalesced: number;
  /** fetch() calls refused because the queue was full. */
  refused: number;
  /** Calls that failed (every waiter rejected). */
  failedCalls: number;
}

/**
 * What readers of accounts depend on (RpcPoolLoader, LookupTableCache): AccountFetcher, which
 * calls the RPC on the calling thread, and WorkerAccountFetcher, which calls it from a worker
 * thread, both implement it with the same batching and coalescing semantics (see AccountFetcher).
 */
export interface AccountReader {
  /** The account at `address` (null when it does not exist); see AccountFetchOptions. */
  fetch(address: string, options?: AccountFetchOptions): Promise<AccountData | null>;
  readonly stats: AccountFetcherStats;
  /** Addresses waiting to be sent. */
  readonly queued: number;
  /** Addresses queued or in flight. */
  readonly outstanding: number;
}

interface Waiter {
  promise: Promise<AccountData | null>;
  resolve: (value: AccountData | null) => void;
  reject: (err: unknown) => void;
  /** A fetch without a signal waits for it: its call is never aborted. */
  pinned: boolean;
  /** Fetches with a signal not yet aborted that wait for it. */
  watching: number;
  /** The call it went out in, once sent. */
  call?: Call;
}

/** One getMultipleAccounts call in flight. */
interface Call {
  readonly controller: AbortController;
  readonly waiters: readonly Waiter[];
}

/** No fetch waits for the waiter any more: every one had a signal, and every signal aborted. */
function abandoned(waiter: Waiter): boolean {
  return !waiter.pinned && waiter.watching === 0;
}

export class AccountFetcher implements AccountReader {
  readonly batchSize: number;
  readonly maxDelayMs: number;
  readonly maxQueued: number;
  readonly stats: AccountFetcherStats = { calls: 0, keys: 0, coalesced: 0, refused: 0, failedCalls: 0 };
  /** Queued (not yet sent), by address. */
  private readonly waiting = new Map<string, Waiter>();
  /** Sent and not yet answered, by address. */
  private readonly inFlight = new Map<string, Waiter>();
  private queue: string[] = [];
  private timer: NodeJS.Timeout | null = null;
  /** A microtask flush is queued (maxDelayMs 0). */
  private flushQueued = false;

  constructor(
    private readonly source: AccountsSource,
    options: AccountFetcherOptions = {},
  ) {
    const batchSize = options.batchSize ?? MAX_KEYS_PER_CALL;
    if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_KEYS_PER_CALL) {
      throw invalidArgument('batchSize', batchSize, `batchSize must be 1..${MAX_KEYS_PER_CALL}, got ${batchSize}`);
    }
    this.batchSize = batchSize;
    this.maxDelayMs = Math.max(0, options.maxDelayMs ?? 0);
    this.maxQueued = options.maxQueued ?? 10_000;
  }

  /** Addresses waiting to be sent. */
  get queued(): number {
    return this.queue.length;
  }

  /** Addresses queued or in flight. */
  get outstanding(): number {
    return this.waiting.size + this.inFlight.size;
  }

  /** The account at `address` (null when it does not exist). */
  fetch(address: string, options?: AccountFetchOptions): Promise<AccountData | null> {
    const signal = options?.signal;
    if (signal?.aborted === true) return Promise.reject(signal.reason as Error);
    let waiter = this.waiting.get(address) ?? (options?.fresh === true ? undefined : this.inFlight.get(address));
    if (waiter !== undefined) {
      this.stats.coalesced++;
    } else {
      if (this.queue.length >= this.maxQueued) {
        this.stats.refused++;
        return Promise.reject(fetchQueueFull(this.maxQueued));
      }
      let resolve!: Waiter['resolve'];
      let reject!: Waiter['reject'];
      const promise = new Promise<AccountData | null>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      waiter = { promise, resolve, reject, pinned: false, watching: 0 };
      this.waiting.set(address, waiter);
      this.queue.push(address);
      if (this.queue.length >= this.batchSize) this.flushFull();
      else this.schedule();
    }
    if (signal === undefined) {
      waiter.pinned = true;
      return waiter.promise;
    }
    return this.watched(waiter, signal);
  }

  /** The waiter's answer, or the signal's reason at its abort (which may abort the waiter's call). */
  private watched(waiter: Waiter, signal: AbortSignal): Promise<AccountData | null> {
    waiter.watching++;
    return abortable(waiter.promise, signal, () => {
      waiter.watching--;
      if (waiter.call !== undefined && waiter.call.waiters.every(abandoned)) waiter.call.controller.abort(signal.reason);
    });
  }

  /** Sends everything queued now, in batches of batchSize. */
  flush(): void {
    this.cancelTimer();
    while (this.queue.length > 0) this.send(this.queue.splice(0, this.batchSize));
  }

  private flushFull(): void {
    while (this.queue.length >= this.batchSize) this.send(this.queue.splice(0, this.batchSize));
    if (this.queue.length === 0) this.cancelTimer();
  }

  private schedule(): void {
    if (this.maxDelayMs === 0) {
      if (this.flushQueued) return;
      this.flushQueued = true;
      // Not setImmediate: under load a turn of the loop is whatever else the thread has queued
      // (stream data, other replies), and every read would wait for it.
      queueMicrotask(this.flushNow);
      return;
    }
    if (this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush();
    }, this.maxDelayMs);
  }

  private readonly flushNow = (): void => {
    if (!this.flushQueued) return; // flushed meanwhile (a full batch, or flush())
    this.flushQueued = false;
    this.flush();
  };

  private cancelTimer(): void {
    this.flushQueued = false;
    if (this.timer === null) return;
    clearTimeout(this.timer);
    this.timer = null;
  }

  private send(batch: string[]): void {
    const waiters = new Array<Waiter>(batch.length);
    for (let i = 0; i < batch.length; i++) {
      const address = batch[i]!;
      const waiter = this.waiting.get(address)!;
      this.waiting.delete(address);
      this.inFlight.set(address, waiter);
      waiters[i] = waiter;
    }
    const settle = (i: number): Waiter => {
      const address = batch[i]!;
      const waiter = waiters[i]!;
      if (this.inFlight.get(address) === waiter) this.inFlight.delete(address);
      return waiter;
    };
    this.stats.calls++;
    this.stats.keys += batch.length;
    const inFlight: Call = { controller: new AbortController(), waiters };
    for (const waiter of waiters) waiter.call = inFlight;
    let call: Promise<MultipleAccountsResult>;
    try {
      call = this.source.getMultipleAccounts(batch, inFlight.controller.signal);
    } catch (err) {
      call = Promise.reject(err);
    }
    call.then(
      (result) => {
        for (let i = 0; i < batch.length; i++) settle(i).resolve(result.accounts[i] ?? null);
      },
      (err: unknown) => {
        this.stats.failedCalls++;
        for (let i = 0; i < batch.length; i++) settle(i).reject(err);
      },
    );
  }
}
