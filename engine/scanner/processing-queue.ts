/**
 * The scanner's processing queue (spec 02 "performance"): transactions that touched a monitored pool
 * wait here for their pool state to be read. At most `queueSizeLimit` wait; one more is dropped and
 * counted (`dropped_transactions_total`), never buffered. Up to `maxConcurrentProcessing` batches of
 * at most `batchSize` transactions are processed at once; a batch starts as soon as there is work and
 * a free slot, so a lone transaction is not held back waiting for company.
 */
import { invalidArgument } from '../errors.js';

export interface ProcessingQueueOptions<T> {
  queueSizeLimit: number;
  batchSize: number;
  maxConcurrentProcessing: number;
  /** Processes one batch; the queue never calls it with an empty batch. Errors are the caller's. */
  process: (batch: T[]) => Promise<void>;
}

export interface ProcessingQueueStats {
  queued: number;
  inFlight: number;
  accepted: number;
  dropped: number;
  batches: number;
}

export class ProcessingQueue<T> {
  readonly queueSizeLimit: number;
  readonly batchSize: number;
  readonly maxConcurrentProcessing: number;
  private readonly process: (batch: T[]) => Promise<void>;
  /** A ring of queued items (head .. head + count). */
  private readonly items: (T | undefined)[];
  private head = 0;
  private count = 0;
  private running = 0;
  private accepted = 0;
  private dropped = 0;
  private batches = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(options: ProcessingQueueOptions<T>) {
    for (const key of ['queueSizeLimit', 'batchSize', 'maxConcurrentProcessing'] as const) {
      const v = options[key];
      if (!Number.isInteger(v) || v < 1) throw invalidArgument(key, v, `${key} must be an integer >= 1, got ${v}`);
    }
    this.queueSizeLimit = options.queueSizeLimit;
    this.batchSize = options.batchSize;
    this.maxConcurrentProcessing = options.maxConcurrentProcessing;
    this.process = options.process;
    this.items = new Array<T | undefined>(this.queueSizeLimit);
  }

  /** Items waiting (the `processing_queue_size` gauge). */
  get size(): number {
    return this.count;
  }

  /** Queues `item`, or returns false (dropped, counted) when `queueSizeLimit` items already wait. */
  push(item: T): boolean {
    if (this.count === this.queueSizeLimit) {
      this.dropped++;
      return false;
    }
    this.items[(this.head + this.count) % this.queueSizeLimit] = item;
    this.count++;
    this.accepted++;
    this.pump();
    return true;
  }

  stats(): ProcessingQueueStats {
    return { queued: this.count, inFlight: this.running, accepted: this.accepted, dropped: this.dropped, batches: this.batches };
  }

  /** Resolves when nothing is queued or in flight. */
  idle(): Promise<void> {
    if (this.count === 0 && this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (this.count > 0 && this.running < this.maxConcurrentProcessing) {
      const n = Math.min(this.batchSize, this.count);
      const batch = new Array<T>(n);
      for (let i = 0; i < n; i++) {
        batch[i] = this.items[this.head]!;
        this.items[this.head] = undefined;
        this.head = (this.head + 1) % this.queueSizeLimit;
      }
      this.count -= n;
      this.running++;
      this.batches++;
      let done: Promise<void>;
      try {
        done = this.process(batch);
      } catch (err) {
        done = Promise.reject(err);
      }
      done.catch(() => {}).finally(() => {
        this.running--;
        this.pump();
        if (this.count === 0 && this.running === 0) {
          const waiters = this.idleWaiters;
          this.idleWaiters = [];
          for (const w of waiters) w();
        }
      });
    }
  }
}
