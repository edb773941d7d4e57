/**
 * KeyTable: the monitored pool keys on a SharedArrayBuffer, replaced by the pool's thread and read
 * by parse workers between batches, without messages. A sequence lock guards it: the writer makes
 * KT_VERSION odd, writes, makes it even again; a reader copies the keys and retries when the
 * version was odd or moved meanwhile. Replacement is rare (POST /config/pools), reads check one
 * word per batch, so a reader never blocks the writer and the writer never waits for readers.
 * Plain reads racing the writer are allowed in JavaScript (they may see torn values, never
 * undefined behaviour); the version check throws such copies away.
 */
import { KeySet } from '../chain/index.js';
import { decodePubkey } from '../chain/index.js';
import { PUBKEY_BYTES } from '../chain/index.js';
import { invalidArgument } from '../errors.js';
import { KT_CAPACITY, KT_COUNT, KT_HEADER_BYTES, KT_HEADER_WORDS, KT_VERSION } from './match-layout.js';

export function createKeyTable(capacity: number): SharedArrayBuffer {
  if (!Number.isInteger(capacity) || capacity < 1) throw invalidArgument('capacity', capacity, `key table capacity must be >= 1, got ${capacity}`);
  const sab = new SharedArrayBuffer(KT_HEADER_BYTES + capacity * PUBKEY_BYTES);
  new Int32Array(sab, 0, KT_HEADER_WORDS)[KT_CAPACITY] = capacity;
  return sab;
}

function keyBytes(key: string | Uint8Array): Uint8Array {
  if (typeof key === 'string') return decodePubkey(key);
  if (key.length !== PUBKEY_BYTES) throw invalidArgument('key', key.length, `public key must be ${PUBKEY_BYTES} bytes, got ${key.length}`);
  return key;
}

/**
 * Replaces the table's keys (one writer at a time). Pool id i is keys[i]. Validates every key
 * before touching the table; TpError ArgumentInvalid when there are more keys than the capacity.
 */
export function writeKeyTable(sab: SharedArrayBuffer, keys: readonly (string | Uint8Array)[]): number {
  const header = new Int32Array(sab, 0, KT_HEADER_WORDS);
  const capacity = header[KT_CAPACITY]!;
  if (keys.length > capacity) throw invalidArgument('keys', keys.length, `${keys.length} keys exceed the key table capacity ${capacity}`);
  const decoded = keys.map(keyBytes);
  const bytes = new Uint8Array(sab, KT_HEADER_BYTES);
  const version = Atomics.load(header, KT_VERSION);
  Atomics.store(header, KT_VERSION, version + 1); // odd: readers retry
  decoded.forEach((k, i) => bytes.set(k, i * PUBKEY_BYTES));
  Atomics.store(header, KT_COUNT, decoded.length);
  Atomics.store(header, KT_VERSION, version + 2); // every store above happens-before a reader seeing this
  return version + 2;
}

/** A worker's view of the table: a KeySet rebuilt when the version moves. */
export class KeyTableReader {
  keys = new KeySet();
  /** Pool id (table index) of each KeySet id; a key listed twice keeps its first index. */
  poolOf = new Int32Array(0);
  version = -1;
  reloads = 0;
  private readonly header: Int32Array;
  private readonly bytes: Uint8Array;
  private readonly copy: Uint8Array;

  constructor(sab: SharedArrayBuffer) {
    this.header = new Int32Array(sab, 0, KT_HEADER_WORDS);
    this.bytes = new Uint8Array(sab, KT_HEADER_BYTES);
    this.copy = new Uint8Array(this.bytes.length);
    this.refresh();
  }

  /** Reloads the keys when the table changed; returns whether it did. One atomic load otherwise. */
  refresh(): boolean {
    if (Atomics.load(this.header, KT_VERSION) === this.version) return false;
    let version: number;
    let count: number;
    for (;;) {
      version = Atomics.load(this.header, KT_VERSION);
      if ((version & 1) !== 0) continue; // writer in the middle; it does not wait on us
      count = Atomics.load(this.header, KT_COUNT);
      this.copy.set(this.bytes.subarray(0, count * PUBKEY_BYTES));
      if (Atomics.load(this.header, KT_VERSION) === version) break;
    }
    const keys = new KeySet(Math.max(count, 8));
    const poolOf = new Int32Array(count);
    for (let i = 0; i < count; i++) {
      const before = keys.size;
      const id = keys.add(this.copy.slice(i * PUBKEY_BYTES, (i + 1) * PUBKEY_BYTES));
      if (keys.size > before) poolOf[id] = i;
    }
    this.keys = keys;
    this.poolOf = poolOf;
    this.version = version;
    this.reloads++;
    return true;
  }
}
