/**
 * The pool-state scanner (spec 02), assembled:
 *
 *   block-entry stream ──▶ ParsePool.submit ──(SAB input ring)──▶ parse workers: parse, match keys
 *        (gRPC)                                                           │ (SAB results ring)
 *   sink.publish ◀── event ◀── PoolLoader.load ◀── ProcessingQueue ◀── drainResults (main thread)
 *   (cache or bus)            (batched, coalesced getMultipleAccounts, decode)
 *
 * Entries are copied once into a worker's input ring; workers parse and keep the transactions that
 * name a monitored pool; their matches come back through the results ring (no structured clone on
 * the hot path). Each match is one transaction touching one pool: it waits in the processing queue
 * (`queueSizeLimit`, drops counted), batches of `batchSize` read the pools' state through the loader
 * (`maxConcurrentProcessing` batches at once), and one PoolStateUpdateEvent per transaction and pool
 * goes to the sink.
 *
 * Slot rule and same-slot updates: consumers ignore a state whose slot is not newer than the one they
 * hold (spec 02). When a transaction's state is read in a slot already published for that pool, the
 * newer bytes would be ignored downstream; the scanner re-reads that pool once the stream has moved
 * past the slot ("settle"), and publishes the settled state under the last such transaction. The
 * same holds for a state read at a slot before the transaction's own: an RPC node serves complete
 * (replayed) slots only, even at `processed`, while entries arrive as the leader makes the slot, so
 * the first read usually predates the transaction; its writes come with the settle read once the
 * stream is past the transaction's slot.
 *
 * Latency metrics (the ShredStream Entry carries no timestamp, so "stream" means receipt of the gRPC
 * message): shredstream_latency_ms = receipt → matches back on the main thread (ring wait + parse);
 * processing_latency_ms = matches back → publish; end_to_end_latency_ms = receipt → publish. The
 * event's `latency` is the end-to-end figure of its transaction.
 */
import { performance } from 'node:perf_hooks';

import { encodeBase58Fast } from '../chain/index.js';
import { ParseStatus } from '../chain/index.js';
import { isPubkey } from '../chain/index.js';
import { ErrorCode, TpError, invalidArgument } from '../errors.js';
import { LogThrottle } from '../obs/index.js';
import { createLogger, type Logger } from '../obs/index.js';
import { createScannerMetrics, type ScannerMetrics } from '../obs/index.js';
import { reservesOf } from '../pools/index.js';
import type { LoadedPool, PoolLoader, PoolLoadFailure } from '../pools/index.js';
import { LookupMatcher, type LookupFailure, type LookupMatch, type LookupMatcherStats } from './lookup-matcher.js';
import type { LookupTableCache } from './lookup-tables.js';
import { ParsePool, type ParsePoolOptions, type ParsePoolStats } from './parse-pool.js';
import type { ParseResult } from './parse-result.js';
import { buildPoolStateUpdateEvent, type PoolStateUpdateEvent } from './pool-state-event.js';
import { ProcessingQueue, type ProcessingQueueStats } from './processing-queue.js';
import { BlockStreamClient, type BlockStreamClientOptions, type BlockStreamStats, type StreamEntry } from './stream-client.js';
import type { GeyserAccountStream } from './geyser-stream.js';

/** Where events go: the in-process pool cache, or the bus (split deployment). */
export interface PoolStateSink {
  /** Publishes one event; `loaded` is the decoded state it was built from. Rejects when it fails. */
  publish(event: PoolStateUpdateEvent, loaded: LoadedPool): void | Promise<void>;
}

export interface ScannerPerformance {
  /** Batches of account reads in flight at once (spec 02 default 20). */
  maxConcurrentProcessing: number;
  /** Transactions per batch (spec 02 default 10). */
  batchSize: number;
  /** Transactions waiting beyond which new ones are dropped and counted (spec 02 default 100). */
  queueSizeLimit: number;
}

export interface ScannerOptions {
  stream: Omit<BlockStreamClientOptions, 'onEntry' | 'logger'>;
  /** Monitored pool addresses at start. */
  pools: readonly string[];
  loader: PoolLoader;
  sink: PoolStateSink;
  performance: ScannerPerformance;
  /** Parse worker pool (workers, ring sizes, worker module). */
  parse?: ParsePoolOptions;
  metrics?: ScannerMetrics;
  logger?: Logger;
  /** Put the base64 account data in each event's `state.rawData`. Default false. */
  includeRawData?: boolean;
  /**
   * Address lookup tables, read through RPC once and cached: transactions that reach a monitored
   * pool only through a table are found with them. Without it such transactions are not seen.
   */
  lookupTables?: LookupTableCache;
  /**
   * `scanner.stateSource` geyser: the account stream the pool state comes from, in place of the
   * block-entry stream (not started then). Its owner feeds `refresh` and `noteSlot`
   * (engine/scanner/geyser-state-source.ts); the scanner starts and closes it and reports its
   * connection as the stream's.
   */
  accountStream?: GeyserAccountStream;
  /**
   * Ticks that end a slot (the cluster's ticks_per_slot; mainnet and the simulator 64): a slot is
   * complete once its last tick has come on the stream, before the next slot's first entry.
   */
  ticksPerSlot?: number;
}

/** When each stage of one event ended (performance.now() ms of this thread). */
export interface PublishTiming {
  /** The transaction's slot: the event's state holds its writes when `state.slot` is at least this. */
  transactionSlot: bigint;
  /** The entry arrived from the stream. */
  receivedAt: number;
  /** Its match came back from the parse worker. */
  matchedAt: number;
  /** Its batch left the processing queue (the pool read starts). */
  dequeuedAt: number;
  /** The pool state was read and decoded (the event is built from here). */
  loadedAt: number;
  /** The sink took the event (in-process: the cache holds the state). */
  publishedAt: number;
}

export type PublishedListener = (event: PoolStateUpdateEvent, timing: PublishTiming) => void;

/** One transaction that touched one monitored pool, waiting for the pool's state. */
interface PendingUpdate {
  address: string;
  /** 64 signature bytes (a copy: the results ring is reused). */
  signature: Uint8Array;
  slot: bigint;
  /** performance.now() at receipt of the entry. */
  receivedAt: number;
  /** performance.now() when the match reached the main thread. */
  matchedAt: number;
  /** 0 for a first read; k for the k-th settle re-read (see the module comment). */
  settle: number;
}

export interface ScannerStats {
  stream: BlockStreamStats;
  entriesReceived: number;
  /** Entry batches refused because every input ring was full (or the batch was too large). */
  entriesDropped: number;
  transactionsProcessed: number;
  matches: number;
  eventsPublished: number;
  publishErrors: number;
  parseErrors: number;
  /** Matches dropped because `queueSizeLimit` transactions were waiting. */
  droppedTransactions: number;
  loadFailures: Record<PoolLoadFailure['reason'], number>;
  settles: number;
  /** Matches found on the main thread after fetching a lookup table, and the failures. */
  lookupMatches: number;
  lookupFailures: Record<LookupFailure['kind'], number>;
  lookups: LookupMatcherStats | null;
  queue: ProcessingQueueStats;
  parse: ParsePoolStats;
  monitoredPools: number;
  /** Highest slot seen on the stream (decimal). */
  lastSlot: string;
  /** ms since the last entry; null before the first. */
  lastEntryAgeMs: number | null;
}

/** At most this many key-table versions are remembered for matches still in flight. */
const KEY_VERSIONS_KEPT = 8;
/** A settle whose re-read still shows an old slot is retried on the next slots, this many times. */
const SETTLE_ATTEMPTS = 3;
/** Mainnet's ticks per slot (DEFAULT_TICKS_PER_SLOT). */
const DEFAULT_TICKS_PER_SLOT = 64;
/** Slots whose ticks are being counted, at most (entries of older slots no longer come). */
const TICK_SLOTS_KEPT = 8;
/** Signature of an event caused by an account-stream write rather than by one transaction. */
const NO_SIGNATURE = new Uint8Array(64);

export class Scanner {
  readonly metrics: ScannerMetrics;
  private readonly log: Logger;
  private readonly stream: BlockStreamClient;
  private readonly parsePool: ParsePool;
  private readonly queue: ProcessingQueue<PendingUpdate>;
  private readonly loader: PoolLoader;
  private readonly sink: PoolStateSink;
  private readonly includeRawData: boolean;
  private readonly throttle = new LogThrottle();
  /** Pool addresses by key-table version (pool id = index). */
  private readonly keyVersions = new Map<number, readonly string[]>();
  private currentPools: readonly string[] = [];
  /** Newest published state per pool: its slot and (account stream) write version within it. */
  private readonly publishedSlot = new Map<string, { slot: bigint; writeVersion: bigint | undefined }>();
  /** Pools to re-read once the stream passes `afterSlot`. */
  /** `due`: goes at the end of the current run (the stream is already past the slot). */
  private readonly settles = new Map<string, { afterSlot: bigint; update: PendingUpdate; due: boolean }>();
  /** A microtask will send the due settles. */
  private dueSettlesQueued = false;
  private readonly publishedListeners: PublishedListener[] = [];
  private lastSlot = 0n;
  private readonly ticksPerSlot: number;
  /** Ticks seen so far of the slots not yet complete. */
  private readonly slotTicks = new Map<bigint, number>();
  /** Newest slot whose last tick has been seen. */
  private completeSlot = -1n;
  private lastEntryAt = -1;
  private running = false;
  private closing = false;
  private drainLoop: Promise<void> | undefined;
  private readonly counters = {
    entriesReceived: 0,
    entriesDropped: 0,
    transactionsProcessed: 0,
    matches: 0,
    eventsPublished: 0,
    publishErrors: 0,
    parseErrors: 0,
    droppedTransactions: 0,
    settles: 0,
  };
  private readonly loadFailures: Record<PoolLoadFailure['reason'], number> = { missing: 0, unknown_owner: 0, decode: 0, rpc: 0 };
  private readonly lookupFailures: Record<LookupFailure['kind'], number> = { missing: 0, invalid: 0, deactivated: 0, index: 0, rpc: 0, overload: 0 };
  private lookupMatches = 0;
  private readonly matcher: LookupMatcher | undefined;
  private readonly accountStream: GeyserAccountStream | undefined;

  constructor(options: ScannerOptions) {
    this.metrics = options.metrics ?? createScannerMetrics();
    this.log = options.logger ?? createLogger({ name: 'scanner' });
    this.loader = options.loader;
    this.accountStream = options.accountStream;
    this.sink = options.sink;
    this.includeRawData = options.includeRawData ?? false;
    this.ticksPerSlot = options.ticksPerSlot ?? DEFAULT_TICKS_PER_SLOT;
    if (!Number.isInteger(this.ticksPerSlot) || this.ticksPerSlot < 1) throw invalidArgument('ticksPerSlot', this.ticksPerSlot, `ticksPerSlot must be an integer >= 1, got ${this.ticksPerSlot}`);
    validatePools(options.pools);
    this.parsePool = new ParsePool({ ...options.parse, keys: options.pools, resolveLookups: options.lookupTables !== undefined });
    if (options.lookupTables !== undefined) {
      this.matcher = new LookupMatcher(this.parsePool, options.lookupTables, {
        onMatch: (m) => this.onLookupMatch(m),
        onFailure: (f) => {
          this.lookupFailures[f.kind]++;
          const suppressed = this.throttle.take(`lookup-${f.kind}`);
          if (suppressed >= 0) this.log.warn({ table: f.table, kind: f.kind, slot: f.slot, suppressed }, 'lookup table could not be resolved: transaction skipped');
        },
      });
    }
    this.rememberKeys(this.parsePool.keysVersion, options.pools);
    this.queue = new ProcessingQueue<PendingUpdate>({
      ...options.performance,
      process: (batch) => this.processBatch(batch),
    });
    this.stream = new BlockStreamClient({ ...options.stream, onEntry: (entry) => this.onEntry(entry), logger: this.log });
    this.stream.on('connected', (connected) => this.metrics.connected.set(connected ? 1 : 0));
    this.stream.on('connectionError', () => this.metrics.connectionErrors.inc());
  }

  /** Calls `listener` after every successful publish (tests, benchmarks, debugging taps). */
  onPublished(listener: PublishedListener): void {
    this.publishedListeners.push(listener);
  }

  /** The monitored pools now in effect. */
  get pools(): readonly string[] {
    return this.currentPools;
  }

  get connected(): boolean {
    return this.accountStream?.connected ?? this.stream.connected;
  }

  /** The account stream pool state comes from (scanner.stateSource geyser); undefined otherwise. */
  get geyserStream(): GeyserAccountStream | undefined {
    return this.accountStream;
  }

  /** Highest slot seen on the stream (0n before the first entry). */
  get streamSlot(): bigint {
    return this.lastSlot;
  }

  /** Starts the workers, the result drain and the stream. */
  start(): void {
    if (this.running || this.closing) return;
    this.running = true;
    this.parsePool.start();
    this.drainLoop = this.drain();
    if (this.accountStream === undefined) this.stream.start();
    else this.accountStream.start();
    this.log.info({ target: this.accountStream === undefined ? this.stream.target : 'geyser', pools: this.currentPools.length, workers: this.parsePool.workers }, 'scanner started');
  }

  /**
   * Replaces the monitored pools (POST /config/pools): validated first (base58 keys, no repeats, at
   * most the key table's capacity); batches parsed after the call match the new list.
   * Throws TpError(TP_ERR_CONFIG_INVALID) and changes nothing when the list is bad.
   */
  setPools(pools: readonly string[]): void {
    validatePools(pools);
    let version: number;
    try {
      version = this.parsePool.setKeys(pools);
    } catch (err) {
      throw new TpError(ErrorCode.ConfigInvalid, `monitored pools: ${(err as Error).message}`, { cause: err });
    }
    this.rememberKeys(version, pools);
    const kept = new Set(pools);
    for (const address of this.publishedSlot.keys()) if (!kept.has(address)) this.publishedSlot.delete(address);
    for (const address of this.settles.keys()) if (!kept.has(address)) this.settles.delete(address);
    this.log.info({ pools: pools.length, version }, 'monitored pools replaced');
  }

  stats(): ScannerStats {
    return {
      stream: this.accountStream === undefined ? this.stream.stats() : { ...this.stream.stats(), connected: this.accountStream.connected },
      ...this.counters,
      loadFailures: { ...this.loadFailures },
      lookupMatches: this.lookupMatches,
      lookupFailures: { ...this.lookupFailures },
      lookups: this.matcher === undefined ? null : { ...this.matcher.stats },
      queue: this.queue.stats(),
      parse: this.parsePool.statistics(),
      monitoredPools: this.currentPools.length,
      lastSlot: this.lastSlot.toString(),
      lastEntryAgeMs: this.lastEntryAt < 0 ? null : Math.round(performance.now() - this.lastEntryAt),
    };
  }

  /**
   * Stops taking entries, lets the workers finish what they hold, processes and publishes every
   * match already taken, then ends the workers. Idempotent.
   */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    await this.stream.close();
    await this.accountStream?.close();
    if (this.running) {
      const closed = this.parsePool.close();
      await closed;
      await this.drainLoop;
      this.parsePool.drainResults(this.onResult);
      await this.matcher?.idle();
      this.matcher?.close();
      await this.queue.idle();
    } else {
      await this.parsePool.close();
    }
    this.running = false;
    this.log.info({ ...this.counters }, 'scanner stopped');
  }

  /**
   * The account stream changed an account of `address` (a monitored pool) at `slot`, written by the
   * transaction `signature` (64 bytes; all zeros when the stream did not name it): the pool is read
   * again (from the stream's held accounts) and published under that signature, as a block-entry
   * match would be. `receivedAt`: performance.now() when the write arrived (default now).
   */
  refresh(address: string, slot: bigint, signature: Uint8Array = NO_SIGNATURE, receivedAt = performance.now()): void {
    if (this.closing) return;
    const now = performance.now();
    this.enqueue({ address, signature, slot, receivedAt, matchedAt: now, settle: 0 });
    this.metrics.processingQueueSize.set(this.queue.size);
  }

  /** A slot reported by the account stream: the scanner's slot clock and liveness (health). */
  noteSlot(slot: bigint): void {
    this.lastEntryAt = performance.now();
    if (slot > this.lastSlot) {
      this.lastSlot = slot;
      if (this.settles.size > 0) this.releaseSettles(slot);
    }
  }

  private rememberKeys(version: number, pools: readonly string[]): void {
    this.currentPools = [...pools];
    this.keyVersions.set(version, this.currentPools);
    if (this.keyVersions.size > KEY_VERSIONS_KEPT) this.keyVersions.delete(this.keyVersions.keys().next().value!);
  }

  private onEntry(entry: StreamEntry): void {
    this.counters.entriesReceived++;
    this.metrics.entriesReceived.inc();
    this.lastEntryAt = entry.receivedAt;
    if (entry.slot > this.lastSlot) {
      this.lastSlot = entry.slot;
      if (this.settles.size > 0) this.releaseSettles(entry.slot);
    }
    if (!this.parsePool.submit(entry.slot, entry.receivedAt, entry.entries)) {
      this.counters.entriesDropped++;
      const suppressed = this.throttle.take('entry-dropped');
      if (suppressed >= 0) {
        this.log.warn({ slot: entry.slot.toString(), bytes: entry.entries.length, suppressed }, 'parse queue full: entry batch dropped');
      }
    }
  }

  /** Waits on the workers' doorbell and drains every result as it comes. */
  private async drain(): Promise<void> {
    while (!this.closing) {
      await this.parsePool.waitForResults(250);
      this.parsePool.drainResults(this.onResult);
      this.metrics.processingQueueSize.set(this.queue.size);
    }
  }

  private readonly onResult = (r: ParseResult): void => {
    const now = performance.now();
    const txs = r.txCount;
    this.counters.transactionsProcessed += txs;
    if (txs > 0) this.metrics.transactionsProcessed.inc(txs);
    if (r.status !== ParseStatus.Ok) {
      this.counters.parseErrors++;
      this.metrics.parsingErrors.inc();
      const suppressed = this.throttle.take('parse-error');
      if (suppressed >= 0) {
        this.log.warn({ slot: r.slot, status: r.status, errorOffset: r.errorOffset, suppressed }, 'entry batch does not parse: skipped');
      }
      return;
    }
    this.metrics.shredstreamLatencyMs.observe(now - r.receivedAt);
    if (r.tickCount > 0) this.countTicks(r.slotBigInt(), r.tickCount);
    // Transactions whose lookup tables the workers do not know yet: resolved here, reported later.
    if (this.matcher !== undefined && r.unresolvedCount > 0) this.matcher.take(r);
    const n = r.matchCount;
    if (n === 0) return;
    const pools = this.keyVersions.get(r.keysVersion) ?? this.currentPools;
    const slot = r.slotBigInt();
    for (let i = 0; i < n; i++) {
      const address = pools[r.matchPool(i)];
      if (address === undefined) continue; // matched against a key list already replaced
      this.enqueue({ address, signature: r.matchSignature(i).slice(), slot, receivedAt: r.receivedAt, matchedAt: now, settle: 0 });
    }
    this.metrics.processingQueueSize.set(this.queue.size);
  };

  /** A transaction found through a lookup table fetched on the main thread. */
  private onLookupMatch(m: LookupMatch): void {
    const address = (this.keyVersions.get(m.keysVersion) ?? this.currentPools)[m.pool];
    if (address === undefined) return;
    this.lookupMatches++;
    const slot = (BigInt(m.slotHi) << 32n) | BigInt(m.slotLo);
    this.enqueue({ address, signature: m.signature, slot, receivedAt: m.receivedAt, matchedAt: performance.now(), settle: 0 });
    this.metrics.processingQueueSize.set(this.queue.size);
  }

  private enqueue(update: PendingUpdate): void {
    this.counters.matches++;
    if (this.queue.push(update)) return;
    this.counters.droppedTransactions++;
    this.metrics.droppedTransactions.inc();
    const suppressed = this.throttle.take('tx-dropped');
    if (suppressed >= 0) {
      this.log.warn({ queueSizeLimit: this.queue.queueSizeLimit, suppressed }, 'processing queue full: transaction dropped');
    }
  }

  /**
   * One batch: read every distinct pool once, then one event per transaction. The events go to the
   * sink one after the other without waiting for each other's outcome (a bus publish is answered by
   * its ack a round trip later: awaiting each would make a batch of n cost n round trips); the batch
   * ends when every publish of it has settled, so `maxConcurrentProcessing` still bounds them.
   */
  private async processBatch(batch: PendingUpdate[]): Promise<void> {
    const dequeuedAt = performance.now();
    const addresses = [...new Set(batch.map((u) => u.address))];
    let results;
    try {
      results = await this.loader.load(addresses);
    } catch (err) {
      // A loader reports failures per pool; a throw is a bug or a dead process: count every pool.
      this.loadFailures.rpc += addresses.length;
      this.log.error({ err, pools: addresses.length }, 'pool state read failed');
      return;
    }
    const byAddress = new Map<string, (typeof results)[number]>();
    for (let i = 0; i < addresses.length; i++) byAddress.set(addresses[i]!, results[i]!);
    let publishing: Promise<void>[] | undefined;
    for (const update of batch) {
      const result = byAddress.get(update.address)!;
      if (!result.ok) {
        this.loadFailures[result.error.reason]++;
        const suppressed = this.throttle.take(`load-${result.error.reason}`);
        if (suppressed >= 0) this.log.warn({ pool: update.address, reason: result.error.reason, message: result.error.message, suppressed }, 'pool state read failed');
        continue;
      }
      const settling = this.publish(update, result.value, dequeuedAt);
      if (settling !== undefined) (publishing ??= []).push(settling);
    }
    // Each settles without rejecting (failures are counted where they happen).
    if (publishing !== undefined) await Promise.all(publishing);
    this.metrics.processingQueueSize.set(this.queue.size);
  }

  /**
   * Builds the event of `update` from `loaded` and hands it to the sink. Returns undefined when it is
   * done (nothing to publish, or a sink that stores synchronously), else a promise that settles,
   * never rejecting, once the sink's publish has (an asynchronous sink: the bus).
   */
  private publish(update: PendingUpdate, loaded: LoadedPool, dequeuedAt: number): Promise<void> | undefined {
    const published = this.publishedSlot.get(update.address);
    const stale = published !== undefined && !isNewerState(loaded, published);
    if (!stale) {
      this.publishedSlot.set(update.address, { slot: loaded.slot, writeVersion: loaded.writeVersion });
      const pending = this.settles.get(update.address);
      if (pending !== undefined && pending.afterSlot < loaded.slot) this.settles.delete(update.address); // this read covers it
      if (update.settle > 0) this.counters.settles++;
    }
    // A node serves complete slots only (processed = its newest replayed bank): a state read at a
    // slot before the transaction's does not hold its writes. Re-read once the stream is past the
    // transaction's slot, as for a state consumers would ignore (slot rule) once past that slot.
    const before = loaded.slot < update.slot;
    let afterSlot = before ? update.slot : -1n;
    if (stale && published.slot > afterSlot) afterSlot = published.slot;
    if (afterSlot >= 0n) this.armSettle(update, afterSlot, before);
    if (stale && update.settle > 0) return; // a settle that did not get past the slot publishes nothing
    const now = performance.now();
    const event = buildPoolStateUpdateEvent({
      loaded,
      reserves: reservesOf(loaded),
      signature: encodeBase58Fast(update.signature),
      latencyMs: now - update.receivedAt,
      includeRawData: this.includeRawData,
    });
    let sent: void | Promise<void>;
    try {
      sent = this.sink.publish(event, loaded);
    } catch (err) {
      this.publishFailed(update, err);
      return undefined;
    }
    const stages = { dequeuedAt, loadedAt: now };
    if (sent === undefined) {
      this.published(update, event, stages);
      return undefined;
    }
    return sent.then(
      () => this.published(update, event, stages),
      (err: unknown) => this.publishFailed(update, err),
    );
  }

  private publishFailed(update: PendingUpdate, err: unknown): void {
    this.counters.publishErrors++;
    this.metrics.busPublishErrors.inc();
    const suppressed = this.throttle.take('publish');
    if (suppressed >= 0) this.log.error({ err, pool: update.address, suppressed }, 'event publish failed');
  }

  /** Counts a publish the sink took, with its latency; tells the listeners. */
  private published(update: PendingUpdate, event: PoolStateUpdateEvent, stages: { dequeuedAt: number; loadedAt: number }): void {
    const done = performance.now();
    this.counters.eventsPublished++;
    this.metrics.eventsPublished.inc();
    this.metrics.processingLatencyMs.observe(done - update.matchedAt);
    this.metrics.endToEndLatencyMs.observe(done - update.receivedAt);
    if (this.publishedListeners.length > 0) {
      const timing: PublishTiming = { transactionSlot: update.slot, receivedAt: update.receivedAt, matchedAt: update.matchedAt, dequeuedAt: stages.dequeuedAt, loadedAt: stages.loadedAt, publishedAt: done };
      for (const listener of this.publishedListeners) listener(event, timing);
    }
  }

  /**
   * Re-reads `update`'s pool once the stream is past `afterSlot` (its last tick seen, or a later
   * slot's entry), at most SETTLE_ATTEMPTS times. `missedTransaction`: the read predates the
   * transaction's slot; its first re-read goes at once when the stream is already past the slot.
   * Retries, and re-reads of a state already published, wait for the next slot.
   */
  private armSettle(update: PendingUpdate, afterSlot: bigint, missedTransaction: boolean): void {
    const attempt = update.settle + 1;
    if (attempt > SETTLE_ATTEMPTS) return;
    const pending = this.settles.get(update.address);
    if (pending !== undefined && pending.afterSlot > afterSlot) return; // a later re-read is armed: it covers this one
    const due = missedTransaction && attempt === 1 && (this.completeSlot >= afterSlot || this.lastSlot > afterSlot);
    this.settles.set(update.address, { afterSlot, update: { ...update, settle: attempt }, due });
    if (!due || this.dueSettlesQueued) return;
    // After the batch: its other transactions of the pool join this one re-read (one per pool).
    this.dueSettlesQueued = true;
    queueMicrotask(this.sendDueSettles);
  }

  private readonly sendDueSettles = (): void => {
    this.dueSettlesQueued = false;
    if (this.closing) return;
    for (const [address, s] of this.settles) {
      if (!s.due) continue;
      this.settles.delete(address);
      this.requeueSettle(s.update);
    }
  };

  private requeueSettle(update: PendingUpdate): void {
    if (this.queue.push({ ...update, matchedAt: performance.now() })) return;
    this.counters.droppedTransactions++;
    this.metrics.droppedTransactions.inc();
  }

  /** Counts a batch's ticks; the slot's last one completes it: settles waiting for it are due. */
  private countTicks(slot: bigint, ticks: number): void {
    if (slot <= this.completeSlot) return;
    const seen = (this.slotTicks.get(slot) ?? 0) + ticks;
    if (seen < this.ticksPerSlot) {
      this.slotTicks.set(slot, seen);
      if (this.slotTicks.size > TICK_SLOTS_KEPT) this.slotTicks.delete(this.slotTicks.keys().next().value!);
      return;
    }
    this.slotTicks.delete(slot);
    this.completeSlot = slot;
    if (this.settles.size > 0) this.releaseSettles(slot + 1n);
  }

  private releaseSettles(slot: bigint): void {
    for (const [address, s] of this.settles) {
      if (slot <= s.afterSlot) continue;
      this.settles.delete(address);
      this.requeueSettle(s.update);
    }
  }
}

/**
 * The slot rule, with the account stream's write version: a newer slot, or the same slot with a
 * higher write version when both states carry one (a later write of that slot, streamed).
 */
function isNewerState(loaded: LoadedPool, published: { slot: bigint; writeVersion: bigint | undefined }): boolean {
  if (loaded.slot !== published.slot) return loaded.slot > published.slot;
  return loaded.writeVersion !== undefined && published.writeVersion !== undefined && loaded.writeVersion > published.writeVersion;
}

function validatePools(pools: readonly string[]): void {
  const seen = new Set<string>();
  const issues: string[] = [];
  for (const [i, p] of pools.entries()) {
    if (typeof p !== 'string' || !isPubkey(p)) issues.push(`pools[${i}]: ${JSON.stringify(p)} is not a base58 public key`);
    else if (seen.has(p)) issues.push(`pools[${i}]: ${p} is listed twice`);
    seen.add(p);
  }
  if (issues.length > 0) throw new TpError(ErrorCode.ConfigInvalid, `invalid monitored pools: ${issues.join('; ')}`, { context: { issues } });
}
