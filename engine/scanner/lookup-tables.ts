import { base58 } from '../chain/index.js';
import type { AddressTableLookup } from '../chain/index.js';
import type { AccountReader } from '../rpc/index.js';

/**
 * Address lookup table cache for the scanner. A table is fetched once (through the batched,
 * coalesced AccountReader), decoded and kept; `resolve(lookups)` gives a v0 transaction's loaded
 * addresses: every lookup's writable addresses (lookup order, index order), then every lookup's
 * readonly addresses. When a transaction names an index past a cached table's known length (the
 * table was extended since), the table is refetched once (concurrent refreshes share one fetch)
 * and the lookup retried; an index still past the end is a LookupTableError for that transaction.
 *
 * Layout (bincode): 0 u32 state tag (1 = LookupTable); 4 deactivation_slot u64 (u64::MAX =
 * active); 12 last_extended_slot u64; 20 last_extended_slot_start_index u8; 21 authority Option
 * (tag byte, key at 22..54); addresses from 56, 32 bytes each, at most 256.
 */

export const ADDRESS_LOOKUP_TABLE_PROGRAM = 'AddressLookupTab1e1111111111111111111111111';
export const LOOKUP_TABLE_META_SIZE = 56;
export const LOOKUP_TABLE_MAX_ADDRESSES = 256;
const U64_MAX = 0xffff_ffff_ffff_ffffn;

export type LookupTableErrorKind =
  /** No account at the table's address. */
  | 'missing'
  /** Not a lookup table: wrong owner, state tag, size or authority tag. */
  | 'invalid'
  /** deactivation_slot is set. */
  | 'deactivated'
  /** An index past the table's end, after a refetch. */
  | 'index';

export class LookupTableError extends Error {
  override readonly name = 'LookupTableError';
  constructor(
    readonly kind: LookupTableErrorKind,
    readonly table: string,
    message: string,
  ) {
    super(`lookup table ${table}: ${message}`);
  }
}

export interface LookupTable {
  address: string;
  deactivationSlot: bigint;
  lastExtendedSlot: bigint;
  lastExtendedSlotStartIndex: number;
  authority: string | null;
  addresses: string[];
  /** context slot of the fetch that produced it. */
  fetchedSlot: bigint;
}

/** Decodes a lookup table account's data; throws LookupTableError('invalid' | 'deactivated'). */
export function decodeLookupTable(table: string, data: Uint8Array, fetchedSlot = 0n): LookupTable {
  if (data.length < LOOKUP_TABLE_META_SIZE) throw new LookupTableError('invalid', table, `${data.length} bytes, under the 56-byte header`);
  const body = data.length - LOOKUP_TABLE_META_SIZE;
  if (body % 32 !== 0) throw new LookupTableError('invalid', table, `address area of ${body} bytes is not a multiple of 32`);
  const count = body / 32;
  if (count > LOOKUP_TABLE_MAX_ADDRESSES) throw new LookupTableError('invalid', table, `${count} addresses, over 256`);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const tag = view.getUint32(0, true);
  if (tag !== 1) throw new LookupTableError('invalid', table, `state tag ${tag}, not 1 (LookupTable)`);
  const deactivationSlot = view.getBigUint64(4, true);
  if (deactivationSlot !== U64_MAX) throw new LookupTableError('deactivated', table, `deactivated at slot ${deactivationSlot}`);
  const lastExtendedSlot = view.getBigUint64(12, true);
  const lastExtendedSlotStartIndex = data[20]!;
  const authorityTag = data[21]!;
  if (authorityTag > 1) throw new LookupTableError('invalid', table, `authority option tag ${authorityTag}`);
  const authority = authorityTag === 1 ? base58.encodeAt(data, 22, 32) : null;
  const addresses = new Array<string>(count);
  for (let i = 0; i < count; i++) addresses[i] = base58.encodeAt(data, LOOKUP_TABLE_META_SIZE + i * 32, 32);
  return { address: table, deactivationSlot, lastExtendedSlot, lastExtendedSlotStartIndex, authority, addresses, fetchedSlot };
}

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
        if (account.owner !== ADDRESS_LOOKUP_TABLE_PROGRAM) {
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
