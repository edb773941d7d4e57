/**
 * The lookup directory (layout in lookup-layout.ts): for every address lookup table the pool's
 * thread has seen, how many addresses it is known to hold and which of them are monitored pools,
 * so a parse worker settles a v0 transaction's loaded accounts without leaving its thread.
 *
 * One writer, the pool's thread (LookupDirectory); any number of readers, the parse workers
 * (LookupDirectoryReader), which read the SharedArrayBuffer in place. Same sequence-lock
 * discipline as the key table: the writer makes LD_VERSION odd, writes, makes it even again; a
 * reader notes the (even) version, reads what it needs, and throws the reads away when the
 * version moved meanwhile. Plain reads racing the writer may see torn values (never undefined
 * behaviour in JavaScript), so every value a reader takes from the buffer is bounds-checked
 * before use, and probe loops are bounded, whatever a torn read says.
 *
 * Tables without a monitored address are stored too (record without a map block): their
 * transactions are settled in the worker as "no pool here" instead of going back to the pool's
 * thread.
 *
 * Capacity and eviction: `capacity` records and `mapBlocks` map blocks, both fixed at creation.
 * When the records are full, the table written longest ago is evicted (FIFO by last write; a
 * table written again, e.g. after a refresh, moves to the back); when a table holding monitored
 * pools needs a map block and none is free, the table holding a block that was written longest
 * ago is evicted. The pool's thread never sees a worker's hit, so recency of use is not known
 * here; FIFO is what the LookupTableCache does too. An evicted table that is still in use costs
 * one round trip: its next transaction comes back unresolved and the matcher writes it again from
 * the LookupTableCache, without RPC while the cache still holds it. Removing a table uses
 * backward-shift deletion (no tombstones), so the hash table never needs a rebuild to stay fast.
 *
 * A change of monitored keys rebuilds every map (setKeys): the directory asks its table source
 * (the matcher's LookupTableCache) for each table's addresses and drops the tables the source no
 * longer holds.
 */
import { base58 } from '../chain/index.js';
import { PUBKEY_BYTES } from '../chain/index.js';
import { ErrorCode, TpError } from '../errors.js';
import {
  BLOCK_BYTES,
  BLOCK_ENTRIES,
  LD_BLOCKS,
  LD_CAPACITY,
  LD_COUNT,
  LD_HEADER_BYTES,
  LD_HEADER_WORDS,
  LD_KEYS_VERSION,
  LD_MAX_KEYS,
  LD_NO_BLOCK,
  LD_NO_POOL,
  LD_SLOTS,
  LD_VERSION,
  LOOKUP_TABLE_ADDRESSES,
  REC_BLOCK,
  REC_KEY,
  REC_LENGTH,
  REC_WORDS,
  SLOT_KEY_LO,
  SLOT_RECORD,
  SLOT_WORDS,
} from './lookup-layout.js';

export const DEFAULT_LOOKUP_TABLES = 16_384;
/** Largest directory accepted (records). */
export const MAX_LOOKUP_TABLES = 1 << 20;

export interface LookupDirectoryOptions {
  /** Tables the directory holds. Default 16,384. */
  capacity?: number;
  /** Tables holding monitored pools it maps (512 bytes each). Default capacity / 4. */
  mapBlocks?: number;
}

interface Regions {
  header: Int32Array;
  slots: Int32Array;
  records: Int32Array;
  /** The whole buffer as bytes (record keys are compared through it). */
  bytes: Uint8Array;
  blocks: Uint16Array;
  recordsByte: number;
  capacity: number;
  slotCount: number;
  blockCount: number;
}

function slotCountFor(capacity: number): number {
  let n = 16;
  while (n < capacity * 2) n *= 2;
  return n;
}

function regions(sab: SharedArrayBuffer): Regions {
  const header = new Int32Array(sab, 0, LD_HEADER_WORDS);
  const capacity = header[LD_CAPACITY]!;
  const slotCount = header[LD_SLOTS]!;
  const blockCount = header[LD_BLOCKS]!;
  const slotsByte = LD_HEADER_BYTES;
  const recordsByte = slotsByte + slotCount * SLOT_WORDS * 4;
  const blocksByte = recordsByte + capacity * REC_WORDS * 4;
  if (sab.byteLength !== blocksByte + blockCount * BLOCK_BYTES) {
    throw new TpError(ErrorCode.Internal, 'not a lookup directory buffer', { context: { bytes: sab.byteLength } });
  }
  return {
    header,
    slots: new Int32Array(sab, slotsByte, slotCount * SLOT_WORDS),
    records: new Int32Array(sab, recordsByte, capacity * REC_WORDS),
    bytes: new Uint8Array(sab),
    blocks: new Uint16Array(sab, blocksByte, blockCount * BLOCK_ENTRIES),
    recordsByte,
    capacity,
    slotCount,
    blockCount,
  };
}

/** Creates an empty directory buffer (about 40 + 16 bytes per table plus 512 per map block). */
export function createLookupDirectory(options: LookupDirectoryOptions = {}): SharedArrayBuffer {
  const capacity = options.capacity ?? DEFAULT_LOOKUP_TABLES;
  if (!Number.isInteger(capacity) || capacity < 1 || capacity > MAX_LOOKUP_TABLES) {
    throw new TpError(ErrorCode.ConfigInvalid, `lookup directory capacity must be 1..${MAX_LOOKUP_TABLES}, got ${capacity}`);
  }
  const blockCount = options.mapBlocks ?? Math.max(1, Math.ceil(capacity / 4));
  if (!Number.isInteger(blockCount) || blockCount < 1 || blockCount > capacity) {
    throw new TpError(ErrorCode.ConfigInvalid, `lookup directory map blocks must be 1..${capacity}, got ${blockCount}`);
  }
  const slotCount = slotCountFor(capacity);
  const bytes = LD_HEADER_BYTES + slotCount * SLOT_WORDS * 4 + capacity * REC_WORDS * 4 + blockCount * BLOCK_BYTES;
  const sab = new SharedArrayBuffer(bytes);
  const header = new Int32Array(sab, 0, LD_HEADER_WORDS);
  header[LD_CAPACITY] = capacity;
  header[LD_SLOTS] = slotCount;
  header[LD_BLOCKS] = blockCount;
  header[LD_KEYS_VERSION] = -1; // no keys yet: no worker uses the directory before setKeys
  return sab;
}

function readU32(bytes: Uint8Array, p: number): number {
  return (bytes[p]! | (bytes[p + 1]! << 8) | (bytes[p + 2]! << 16) | (bytes[p + 3]! << 24)) >>> 0;
}

/** Hash of an address from its first eight bytes (murmur3 finalizer). */
function hashKey(lo: number, hi: number): number {
  let h = Math.imul(lo, 0xcc9e2d51) ^ hi;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * A parse worker's view of the directory: reads in place, allocation-free. Use it as a sequence
 * lock: `v = begin()` (retry while it is -1), read, then drop the reads when `changedSince(v)`.
 */
export class LookupDirectoryReader {
  private readonly header: Int32Array;
  private readonly slots: Int32Array;
  private readonly bytes: Uint8Array;
  private readonly records: Int32Array;
  private readonly blocks: Uint16Array;
  private readonly recordsByte: number;
  private readonly capacity: number;
  private readonly blockCount: number;
  private readonly mask: number;

  constructor(sab: SharedArrayBuffer) {
    const r = regions(sab);
    this.header = r.header;
    this.slots = r.slots;
    this.bytes = r.bytes;
    this.records = r.records;
    this.blocks = r.blocks;
    this.recordsByte = r.recordsByte;
    this.capacity = r.capacity;
    this.blockCount = r.blockCount;
    this.mask = r.slotCount - 1;
  }

  /** The directory's version when no write is in progress, else -1 (the writer is brief: retry). */
  begin(): number {
    const v = Atomics.load(this.header, LD_VERSION);
    return (v & 1) === 0 ? v : -1;
  }

  /** Whether a write started since `begin()` returned `version`: the reads since are void. */
  changedSince(version: number): boolean {
    return Atomics.load(this.header, LD_VERSION) !== version;
  }

  /** Key-table version the pool ids refer to (-1 before the first setKeys). */
  keysVersion(): number {
    return this.header[LD_KEYS_VERSION]!;
  }

  /** Record of the table whose address is at `bytes[offset..offset+32)`, or -1. */
  find(bytes: Uint8Array, offset: number): number {
    if (offset < 0 || offset + PUBKEY_BYTES > bytes.length) return -1;
    const lo = readU32(bytes, offset) | 0;
    const hi = readU32(bytes, offset + 4);
    const slots = this.slots;
    const mask = this.mask;
    let s = hashKey(lo >>> 0, hi) & mask;
    // Bounded: a torn view of the slots must not keep a reader probing.
    for (let probes = 0; probes <= mask; probes++, s = (s + 1) & mask) {
      const t = slots[s * SLOT_WORDS + SLOT_RECORD]!;
      if (t === 0) return -1;
      if (slots[s * SLOT_WORDS + SLOT_KEY_LO] !== lo) continue;
      const rec = t - 1;
      if (rec < 0 || rec >= this.capacity) continue;
      const at = this.recordsByte + rec * REC_WORDS * 4 + REC_KEY * 4;
      const own = this.bytes;
      let i = 0;
      while (i < PUBKEY_BYTES && own[at + i] === bytes[offset + i]) i++;
      if (i === PUBKEY_BYTES) return rec;
    }
    return -1;
  }

  /** Addresses the table of record `rec` is known to hold (0..256). */
  knownLength(rec: number): number {
    const n = this.records[rec * REC_WORDS + REC_LENGTH]!;
    return n >= 0 && n <= LOOKUP_TABLE_ADDRESSES ? n : 0;
  }

  /** Map block of record `rec`, or LD_NO_BLOCK when the table holds no monitored pool. */
  block(rec: number): number {
    const b = this.records[rec * REC_WORDS + REC_BLOCK]!;
    return b >= 0 && b < this.blockCount ? b : LD_NO_BLOCK;
  }

  /** Pool id at address `index` of map block `block`, or LD_NO_POOL. */
  poolAt(block: number, index: number): number {
    return this.blocks[block * BLOCK_ENTRIES + index] ?? LD_NO_POOL;
  }
}

export interface LookupDirectoryStats {
  /** Tables held now. */
  tables: number;
  /** Map blocks in use now (tables holding a monitored pool). */
  mapBlocksUsed: number;
  /** Tables written (new or rewritten). */
  writes: number;
  /** Tables evicted because the records were full. */
  evictions: number;
  /** Tables evicted because the map blocks were full. */
  blockEvictions: number;
  /** setKeys rebuilds. */
  rebuilds: number;
  /** Tables dropped by a rebuild because the table source no longer held them. */
  rebuildDrops: number;
}

/** Gives a table's addresses (base58, index order) if it still holds the table, for rebuilds. */
export type LookupTableSource = (address: string) => readonly string[] | undefined;

interface Entry {
  record: number;
  block: number;
}

/**
 * The writing side, on the pool's thread only. Keeps, in JavaScript, which record and block each
 * table uses (in write order, for eviction) and the current monitored keys as base58 -> pool id.
 */
export class LookupDirectory {
  readonly buffer: SharedArrayBuffer;
  readonly capacity: number;
  readonly mapBlocks: number;
  readonly stats: LookupDirectoryStats = { tables: 0, mapBlocksUsed: 0, writes: 0, evictions: 0, blockEvictions: 0, rebuilds: 0, rebuildDrops: 0 };
  private readonly r: Regions;
  private readonly mask: number;
  /** Every table, oldest write first. */
  private readonly entries = new Map<string, Entry>();
  /** Tables holding a map block, oldest write first. */
  private readonly blockHolders = new Map<string, Entry>();
  private readonly freeRecords: number[] = [];
  private readonly freeBlocks: number[] = [];
  private pools = new Map<string, number>();
  private source: LookupTableSource | null = null;
  private readonly poolScratch = new Int32Array(LOOKUP_TABLE_ADDRESSES);

  /** Takes an empty buffer from createLookupDirectory (one writer per buffer). */
  constructor(sab: SharedArrayBuffer) {
    this.buffer = sab;
    this.r = regions(sab);
    this.capacity = this.r.capacity;
    this.mapBlocks = this.r.blockCount;
    this.mask = this.r.slotCount - 1;
    this.resetFreeLists();
  }

  get size(): number {
    return this.entries.size;
  }

  /** Key-table version the stored pool ids refer to. */
  get keysVersion(): number {
    return this.r.header[LD_KEYS_VERSION]!;
  }

  /** Pool id of `address` under the current monitored keys, or -1. */
  poolOf(address: string): number {
    return this.pools.get(address) ?? -1;
  }

  has(address: string): boolean {
    return this.entries.has(address);
  }

  /** Addresses the directory knows `address` holds, or -1 when the table is not in it. */
  knownLength(address: string): number {
    const e = this.entries.get(address);
    return e === undefined ? -1 : this.r.records[e.record * REC_WORDS + REC_LENGTH]!;
  }

  /** Where setKeys reads the tables' addresses from; without one, setKeys empties the directory. */
  setTableSource(source: LookupTableSource | null): void {
    this.source = source;
  }

  /**
   * Replaces the monitored keys (pool id = index; a key listed twice keeps its first index) and
   * rebuilds every table's map from the table source, in one write: workers see the old
   * directory or the new one, never a mix. `keysVersion` is the key table's new version.
   */
  setKeys(keys: readonly (string | Uint8Array)[], keysVersion: number): void {
    if (keys.length > LD_MAX_KEYS) {
      throw new TpError(ErrorCode.ConfigInvalid, `${keys.length} monitored keys exceed the lookup directory's ${LD_MAX_KEYS}`);
    }
    const pools = new Map<string, number>();
    keys.forEach((k, i) => {
      const text = typeof k === 'string' ? base58.encode(base58.decodePubkey(k)) : base58.encode(checkKey(k));
      if (!pools.has(text)) pools.set(text, i);
    });
    const tables: [string, readonly string[], Uint8Array][] = [];
    for (const [address, e] of this.entries) {
      const addresses = this.source?.(address);
      if (addresses === undefined || addresses.length > LOOKUP_TABLE_ADDRESSES) this.stats.rebuildDrops++;
      else tables.push([address, addresses, this.keyOf(e.record)]);
    }
    const header = this.r.header;
    const version = this.beginWrite();
    this.r.slots.fill(0);
    this.r.records.fill(0);
    this.entries.clear();
    this.blockHolders.clear();
    this.resetFreeLists();
    header[LD_COUNT] = 0;
    this.pools = pools;
    for (const [address, addresses, key] of tables) this.write(address, addresses, key);
    header[LD_KEYS_VERSION] = keysVersion;
    this.endWrite(version);
    this.stats.rebuilds++;
  }

  /**
   * Writes (or rewrites) a table: its address and its addresses in index order (at most 256), as
   * the LookupTableCache holds them. Evicts as the class comment says when full.
   */
  put(address: string, addresses: readonly string[]): void {
    if (addresses.length > LOOKUP_TABLE_ADDRESSES) {
      throw new TpError(ErrorCode.AccountInvalid, `lookup table ${address} has ${addresses.length} addresses, over ${LOOKUP_TABLE_ADDRESSES}`);
    }
    const key = this.entries.has(address) ? null : base58.decodePubkey(address); // validate before writing
    const version = this.beginWrite();
    this.write(address, addresses, key);
    this.endWrite(version);
  }

  /** Removes a table; returns whether it was there. */
  remove(address: string): boolean {
    const e = this.entries.get(address);
    if (e === undefined) return false;
    const version = this.beginWrite();
    this.drop(address, e);
    this.endWrite(version);
    return true;
  }

  // ---- inside a write (version odd)

  private beginWrite(): number {
    const v = Atomics.load(this.r.header, LD_VERSION);
    Atomics.store(this.r.header, LD_VERSION, v + 1); // odd: readers retry
    return v;
  }

  private endWrite(v: number): void {
    this.stats.tables = this.entries.size;
    this.stats.mapBlocksUsed = this.blockHolders.size;
    // Every store above happens-before a reader's Atomics.load that sees this version.
    Atomics.store(this.r.header, LD_VERSION, v + 2);
  }

  private write(address: string, addresses: readonly string[], decoded: Uint8Array | null = null): void {
    const { records, blocks, header } = this.r;
    const pools = this.poolScratch;
    let monitored = 0;
    for (let i = 0; i < addresses.length; i++) {
      const id = this.pools.get(addresses[i]!);
      pools[i] = id ?? LD_NO_POOL;
      if (id !== undefined) monitored++;
    }
    let e = this.entries.get(address);
    if (e !== undefined) {
      // Rewritten: moves to the back of the eviction order.
      this.entries.delete(address);
      this.blockHolders.delete(address);
    } else {
      if (this.freeRecords.length === 0) this.evictOldest(this.entries, address, false);
      const key = decoded ?? base58.decodePubkey(address);
      e = { record: this.freeRecords.pop()!, block: LD_NO_BLOCK };
      const at = this.r.recordsByte + e.record * REC_WORDS * 4 + REC_KEY * 4;
      this.r.bytes.set(key, at);
      this.insertSlot(e.record, readU32(key, 0), readU32(key, 4));
      header[LD_COUNT] = header[LD_COUNT]! + 1;
    }
    this.entries.set(address, e);
    if (monitored > 0) {
      if (e.block === LD_NO_BLOCK) {
        if (this.freeBlocks.length === 0) this.evictOldest(this.blockHolders, address, true);
        e.block = this.freeBlocks.pop()!;
      }
      const base = e.block * BLOCK_ENTRIES;
      blocks.fill(LD_NO_POOL, base, base + BLOCK_ENTRIES);
      for (let i = 0; i < addresses.length; i++) blocks[base + i] = pools[i]!;
      this.blockHolders.set(address, e);
    } else if (e.block !== LD_NO_BLOCK) {
      this.freeBlocks.push(e.block);
      e.block = LD_NO_BLOCK;
    }
    records[e.record * REC_WORDS + REC_LENGTH] = addresses.length;
    records[e.record * REC_WORDS + REC_BLOCK] = e.block;
    this.stats.writes++;
  }

  /** Evicts the oldest table of `order` other than `keep`. */
  private evictOldest(order: Map<string, Entry>, keep: string, forBlock: boolean): void {
    for (const [address, e] of order) {
      if (address === keep) continue;
      this.drop(address, e);
      if (forBlock) this.stats.blockEvictions++;
      else this.stats.evictions++;
      return;
    }
  }

  private drop(address: string, e: Entry): void {
    const { records, header } = this.r;
    this.removeSlot(e.record);
    records.fill(0, e.record * REC_WORDS, (e.record + 1) * REC_WORDS);
    if (e.block !== LD_NO_BLOCK) this.freeBlocks.push(e.block);
    this.freeRecords.push(e.record);
    this.entries.delete(address);
    this.blockHolders.delete(address);
    header[LD_COUNT] = header[LD_COUNT]! - 1;
  }

  /** A copy of a record's address bytes. */
  private keyOf(record: number): Uint8Array {
    const at = this.r.recordsByte + record * REC_WORDS * 4 + REC_KEY * 4;
    return this.r.bytes.slice(at, at + PUBKEY_BYTES);
  }

  private recordHash(record: number): number {
    const at = this.r.recordsByte + record * REC_WORDS * 4 + REC_KEY * 4;
    return hashKey(readU32(this.r.bytes, at), readU32(this.r.bytes, at + 4));
  }

  private insertSlot(record: number, lo: number, hi: number): void {
    const slots = this.r.slots;
    const mask = this.mask;
    let s = hashKey(lo, hi) & mask;
    while (slots[s * SLOT_WORDS + SLOT_RECORD] !== 0) s = (s + 1) & mask;
    slots[s * SLOT_WORDS + SLOT_KEY_LO] = lo | 0;
    slots[s * SLOT_WORDS + SLOT_RECORD] = record + 1;
  }

  /** Backward-shift deletion: later members of the cluster move into the hole unless their home slot lies cyclically in (hole, member]. */
  private removeSlot(record: number): void {
    const slots = this.r.slots;
    const mask = this.mask;
    let i = this.recordHash(record) & mask;
    while (slots[i * SLOT_WORDS + SLOT_RECORD] !== record + 1) i = (i + 1) & mask;
    let j = i;
    for (;;) {
      j = (j + 1) & mask;
      const t = slots[j * SLOT_WORDS + SLOT_RECORD]!;
      if (t === 0) break;
      const home = this.recordHash(t - 1) & mask;
      const stays = i <= j ? i < home && home <= j : i < home || home <= j;
      if (stays) continue;
      slots[i * SLOT_WORDS + SLOT_RECORD] = t;
      slots[i * SLOT_WORDS + SLOT_KEY_LO] = slots[j * SLOT_WORDS + SLOT_KEY_LO]!;
      i = j;
    }
    slots[i * SLOT_WORDS + SLOT_RECORD] = 0;
    slots[i * SLOT_WORDS + SLOT_KEY_LO] = 0;
  }

  private resetFreeLists(): void {
    this.freeRecords.length = 0;
    for (let i = this.capacity - 1; i >= 0; i--) this.freeRecords.push(i);
    this.freeBlocks.length = 0;
    for (let i = this.mapBlocks - 1; i >= 0; i--) this.freeBlocks.push(i);
  }
}

function checkKey(k: Uint8Array): Uint8Array {
  if (k.length !== PUBKEY_BYTES) throw new TpError(ErrorCode.ConfigInvalid, `public key must be ${PUBKEY_BYTES} bytes, got ${k.length}`);
  return k;
}
