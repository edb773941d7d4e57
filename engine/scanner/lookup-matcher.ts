/**
 * LookupMatcher: the pool's-thread side of address lookup tables. Parse workers settle a v0
 * transaction's loaded accounts against the lookup directory when they can; the transactions they
 * cannot settle (a table not in the directory yet, an index past a table's known length, keys
 * changed meanwhile) come back as unresolved records in ParseResult. The matcher:
 *
 * 1. takes those records (copying them: the ParseResult view dies with the drain callback);
 * 2. resolves each with the LookupTableCache: synchronously when the cache holds every table and
 *    index, else by one batched RPC fetch per table (coalesced across transactions; a table whose
 *    index is past its known length is refetched once, as the cache does);
 * 3. writes every table it used into the lookup directory, so the next transactions through that
 *    table are settled in the worker;
 * 4. reports each monitored pool found as a LookupMatch (the fields of a worker match), and each
 *    transaction it cannot resolve as a LookupFailure, counted by kind.
 *
 * It also serves the directory's rebuild on ParsePool.setKeys: the directory asks it for every
 * table's addresses, which it reads from the cache (no RPC).
 *
 * The stream runs ahead of the RPC node: a table created or extended a slot ago may not be there
 * yet. A transaction that fails as `missing`, `index` or `rpc` is therefore tried once more after
 * `retryDelayMs` (about a slot) before it is reported.
 *
 * Bounds: at most `maxPending` transactions wait on fetches or retries (more are failed as
 * `overload` at once); tables still found missing, invalid or deactivated after that are not
 * fetched again for `negativeTtlMs` (so a stream of transactions naming a bad table costs two
 * fetches, not two per transaction).
 */
import { type AddressTableLookup, LookupTableError, type LookupTableErrorKind } from '../chain/index.js';
import { ErrorCode, isTpError } from '../errors.js';
import type { LookupDirectory } from './lookup-directory.js';
import { type LoadedAddresses, type LookupTableCache } from './lookup-tables.js';
import { MATCH_VIA_LOOKUP } from './match-layout.js';
import type { ParseResult } from './parse-result.js';

/** A pool found through a lookup table on the pool's thread: a worker match's fields, owned. */
export interface LookupMatch {
  /** The batch's slot as its two u32 words and as a number (exact below 2^53). */
  slotLo: number;
  slotHi: number;
  slot: number;
  /** The batch's receivedAt, as given to ParsePool.submit. */
  receivedAt: number;
  /** Worker that parsed the batch. */
  worker: number;
  /** Transaction index in the batch (payload order). */
  tx: number;
  /** Pool id under the key table of version `keysVersion`. */
  pool: number;
  /** Account index in the v0 account list (static keys, loaded writable, loaded readonly). */
  keyIndex: number;
  /** The transaction's first signature (its id): 64 bytes, a copy. */
  signature: Uint8Array;
  /** MATCH_VIA_LOOKUP. */
  flags: number;
  /** Key-table version `pool` refers to (ParsePool.keysVersion when the match was made). */
  keysVersion: number;
}

export type LookupFailureKind =
  | LookupTableErrorKind
  /** The RPC read failed (RpcFailure); later transactions through the table try again. */
  | 'rpc'
  /** Refused: too many transactions waiting, or the account fetcher's queue full. */
  | 'overload';

export interface LookupFailure {
  slot: number;
  receivedAt: number;
  worker: number;
  tx: number;
  signature: Uint8Array;
  kind: LookupFailureKind;
  /** The table at fault, when known. */
  table: string | null;
  error: unknown;
}

export interface LookupMatcherOptions {
  onMatch: (match: LookupMatch) => void;
  onFailure?: (failure: LookupFailure) => void;
  /** Transactions waiting on a fetch at most. Default 4096. */
  maxPending?: number;
  /** Wait before the one retry of a transaction that failed as missing / index / rpc, ms. Default 400 (a slot). */
  retryDelayMs?: number;
  /** How long a missing / invalid / deactivated table is not fetched again, ms. Default 10,000. */
  negativeTtlMs?: number;
  /** Bad tables remembered at most. Default 4096. */
  maxNegative?: number;
  /** Clock for the negative cache (tests). Default performance.now. */
  now?: () => number;
}

export interface LookupMatcherStats {
  /** Unresolved records taken from results. */
  taken: number;
  /** Resolved from the cache without a fetch. */
  resolvedCached: number;
  /** Resolved later, after a fetch (or a retry). */
  resolvedFetched: number;
  /** Matches reported. */
  matches: number;
  /** Transactions not resolved, by kind. */
  failures: Record<LookupFailureKind, number>;
  /** Transactions waiting on a fetch or a retry now. */
  pending: number;
  /** Transactions tried a second time. */
  retries: number;
  /** Tables written into the lookup directory. */
  tablesWritten: number;
}

/** What the matcher needs of ParsePool. */
export interface LookupMatcherHost {
  readonly lookupDirectory: LookupDirectory;
}

interface Unresolved {
  slotLo: number;
  slotHi: number;
  receivedAt: number;
  worker: number;
  tx: number;
  staticKeys: number;
  signature: Uint8Array;
  lookups: AddressTableLookup[];
  retried: boolean;
}

const TWO_32 = 4294967296;
const NEGATIVE_KINDS: ReadonlySet<LookupFailureKind> = new Set(['missing', 'invalid', 'deactivated']);
/** Failures the RPC node's lag behind the stream can explain. */
const RETRY_KINDS: ReadonlySet<LookupFailureKind> = new Set(['missing', 'index', 'rpc']);

export class LookupMatcher {
  readonly stats: LookupMatcherStats = {
    taken: 0,
    resolvedCached: 0,
    resolvedFetched: 0,
    matches: 0,
    failures: { missing: 0, invalid: 0, deactivated: 0, index: 0, rpc: 0, overload: 0 },
    pending: 0,
    retries: 0,
    tablesWritten: 0,
  };
  private readonly directory: LookupDirectory;
  private readonly onMatch: (match: LookupMatch) => void;
  private readonly onFailure: ((failure: LookupFailure) => void) | undefined;
  private readonly maxPending: number;
  private readonly retryDelayMs: number;
  private readonly negativeTtlMs: number;
  private readonly maxNegative: number;
  private readonly now: () => number;
  /** Bad tables: address -> when they may be fetched again, with the error they gave. */
  private readonly negative = new Map<string, { until: number; error: LookupTableError }>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private idleWaiters: (() => void)[] = [];
  private closed = false;

  constructor(
    host: LookupMatcherHost,
    private readonly cache: LookupTableCache,
    options: LookupMatcherOptions,
  ) {
    this.directory = host.lookupDirectory;
    this.onMatch = options.onMatch;
    this.onFailure = options.onFailure;
    this.maxPending = options.maxPending ?? 4096;
    this.retryDelayMs = options.retryDelayMs ?? 400;
    this.negativeTtlMs = options.negativeTtlMs ?? 10_000;
    this.maxNegative = options.maxNegative ?? 4096;
    this.now = options.now ?? (() => performance.now());
    this.directory.setTableSource((address) => this.cache.get(address)?.addresses);
  }

  /**
   * Takes the unresolved records of one result (call it from ParsePool.drainResults' callback,
   * for results with status Ok). Records resolvable from the cache are reported before it returns;
   * the others after their fetch. Returns how many records it took.
   */
  take(result: ParseResult): number {
    const n = result.unresolvedCount;
    if (this.closed) return 0;
    for (let j = 0; j < n; j++) {
      this.stats.taken++;
      this.settle({
        slotLo: result.slotLo,
        slotHi: result.slotHi,
        receivedAt: result.receivedAt,
        worker: result.worker,
        tx: result.unresolvedTx(j),
        staticKeys: result.unresolvedStaticKeyCount(j),
        signature: result.unresolvedSignature(j).slice(),
        lookups: result.unresolvedLookups(j),
        retried: false,
      });
    }
    return n;
  }

  /** Resolves when no transaction waits on a fetch or a retry. */
  idle(): Promise<void> {
    if (this.stats.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Stops taking records, drops the retries not yet due, and detaches from the directory (a later
   * setKeys empties it). Fetches in flight still report.
   */
  close(): void {
    this.closed = true;
    this.directory.setTableSource(null);
    for (const t of this.timers) clearTimeout(t);
    this.stats.pending -= this.timers.size;
    this.timers.clear();
    this.settled();
  }

  private settle(u: Unresolved): void {
    const bad = this.knownBad(u.lookups);
    if (bad !== null) {
      this.fail(u, bad.kind, bad.table, bad);
      return;
    }
    if (this.fromCache(u)) return;
    if (this.stats.pending >= this.maxPending) {
      this.fail(u, 'overload', null, null);
      return;
    }
    this.stats.pending++;
    this.fetch(u);
  }

  /** Resolves `u` synchronously when the cache holds every table and index. */
  private fromCache(u: Unresolved): boolean {
    const cached = this.cache.tryResolve(u.lookups);
    if (cached === null) return false;
    this.stats.resolvedCached++;
    this.writeTables(u.lookups);
    this.report(u, cached);
    return true;
  }

  /**
   * Resolves `u` through the cache (which fetches what it lacks); `u` counts as pending until it
   * settles. The callbacks must not throw; if one does, the counters stay right.
   */
  private fetch(u: Unresolved): void {
    this.cache.resolve(u.lookups).then(
      (loaded) => {
        try {
          this.stats.resolvedFetched++;
          this.writeTables(u.lookups);
          this.report(u, loaded);
        } finally {
          this.done();
        }
      },
      (err: unknown) => {
        this.writeTables(u.lookups); // the tables that did load serve the next transactions
        let kind: LookupFailureKind = 'rpc'; // an RpcFailure (or whatever else the read threw)
        let table: string | null = null;
        if (err instanceof LookupTableError) {
          kind = err.kind;
          table = err.table;
        } else if (isTpError(err, ErrorCode.FetchQueueFull)) {
          kind = 'overload';
        }
        if (!u.retried && RETRY_KINDS.has(kind) && !this.closed) {
          u.retried = true;
          this.stats.retries++;
          const timer = setTimeout(() => {
            this.timers.delete(timer);
            this.fetch(u);
          }, this.retryDelayMs);
          this.timers.add(timer);
          return;
        }
        try {
          if (err instanceof LookupTableError && NEGATIVE_KINDS.has(kind)) this.rememberBad(err);
          this.fail(u, kind, table, err);
        } finally {
          this.done();
        }
      },
    );
  }

  private done(): void {
    this.stats.pending--;
    this.settled();
  }

  private settled(): void {
    if (this.stats.pending > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  /** Writes the cached tables of `lookups` the directory does not hold at their cached length. */
  private writeTables(lookups: readonly AddressTableLookup[]): void {
    if (this.closed) return;
    for (const l of lookups) {
      const table = this.cache.get(l.accountKey);
      if (table === undefined || this.directory.knownLength(l.accountKey) === table.addresses.length) continue;
      this.directory.put(l.accountKey, table.addresses);
      this.stats.tablesWritten++;
    }
  }

  private report(u: Unresolved, loaded: LoadedAddresses): void {
    const keysVersion = this.directory.keysVersion; // the version poolOf answers for
    const writable = loaded.writable;
    for (let i = 0; i < writable.length; i++) this.emit(u, writable[i]!, u.staticKeys + i, keysVersion);
    const readonly = loaded.readonly;
    for (let i = 0; i < readonly.length; i++) this.emit(u, readonly[i]!, u.staticKeys + writable.length + i, keysVersion);
  }

  private emit(u: Unresolved, address: string, keyIndex: number, keysVersion: number): void {
    const pool = this.directory.poolOf(address);
    if (pool < 0) return;
    this.stats.matches++;
    this.onMatch({
      slotLo: u.slotLo,
      slotHi: u.slotHi,
      slot: u.slotHi * TWO_32 + u.slotLo,
      receivedAt: u.receivedAt,
      worker: u.worker,
      tx: u.tx,
      pool,
      keyIndex,
      signature: u.signature,
      flags: MATCH_VIA_LOOKUP,
      keysVersion,
    });
  }

  private fail(u: Unresolved, kind: LookupFailureKind, table: string | null, error: unknown): void {
    this.stats.failures[kind]++;
    this.onFailure?.({
      slot: u.slotHi * TWO_32 + u.slotLo,
      receivedAt: u.receivedAt,
      worker: u.worker,
      tx: u.tx,
      signature: u.signature,
      kind,
      table,
      error,
    });
  }

  private knownBad(lookups: readonly AddressTableLookup[]): LookupTableError | null {
    if (this.negative.size === 0) return null;
    const now = this.now();
    for (const l of lookups) {
      const bad = this.negative.get(l.accountKey);
      if (bad === undefined) continue;
      if (bad.until > now) return bad.error;
      this.negative.delete(l.accountKey);
    }
    return null;
  }

  private rememberBad(err: LookupTableError): void {
    this.negative.delete(err.table);
    this.negative.set(err.table, { until: this.now() + this.negativeTtlMs, error: err });
    if (this.negative.size > this.maxNegative) this.negative.delete(this.negative.keys().next().value!);
  }
}
