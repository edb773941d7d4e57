/**
 * KeySet: a set of 32-byte public keys with small integer ids, looked up straight from payload
 * bytes without allocating (the scanner asks it about every static key of every transaction).
 *
 * Layout: keys packed by id in one Uint8Array (32 bytes each); an open-addressing table with
 * linear probing, keyed by a hash of the key's first 8 bytes. Each table slot also holds those
 * 8 bytes (two u32 words), so a probe rejects most non-matching slots without touching the key;
 * a match on the 8 bytes is confirmed by comparing the remaining 24. Deletion shifts the
 * following cluster back (no tombstones), and the table stays at most half full, so every probe
 * sequence ends at an empty slot. In front of the table, a 65,536-bit map of the keys' first two
 * bytes turns away almost every key that is not in a small set after two byte loads (the
 * scanner's common case: 20-50 pools against every key of every transaction).
 *
 * Ids are dense: a deleted key's id is reused by a later add. Ids are stable while a key stays.
 */
import { invalidArgument } from '../errors.js';
import * as base58 from './base58.js';
import { PUBKEY_BYTES } from './parse-layout.js';

const EMPTY = 0; // table value: 0 = empty, else id + 1

function readU32(bytes: Uint8Array, p: number): number {
  return (bytes[p]! | (bytes[p + 1]! << 8) | (bytes[p + 2]! << 16) | (bytes[p + 3]! << 24)) >>> 0;
}

function hash(lo: number, hi: number): number {
  let h = Math.imul(lo, 0xcc9e2d51) ^ hi;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export class KeySet {
  private keys: Uint8Array;
  private live: Uint8Array; // per id: 1 while the id holds a key
  private freeIds: number[] = [];
  private nextId = 0;
  private table: Int32Array;
  private tableLo: Uint32Array;
  private tableHi: Uint32Array;
  private mask: number;
  private count = 0;
  /** Bit (b0 | b1 << 8) set when some key starts with bytes b0, b1. 8 KiB: stays in L1. */
  private readonly prefixBits = new Uint8Array(8192);

  constructor(initialCapacity = 64) {
    const capacity = Math.max(8, initialCapacity | 0);
    this.keys = new Uint8Array(capacity * PUBKEY_BYTES);
    this.live = new Uint8Array(capacity);
    let tableSize = 16;
    while (tableSize < capacity * 2) tableSize *= 2;
    this.table = new Int32Array(tableSize);
    this.tableLo = new Uint32Array(tableSize);
    this.tableHi = new Uint32Array(tableSize);
    this.mask = tableSize - 1;
  }

  get size(): number {
    return this.count;
  }

  /**
   * Id of the 32-byte key at `bytes[offset..offset+32)`, or -1 when it is not in the set (or the
   * range does not fit in `bytes`). Allocation-free.
   */
  idAt(bytes: Uint8Array, offset: number): number {
    if (offset < 0 || offset + PUBKEY_BYTES > bytes.length) return -1;
    const b0 = bytes[offset]!;
    if ((this.prefixBits[(bytes[offset + 1]! << 5) | (b0 >>> 3)]! & (1 << (b0 & 7))) === 0) return -1;
    const lo = readU32(bytes, offset);
    const hi = readU32(bytes, offset + 4);
    const table = this.table;
    const mask = this.mask;
    let s = hash(lo, hi) & mask;
    for (;;) {
      const t = table[s]!;
      if (t === EMPTY) return -1;
      if (this.tableLo[s] === lo && this.tableHi[s] === hi) {
        const id = t - 1;
        const keys = this.keys;
        const base = id * PUBKEY_BYTES;
        let i = 8;
        while (i < PUBKEY_BYTES && keys[base + i] === bytes[offset + i]) i++;
        if (i === PUBKEY_BYTES) return id;
      }
      s = (s + 1) & mask;
    }
  }

  /** Id of `key` (base58 or 32 bytes), or -1. */
  idOf(key: string | Uint8Array): number {
    return this.idAt(toBytes(key), 0);
  }

  has(key: string | Uint8Array): boolean {
    return this.idOf(key) >= 0;
  }

  /** Adds `key` (base58 or 32 bytes) and returns its id; a key already present keeps its id. */
  add(key: string | Uint8Array): number {
    const bytes = toBytes(key);
    const existing = this.idAt(bytes, 0);
    if (existing >= 0) return existing;
    if ((this.count + 1) * 2 > this.table.length) this.rehash(this.table.length * 2);
    const id = this.freeIds.length > 0 ? this.freeIds.pop()! : this.nextId++;
    if ((id + 1) * PUBKEY_BYTES > this.keys.length) this.growKeys();
    this.keys.set(bytes, id * PUBKEY_BYTES);
    this.live[id] = 1;
    this.setPrefixBit(bytes[0]!, bytes[1]!, true);
    this.insertSlot(id, readU32(bytes, 0), readU32(bytes, 4));
    this.count++;
    return id;
  }

  /** Removes `key`; returns whether it was present. Its id may be reused by a later add. */
  delete(key: string | Uint8Array): boolean {
    const bytes = toBytes(key);
    const id = this.idAt(bytes, 0);
    if (id < 0) return false;
    const mask = this.mask;
    const table = this.table;
    let i = hash(readU32(bytes, 0), readU32(bytes, 4)) & mask;
    while (table[i] !== id + 1) i = (i + 1) & mask;
    // Backward-shift deletion: move later members of the cluster into the hole when their home
    // slot is not cyclically inside (hole, member].
    let j = i;
    for (;;) {
      j = (j + 1) & mask;
      const t = table[j]!;
      if (t === EMPTY) break;
      const home = hash(this.tableLo[j]!, this.tableHi[j]!) & mask;
      const stays = i <= j ? i < home && home <= j : i < home || home <= j;
      if (stays) continue;
      table[i] = t;
      this.tableLo[i] = this.tableLo[j]!;
      this.tableHi[i] = this.tableHi[j]!;
      i = j;
    }
    table[i] = EMPTY;
    this.live[id] = 0;
    this.keys.fill(0, id * PUBKEY_BYTES, (id + 1) * PUBKEY_BYTES);
    this.freeIds.push(id);
    this.count--;
    // Clear the prefix bit unless another key shares the two bytes (deletes are rare: a scan).
    let shared = false;
    for (let other = 0; other < this.nextId && !shared; other++) {
      shared = this.live[other] === 1 && this.keys[other * PUBKEY_BYTES] === bytes[0] && this.keys[other * PUBKEY_BYTES + 1] === bytes[1];
    }
    if (!shared) this.setPrefixBit(bytes[0]!, bytes[1]!, false);
    return true;
  }

  /** The key with id `id` (a view into the set's storage; copy it to keep it), or undefined. */
  keyAt(id: number): Uint8Array | undefined {
    if (!(id >= 0 && id < this.nextId && this.live[id] === 1)) return undefined;
    return this.keys.subarray(id * PUBKEY_BYTES, (id + 1) * PUBKEY_BYTES);
  }

  /** Base58 of the key with id `id`, or undefined. */
  addressAt(id: number): string | undefined {
    const key = this.keyAt(id);
    return key === undefined ? undefined : base58.encode(key);
  }

  /** Ids currently in use, ascending. */
  ids(): number[] {
    const out: number[] = [];
    for (let id = 0; id < this.nextId; id++) if (this.live[id] === 1) out.push(id);
    return out;
  }

  clear(): void {
    this.prefixBits.fill(0);
    this.table.fill(EMPTY);
    this.live.fill(0);
    this.keys.fill(0);
    this.freeIds.length = 0;
    this.nextId = 0;
    this.count = 0;
  }

  private setPrefixBit(b0: number, b1: number, on: boolean): void {
    const i = (b1 << 5) | (b0 >>> 3);
    if (on) this.prefixBits[i]! |= 1 << (b0 & 7);
    else this.prefixBits[i]! &= ~(1 << (b0 & 7));
  }

  private insertSlot(id: number, lo: number, hi: number): void {
    const mask = this.mask;
    let s = hash(lo, hi) & mask;
    while (this.table[s] !== EMPTY) s = (s + 1) & mask;
    this.table[s] = id + 1;
    this.tableLo[s] = lo;
    this.tableHi[s] = hi;
  }

  private rehash(tableSize: number): void {
    const oldTable = this.table;
    const oldLo = this.tableLo;
    const oldHi = this.tableHi;
    this.table = new Int32Array(tableSize);
    this.tableLo = new Uint32Array(tableSize);
    this.tableHi = new Uint32Array(tableSize);
    this.mask = tableSize - 1;
    for (let s = 0; s < oldTable.length; s++) {
      const t = oldTable[s]!;
      if (t !== EMPTY) this.insertSlot(t - 1, oldLo[s]!, oldHi[s]!);
    }
  }

  private growKeys(): void {
    const keys = new Uint8Array(this.keys.length * 2);
    keys.set(this.keys);
    this.keys = keys;
    const live = new Uint8Array(this.live.length * 2);
    live.set(this.live);
    this.live = live;
  }
}

function toBytes(key: string | Uint8Array): Uint8Array {
  if (typeof key === 'string') return base58.decodePubkey(key);
  if (key.length !== PUBKEY_BYTES) {
    throw invalidArgument('key', key.length, `public key must be ${PUBKEY_BYTES} bytes, got ${key.length}`);
  }
  return key;
}
