/**
 * ParsePool: the pool's-thread side of the parse workers. Owns, per worker, an input ring
 * (batches in), a results ring (ParseResult records out) and a counters word block, plus the
 * shared key table and doorbell; runs one long drain task per worker on Piscina (parse-worker.ts).
 *
 * Spec 02 queueSizeLimit: each input ring is a fixed number of bytes (`ringBytes`); submit never
 * blocks and never buffers: when no ring has room the batch is dropped, counted, and submit
 * returns false. Batches are counted, not transactions: a batch's transaction count is only known
 * by parsing it, and the overload path must not parse on the pool's thread.
 *
 * Address lookup tables: the pool also owns the lookup directory (lookup-directory.ts) the workers
 * settle v0 lookups against. The pool's thread fills it through a LookupMatcher
 * (lookup-matcher.ts), which resolves the transactions the workers leave unresolved; setKeys
 * rebuilds its pool maps together with the key table.
 *
 * Batches go to the workers round-robin, moving on to the next ring when one is full, so one slow
 * worker costs its share of capacity, not the batch. Results of one worker come in order; results
 * of different workers may interleave (each carries its slot and receivedAt).
 */
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { ByteRingReader, ByteRingWriter, byteRingStats, createByteRing, type ByteRingStats } from '../threads/index.js';
import { invalidArgument } from '../errors.js';
import { createKeyTable, writeKeyTable } from './key-table.js';
import { createLookupDirectory, DEFAULT_LOOKUP_TABLES, LookupDirectory, type LookupDirectoryStats } from './lookup-directory.js';
import { LD_MAX_KEYS } from './lookup-layout.js';
import {
  BELL_SIGNAL,
  BELL_WAITING,
  BELL_WORDS,
  WS_BATCHES,
  WS_KEY_RELOADS,
  WS_LOOKUP_MATCHES,
  WS_LOOKUP_REFUSED,
  WS_LOOKUP_RESOLVED,
  WS_LOOKUP_TXS,
  WS_MATCHES,
  WS_PARSE_ERRORS,
  WS_RESULT_DROPS,
  WS_TXS,
  WS_UNRESOLVED,
  WS_WORDS,
} from './match-layout.js';
import { ParseResult } from './parse-result.js';
import type { DrainSummary, DrainTask } from './parse-worker.js';

export interface ParsePoolOptions {
  /** Parse workers (spec 02 performance.maxConcurrentProcessing). Default 2. */
  workers?: number;
  /** Bytes of each worker's input ring, a power of two (the queue limit). Default 4 MiB. */
  ringBytes?: number;
  /** Bytes of each worker's results ring, a power of two. Default 1 MiB. */
  resultRingBytes?: number;
  /** Most monitored keys the key table holds, at most 65,535 (pool ids are u16 in the lookup directory). Default 4096. */
  maxKeys?: number;
  /** Address lookup tables the lookup directory holds. Default 16,384. */
  maxLookupTables?: number;
  /** Of those, how many may hold monitored pools (512 bytes each). Default maxLookupTables / 4. */
  lookupMapBlocks?: number;
  /**
   * Settle v0 transactions' address-table lookups in the workers (matches of pools loaded through
   * tables, unresolved records for the rest). Default true; false matches static keys only.
   */
  resolveLookups?: boolean;
  /** Monitored pool keys at start (base58 or 32 bytes); pool id = index. */
  keys?: readonly (string | Uint8Array)[];
  /** The compiled worker module. Default: parse-worker.js beside this module (the dist/ build). */
  filename?: string;
}

export interface ParsePoolStats {
  submitted: number;
  droppedBatches: number;
  droppedBytes: number;
  batches: number;
  txs: number;
  matches: number;
  parseErrors: number;
  resultDrops: number;
  keyReloads: number;
  /** v0 transactions with address-table lookups the workers saw. */
  lookupTxs: number;
  /** Of those, settled in the workers through the lookup directory. */
  lookupResolved: number;
  /** Matches of pools loaded through a lookup table (included in `matches`). */
  lookupMatches: number;
  /** Unresolved records the workers wrote (transactions left to the LookupMatcher). */
  unresolved: number;
  /** Transactions with more lookups than a valid transaction can hold, ignored. */
  lookupRefused: number;
  lookupDirectory: LookupDirectoryStats;
  rings: ByteRingStats[];
}

/** Settles Atomics.waitAsync, missing from the ES2022 lib (see engine/threads/byte-ring.ts). */
type WaitAsync = (a: Int32Array, i: number, v: number, t?: number) => { async: boolean; value: unknown };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

export class ParsePool {
  readonly workers: number;
  private readonly inputs: ByteRingWriter[] = [];
  private readonly inputBuffers: SharedArrayBuffer[] = [];
  private readonly results: ByteRingReader[] = [];
  private readonly tasks: DrainTask[] = [];
  private readonly stats: Int32Array[] = [];
  private readonly keyTable: SharedArrayBuffer;
  /** The lookup directory's writer. Feed it through a LookupMatcher; the pool rebuilds it on setKeys. */
  readonly lookupDirectory: LookupDirectory;
  private currentKeysVersion: number;
  private readonly bell = new Int32Array(new SharedArrayBuffer(BELL_WORDS * 4));
  private readonly piscina: Piscina<DrainTask, DrainSummary>;
  private readonly view = new ParseResult();
  private running: Promise<DrainSummary[]> | null = null;
  private next = 0;
  private submitted = 0;
  private droppedBatches = 0;
  private droppedBytes = 0;

  constructor(options: ParsePoolOptions = {}) {
    this.workers = options.workers ?? 2;
    if (!Number.isInteger(this.workers) || this.workers < 1) throw invalidArgument('workers', this.workers, `workers must be >= 1, got ${this.workers}`);
    const maxKeys = options.maxKeys ?? 4096;
    if (!Number.isInteger(maxKeys) || maxKeys > LD_MAX_KEYS) throw invalidArgument('maxKeys', maxKeys, `maxKeys must be an integer at most ${LD_MAX_KEYS}, got ${maxKeys}`);
    this.keyTable = createKeyTable(maxKeys);
    const keys = options.keys ?? [];
    this.currentKeysVersion = writeKeyTable(this.keyTable, keys);
    const maxTables = options.maxLookupTables ?? DEFAULT_LOOKUP_TABLES;
    this.lookupDirectory = new LookupDirectory(createLookupDirectory({ capacity: maxTables, mapBlocks: options.lookupMapBlocks }));
    this.lookupDirectory.setKeys(keys, this.currentKeysVersion);
    const resolveLookups = options.resolveLookups ?? true;
    for (let i = 0; i < this.workers; i++) {
      const input = createByteRing(options.ringBytes ?? 1 << 22);
      const output = createByteRing(options.resultRingBytes ?? 1 << 20);
      const stats = new SharedArrayBuffer(WS_WORDS * 4);
      this.inputBuffers.push(input);
      this.inputs.push(new ByteRingWriter(input));
      this.results.push(new ByteRingReader(output));
      this.stats.push(new Int32Array(stats));
      this.tasks.push({
        input,
        output,
        keys: this.keyTable,
        lookups: this.lookupDirectory.buffer,
        resolveLookups,
        stats,
        bell: this.bell.buffer as SharedArrayBuffer,
      });
    }
    const filename = options.filename ?? fileURLToPath(new URL('./parse-worker.js', import.meta.url));
    // One long task per worker, so exactly `workers` threads, each running one drain loop.
    this.piscina = new Piscina<DrainTask, DrainSummary>({
      filename,
      minThreads: this.workers,
      maxThreads: this.workers,
      concurrentTasksPerWorker: 1,
      idleTimeout: Number.POSITIVE_INFINITY,
    });
  }

  /** Largest batch submit accepts (half an input ring). */
  get maxBatchBytes(): number {
    return this.inputs[0]!.maxPayloadBytes;
  }

  /**
   * Starts the drain tasks. Batches submitted before start wait in the rings (up to their size).
   * Idempotent.
   */
  start(): void {
    if (this.running !== null) return;
    this.running = Promise.all(this.tasks.map((t) => this.piscina.run(t)));
    this.running.catch(() => {}); // surfaced by close()
  }

  /**
   * Hands one entry batch (ShredStream `Entry.entries` bytes) to a worker: copies it into an input
   * ring and returns true, or returns false and counts the drop when every ring is full (or the
   * batch is larger than maxBatchBytes). Never blocks.
   */
  submit(slot: number | bigint, receivedAt: number, batch: Uint8Array): boolean {
    this.submitted++;
    const n = this.workers;
    for (let tries = 0; tries < n; tries++) {
      const i = this.next;
      this.next = i + 1 === n ? 0 : i + 1;
      const ring = this.inputs[i]!;
      // fits() first: a ring refusing a batch another ring takes is not a drop. With one
      // producer, space found by fits() is still there for tryWrite.
      if (ring.fits(batch.length)) return ring.tryWrite(slot, receivedAt, batch);
    }
    this.droppedBatches++;
    this.droppedBytes += batch.length;
    return false;
  }

  /**
   * Replaces the monitored keys; batches submitted after this call are matched against them.
   * Rebuilds the lookup directory's pool maps for the new keys (from the LookupMatcher's table
   * cache, when one is attached). Returns the key table's new version (ParseResult.keysVersion).
   */
  setKeys(keys: readonly (string | Uint8Array)[]): number {
    const version = writeKeyTable(this.keyTable, keys);
    this.currentKeysVersion = version;
    // After the key table: a worker between the two writes sees versions that differ and leaves
    // its lookups unresolved rather than mixing pool ids of two key sets.
    this.lookupDirectory.setKeys(keys, version);
    return version;
  }

  /** Version of the current key table (what setKeys last returned). */
  get keysVersion(): number {
    return this.currentKeysVersion;
  }

  /**
   * Calls `onResult` for every result ready now, synchronously, and returns how many. The
   * ParseResult is one reused view into the results ring, valid only during the call.
   */
  drainResults(onResult: (result: ParseResult) => void): number {
    let count = 0;
    for (let w = 0; w < this.results.length; w++) {
      const ring = this.results[w]!;
      for (let rec = ring.tryRead(); rec !== null; rec = ring.tryRead()) {
        onResult(this.view.attach(w, rec));
        count++;
      }
    }
    return count;
  }

  /**
   * Resolves true when a result is ready, false after `timeoutMs` or when every worker has ended.
   * Does not block the event loop (Atomics.waitAsync on the doorbell).
   */
  async waitForResults(timeoutMs: number): Promise<boolean> {
    if (this.hasResults()) return true;
    const bell = this.bell;
    // Announce, then re-check: pairs with the worker's (results HEAD store, BELL_WAITING load).
    Atomics.store(bell, BELL_WAITING, 1);
    const signal = Atomics.load(bell, BELL_SIGNAL);
    if (this.hasResults() || this.results.every((r) => r.closed)) {
      Atomics.store(bell, BELL_WAITING, 0);
      return this.hasResults();
    }
    const waited = waitAsync(bell, BELL_SIGNAL, signal, timeoutMs);
    if (waited.async) await waited.value;
    Atomics.store(bell, BELL_WAITING, 0);
    return this.hasResults();
  }

  /** Counters of the pool and its workers (each word read atomically). */
  statistics(): ParsePoolStats {
    const sum = (word: number): number => this.stats.reduce((s, a) => s + (Atomics.load(a, word) >>> 0), 0);
    return {
      submitted: this.submitted,
      droppedBatches: this.droppedBatches,
      droppedBytes: this.droppedBytes,
      batches: sum(WS_BATCHES),
      txs: sum(WS_TXS),
      matches: sum(WS_MATCHES),
      parseErrors: sum(WS_PARSE_ERRORS),
      resultDrops: sum(WS_RESULT_DROPS),
      keyReloads: sum(WS_KEY_RELOADS),
      lookupTxs: sum(WS_LOOKUP_TXS),
      lookupResolved: sum(WS_LOOKUP_RESOLVED),
      lookupMatches: sum(WS_LOOKUP_MATCHES),
      unresolved: sum(WS_UNRESOLVED),
      lookupRefused: sum(WS_LOOKUP_REFUSED),
      lookupDirectory: { ...this.lookupDirectory.stats },
      rings: this.inputBuffers.map(byteRingStats),
    };
  }

  /**
   * Closes the input rings, lets the workers finish the batches already queued, and ends the
   * threads. Results still unread stay readable with drainResults. Returns each worker's summary.
   */
  async close(): Promise<DrainSummary[]> {
    for (const ring of this.inputs) ring.close();
    this.start(); // batches queued before start are still parsed
    try {
      return await this.running!;
    } finally {
      await this.piscina.destroy();
    }
  }

  private hasResults(): boolean {
    for (const r of this.results) if (r.hasData()) return true;
    return false;
  }
}
