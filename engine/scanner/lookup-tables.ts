import { ADDRESS_LOOKUP_TABLE_PROGRAM_ID, LookupTableError, decodeLookupTable, type LookupTable } from '../chain/index.js';
import type { AddressTableLookup } from '../chain/index.js';
import type { AccountReader } from '../rpc/index.js';

/**
 * Address lookup table cache for the scanner. A table is fetched once (through the batched,
 * coalesced AccountReader), decoded and kept; `resolve(lookups)` gives a v0 transaction's loaded
 * addresses: every lookup's writable addresses (lookup order, index order), then every lookup's
 * readonly addresses. When a transaction names an index past a cached table's known length (the
 * table was extended since), the table is refetched once (concurrent refreshes share one fetch)
 * and the lookup retried; an index still past the end is a LookupTableError for that transaction.
 * The account layout and its decoder are engine/chain's (lookup-table-account.ts).
 */

/**
 * What the cache reads tables through: the fetch of an AccountReader (AccountFetcher, or
 * WorkerAccountFetcher to read off this thread). `fresh`: do not share a read already sent.
 */
export type AccountLoader = Pick<AccountReader, 'fetch'>;

export interface LoadedAddresses {
  writable: string[];
  readonly: string[];
}

export interface LookupTableCacheOptions {
  /** Most tables kept; the oldest loaded is dropped beyond it. Default 10,000. */
  maxTables?: number;
}

export interface LookupTableCacheStats {
  /** Account fetches made (first loads and refreshes). */
  fetches: number;
  /** Refetches because an index was past the known length. */
  refreshes: number;
  /** resolve() calls that threw a LookupTableError. */
  failures: number;
}

export class LookupTableCache {
  readonly maxTables: number;
  readonly stats: LookupTableCacheStats = { fetches: 0, refreshes: 0, failures: 0 };
  private readonly tables = new Map<string, LookupTable>();
  private readonly loading = new Map<string, Promise<LookupTable>>();

  constructor(
    private readonly loader: AccountLoader,
    options: LookupTableCacheOptions = {},
  ) {
    this.maxTables = options.maxTables ?? 10_000;
  }

  get size(): number {
    return this.tables.size;
  }

  /** The cached table, if any (no fetch). */
  get(address: string): LookupTable | undefined {
    return this.tables.get(address);
  }

  /** Drops a table so the next use fetches it. */
  invalidate(address: string): void {
    this.tables.delete(address);
  }

  /**
   * Synchronous fast path: the loaded addresses when every table is cached and every index is
   * within its known length, else null (call resolve()).
   */
  tryResolve(lookups: readonly AddressTableLookup[]): LoadedAddresses | null {
    const writable: string[] = [];
    const readonly: string[] = [];
    for (const l of lookups) {
      const t = this.tables.get(l.accountKey);
      if (t === undefined) return null;
      for (const i of l.writableIndexes) {
        const a = t.addresses[i];
        if (a === undefined) return null;
        writable.push(a);
      }
    }
    for (const l of lookups) {
      const t = this.tables.get(l.accountKey)!;
      for (const i of l.readonlyIndexes) {
        const a = t.addresses[i];
        if (a === undefined) return null;
        readonly.push(a);
      }
    }
    return { writable, readonly };
  }

  /** A transaction's loaded addresses in v0 index order; rejects with LookupTableError. */
  async resolve(lookups: readonly AddressTableLookup[]): Promise<LoadedAddresses> {
    const fast = this.tryResolve(lookups);
    if (fast !== null) return fast;
    try {
      const tables = await Promise.all(lookups.map((l) => this.tableFor(l)));
      const writable: string[] = [];
      const readonly: string[] = [];
      for (let k = 0; k < lookups.length; k++) {
        for (const i of lookups[k]!.writableIndexes) writable.push(tables[k]!.addresses[i]!);
      }
      for (let k = 0; k < lookups.length; k++) {
        for (const i of lookups[k]!.readonlyIndexes) readonly.push(tables[k]!.addresses[i]!);
      }
      return { writable, readonly };
    } catch (err) {
      if (err instanceof LookupTableError) this.stats.failures++;
      throw err;
    }
  }

  /** The table with every index of `lookup` in range: cached, loaded, or refreshed once. */
  private async tableFor(lookup: AddressTableLookup): Promise<LookupTable> {
    const need = maxIndex(lookup) + 1;
    const cached = this.tables.get(lookup.accountKey);
    if (cached !== undefined && cached.addresses.length >= need) return cached;
    // Not cached, or shorter than needed: one fetch, shared by concurrent callers.
    let inflight = this.loading.get(lookup.accountKey);
    if (inflight === undefined) {
      if (cached !== undefined) this.stats.refreshes++;
      inflight = this.load(lookup.accountKey, cached !== undefined);
    }
    const table = await inflight;
    if (table.addresses.length < need) {
      throw new LookupTableError('index', lookup.accountKey, `index ${need - 1} past the table's ${table.addresses.length} addresses`);
    }
    return table;
  }

  /** `fresh` for a refresh: a read sent before the table grew must not answer it. */
  private load(address: string, fresh: boolean): Promise<LookupTable> {
    this.stats.fetches++;
    const p = this.loader
      .fetch(address, { fresh })
      .then((account) => {
        if (account === null) throw new LookupTableError('missing', address, 'no such account');
        if (account.owner !== ADDRESS_LOOKUP_TABLE_PROGRAM_ID) {
          throw new LookupTableError('invalid', address, `owner ${account.owner} is not the address lookup table program`);
        }
        const table = decodeLookupTable(address, account.data, account.slot);
        this.store(table);
        return table;
      })
      .finally(() => {
        if (this.loading.get(address) === p) this.loading.delete(address);
      });
    this.loading.set(address, p);
    return p;
  }

  private store(table: LookupTable): void {
    this.tables.delete(table.address);
    this.tables.set(table.address, table);
    if (this.tables.size > this.maxTables) {
      const oldest = this.tables.keys().next().value;
      if (oldest !== undefined) this.tables.delete(oldest);
    }
  }
}

function maxIndex(lookup: AddressTableLookup): number {
  let m = -1;
  for (const i of lookup.writableIndexes) if (i > m) m = i;
  for (const i of lookup.readonlyIndexes) if (i > m) m = i;
  return m;
}
