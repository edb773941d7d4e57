import { createHash } from 'node:crypto';

import { encodeEntries, type EntryInput } from '../chain/index.js';
import { HASHES_PER_TICK } from './known-accounts.js';
import type { SimRandom } from './prng.js';

/**
 * A slot's entries as a leader records them, batch by batch while it executes, and their grouping
 * into ShredStream messages.
 *
 * Entries: each batch of transactions the leader executes is recorded as it finishes, its landed
 * transactions in entries of up to `txsPerEntry`; a slot has TICKS_PER_SLOT ticks (entries without
 * transactions), placed by the caller between the batches as the slot's work progresses (chain.ts:
 * each piece's share of them, spread over its batches); the slot's last entry is a tick. Each tick
 * interval accounts for HASHES_PER_TICK hashes, split between its entries (`num_hashes`).
 *
 * Hashes: a PoH-like sha256 chain, one hash per entry (not `num_hashes` of them, which would cost
 * millions of hashes a second): hash = sha256(previous ‖ num_hashes as u64 LE ‖ mixin), where a
 * transaction entry's mixin is sha256 of its transactions' first signatures and a tick has none.
 * The chain starts from the genesis hash; a slot's blockhash is its last tick's hash.
 *
 * Messages: each batch's entries in groups of 1 to 4 consecutive ones (seeded), each a bincode
 * Vec<Entry>, as the proxy forwards one message per reassembled data range.
 */

const MAX_ENTRIES_PER_BATCH = 4;

export class PohRecorder {
  private hash: Uint8Array;
  /** Hashes left in the current tick interval for its transaction entries and its tick. */
  private hashesLeft = HASHES_PER_TICK;

  constructor(genesisHash: Uint8Array) {
    this.hash = genesisHash;
  }

  /** The latest hash: after a slot's last piece, its blockhash. */
  get lastHash(): Uint8Array {
    return this.hash;
  }

  /**
   * Records one executed batch: `transactions` (the landed ones, in order; may be empty) in entries
   * of up to `txsPerEntry`, then `ticks` ticks; returns the encoded messages of those entries.
   */
  recordBatch(transactions: readonly Uint8Array[], ticks: number, txsPerEntry: number, rng: SimRandom): Uint8Array[] {
    const entries: EntryInput[] = [];
    for (let next = 0; next < transactions.length; next += txsPerEntry) {
      const numHashes = 1 + rng.int(Math.max(1, Math.floor(this.hashesLeft / 4)));
      this.hashesLeft -= numHashes;
      entries.push(this.record(BigInt(numHashes), transactions.slice(next, next + txsPerEntry)));
    }
    for (let tick = 0; tick < ticks; tick++) {
      entries.push(this.record(BigInt(Math.max(1, this.hashesLeft)), []));
      this.hashesLeft = HASHES_PER_TICK;
    }
    const batches: Uint8Array[] = [];
    for (let i = 0; i < entries.length; ) {
      const n = Math.min(entries.length - i, 1 + rng.int(MAX_ENTRIES_PER_BATCH));
      batches.push(encodeEntries(entries.slice(i, i + n)));
      i += n;
    }
    return batches;
  }

  private record(numHashes: bigint, transactions: Uint8Array[]): EntryInput {
    const head = Buffer.alloc(8);
    head.writeBigUInt64LE(numHashes, 0);
    const h = createHash('sha256').update(this.hash).update(head);
    if (transactions.length > 0) h.update(signatureMixin(transactions));
    this.hash = new Uint8Array(h.digest());
    return { numHashes, hash: this.hash, transactions };
  }
}

/** sha256 of the transactions' first signatures (each right after a 1-byte signature count). */
function signatureMixin(transactions: readonly Uint8Array[]): Uint8Array {
  const h = createHash('sha256');
  for (const tx of transactions) h.update(tx.subarray(1, 65));
  return h.digest();
}
