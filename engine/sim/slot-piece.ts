import type { PendingBundle } from './block-producer.js';
import type { SimTransaction } from './sim-transaction.js';

/**
 * A piece of a slot as the chain makes it (chain.ts): the bundles and transactions submitted since
 * the last piece, then the piece's share of the generated flow, cut into batches of up to
 * `txsPerEntry` transactions. The leader executes one batch at a time and records it into entries
 * as soon as it is done (poh.ts), as a validator's banking stage records each batch it executes;
 * the piece's ticks are spread over its batches by the share of its transactions done. A running
 * chain runs a piece's batches over several turns of its event loop, so that what a batch wrote
 * (account writes to the Geyser streams, its entries) leaves and reads are answered between
 * batches instead of after the whole piece.
 */

/** A transaction someone sent, waiting for the next piece. */
export interface Submitted {
  tx: SimTransaction;
  /** Signatures already checked (preflight); otherwise the leader checks them. */
  verified: boolean;
}

/** Work items in the order they run: bundles, then submitted transactions, then generated ones. */
export interface PieceBatch {
  bundles: PendingBundle[];
  submitted: Submitted[];
  /** Generated transactions, signed when the batch runs. */
  generated: number;
  /** Transactions of the batch (a bundle counts its transactions). */
  size: number;
}

export interface PieceWork {
  batches: PieceBatch[];
  /** The next batch to run. */
  next: number;
  /** Transactions of the piece, and of its batches run so far. */
  planned: number;
  done: number;
  /** The piece's ticks, and those recorded so far. */
  ticks: number;
  ticksDone: number;
}

/**
 * Cuts a piece's work into batches of up to `txsPerEntry` transactions, in order (a bundle is never
 * split: one larger than `txsPerEntry` is a batch of its own).
 */
export function planPiece(bundles: readonly PendingBundle[], submitted: readonly Submitted[], generated: number, txsPerEntry: number, ticks: number): PieceWork {
  const batches: PieceBatch[] = [];
  let open: PieceBatch | undefined;
  const batchFor = (size: number): PieceBatch => {
    if (open === undefined || (open.size > 0 && open.size + size > txsPerEntry)) {
      open = { bundles: [], submitted: [], generated: 0, size: 0 };
      batches.push(open);
    }
    return open;
  };
  for (const bundle of bundles) {
    const batch = batchFor(bundle.txs.length);
    batch.bundles.push(bundle);
    batch.size += bundle.txs.length;
  }
  for (const s of submitted) {
    const batch = batchFor(1);
    batch.submitted.push(s);
    batch.size++;
  }
  for (let left = generated; left > 0; ) {
    const batch = batchFor(1);
    const n = Math.min(left, Math.max(1, txsPerEntry - batch.size));
    batch.generated += n;
    batch.size += n;
    left -= n;
  }
  let planned = 0;
  for (const batch of batches) planned += batch.size;
  return { batches, next: 0, planned, done: 0, ticks, ticksDone: 0 };
}

/**
 * The ticks to record after the batch just run (`work.next` already past it): the piece's ticks in
 * proportion to its transactions done, all that are left after its last batch (so the slot's last
 * entry is a tick); a piece without transactions records all its ticks at once.
 */
export function takeTicksDue(work: PieceWork): number {
  const due = work.next >= work.batches.length ? work.ticks : Math.floor((work.done * work.ticks) / work.planned);
  const n = Math.max(0, due - work.ticksDone);
  work.ticksDone += n;
  return n;
}

/** Whether a submitted transaction (by status-cache key) waits in the piece's batches not yet run. */
export function pieceHolds(work: PieceWork | undefined, signatureKey: string): boolean {
  if (work === undefined) return false;
  for (let i = work.next; i < work.batches.length; i++) {
    for (const s of work.batches[i]!.submitted) if (s.tx.signatureKey === signatureKey) return true;
  }
  return false;
}

/** Whether a bundle waits in the piece's batches not yet run. */
export function pieceHoldsBundle(work: PieceWork | undefined, id: string): boolean {
  if (work === undefined) return false;
  for (let i = work.next; i < work.batches.length; i++) if (work.batches[i]!.bundles.some((b) => b.id === id)) return true;
  return false;
}
