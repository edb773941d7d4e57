import { base58 } from '../chain/index.js';
import { AccountOverlay } from './accounts-db.js';
import type { BlockhashQueue } from './blockhash-queue.js';
import type { AccountRecord, BundleStatus } from './chain-backend.js';
import type { SlotFees } from './prioritization-fees.js';
import type { Execution, Runtime } from './runtime.js';
import { recordTransaction, type ConfirmedTransaction } from './transaction-history.js';
import { staticKeyBytes, verifyTransactionSignatures, type SimTransaction } from './sim-transaction.js';
import type { StatusCache } from './status-cache.js';
import { TxError, type TransactionErrorValue } from './tx-errors.js';

/**
 * What a leader does with the transactions of the block it is making: the checks before running
 * a submitted transaction (blockhash age, duplicates, signatures), running it, and keeping the
 * landed ones (failed ones included) in order for the block's entries; bundles land whole or not
 * at all.
 */

/** The slot being made. */
export interface SlotBuild {
  slot: bigint;
  blockTime: bigint;
  epoch: bigint;
  /** The slot's changes so far, over the last committed state. */
  state: AccountOverlay;
  /** Status of each landed transaction, by status-cache key. */
  statuses: Map<string, TransactionErrorValue | null>;
  /** The next piece to make. */
  piece: number;
  /** Generated transactions of the slot, and how many the pieces made so far. */
  flowTotal: number;
  flowDone: number;
  busyMs: number;
  /** Compute-unit prices of the block's landed transactions (getRecentPrioritizationFees). */
  fees: SlotFees;
  /** Submitted transactions that landed, with their status meta (getTransaction), by signature. */
  records: Map<string, ConfirmedTransaction>;
}

export interface PendingBundle {
  id: string;
  txs: SimTransaction[];
  /** base58 signatures, in order. */
  signatures: string[];
}

export interface ProductionCounters {
  transactions: number;
  failedTransactions: number;
  droppedTransactions: number;
  bundlesLanded: number;
  bundlesFailed: number;
}

type Landed = Extract<Execution, { landed: true }>;

/**
 * Told of each landed transaction's account writes as they are applied to the slot being built
 * (the Geyser account stream's replay-time notifications): `changes` is valid during the call only.
 */
export type AppliedListener = (slot: bigint, changes: ReadonlyMap<string, AccountRecord | null>, signature: Uint8Array) => void;

export class BlockProducer {
  constructor(
    private readonly runtime: Runtime,
    private readonly statusCache: StatusCache,
    private readonly blockhashes: BlockhashQueue,
    private readonly counters: ProductionCounters,
    private readonly onApplied?: AppliedListener,
  ) {}

  /** The leader's checks before running a submitted transaction; null when it may run. */
  admit(tx: SimTransaction, slot: bigint, statuses: ReadonlyMap<string, unknown>, verified: boolean): TransactionErrorValue | null {
    // The queue's newest entry is the parent's blockhash, at age 0.
    if (!this.blockhashes.isValid(tx.recentBlockhash, slot - 1n)) return TxError.BlockhashNotFound;
    if (statuses.has(tx.signatureKey) || this.statusCache.has(tx.signatureKey)) return TxError.AlreadyProcessed;
    if (!verified && !verifyTransactionSignatures(tx, (k) => staticKeyBytes(tx, k))) return TxError.SignatureFailure;
    return null;
  }

  /** A transaction someone sent: checked, run, and landed unless refused or unable to pay. */
  runSubmitted(b: SlotBuild, tx: SimTransaction, verified: boolean, included: Uint8Array[]): void {
    const refused = this.admit(tx, b.slot, b.statuses, verified);
    const result = refused === null ? this.runtime.execute(tx, b.state, { blockTime: b.blockTime, slot: b.slot, epoch: b.epoch, collectLogs: true }) : undefined;
    if (result === undefined || !result.landed) {
      this.counters.droppedTransactions++;
      return;
    }
    b.records.set(signatureOf(tx), recordTransaction(tx, result, b.state, b.slot, b.blockTime));
    this.land(b, tx, result, included);
  }

  /** A transaction of the generated flow (fresh, signed by the chain): run and landed. */
  runGenerated(b: SlotBuild, tx: SimTransaction, included: Uint8Array[]): void {
    const result = this.runtime.execute(tx, b.state, { blockTime: b.blockTime, slot: b.slot, epoch: b.epoch });
    if (result.landed) this.land(b, tx, result, included);
  }

  /** A bundle: every transaction must land without error, in order, or none of them lands. */
  runBundle(b: SlotBuild, bundle: PendingBundle, included: Uint8Array[]): BundleStatus {
    const work = new AccountOverlay(b.state);
    const statuses = new Map<string, TransactionErrorValue | null>(b.statuses);
    const landed: { tx: SimTransaction; result: Landed; record: ConfirmedTransaction; changes: ReadonlyMap<string, AccountRecord | null> | undefined }[] = [];
    let failure: TransactionErrorValue | null = null;
    for (const tx of bundle.txs) {
      const refused = this.admit(tx, b.slot, statuses, true);
      if (refused !== null) {
        failure = refused;
        break;
      }
      const result = this.runtime.execute(tx, work, { blockTime: b.blockTime, slot: b.slot, epoch: b.epoch, collectLogs: true });
      if (!result.landed || result.err !== null) {
        failure = result.err;
        break;
      }
      // Kept apart for onApplied: committing into `work` empties the transaction's own changes.
      const changes = this.onApplied === undefined ? undefined : new Map(result.changes.changes);
      landed.push({ tx, result, record: recordTransaction(tx, result, work, b.slot, b.blockTime), changes });
      result.changes.commitInto(work);
      statuses.set(tx.signatureKey, null);
    }
    const status: BundleStatus = { bundleId: bundle.id, transactions: bundle.signatures, slot: b.slot, confirmationStatus: 'processed', err: failure };
    if (failure !== null) {
      this.counters.bundlesFailed++;
      return status;
    }
    work.commitInto(b.state);
    for (const { tx, result, record, changes } of landed) {
      b.records.set(signatureOf(tx), record);
      b.fees.add(tx, result.keys, result.writable, result.unitPrice);
      if (changes !== undefined) this.onApplied?.(b.slot, changes, signatureBytesOf(tx));
    }
    for (const tx of bundle.txs) {
      b.statuses.set(tx.signatureKey, null);
      included.push(tx.bytes);
      this.counters.transactions++;
    }
    this.counters.bundlesLanded++;
    return status;
  }

  private land(b: SlotBuild, tx: SimTransaction, result: Landed, included: Uint8Array[]): void {
    b.fees.add(tx, result.keys, result.writable, result.unitPrice);
    this.onApplied?.(b.slot, result.changes.changes, signatureBytesOf(tx));
    result.changes.commitInto(b.state);
    b.statuses.set(tx.signatureKey, result.err);
    included.push(tx.bytes);
    this.counters.transactions++;
    if (result.err !== null) this.counters.failedTransactions++;
  }
}

/** The transaction's first signature, 64 bytes (a view of its bytes). */
function signatureBytesOf(tx: SimTransaction): Uint8Array {
  return tx.bytes.subarray(tx.signaturesOffset, tx.signaturesOffset + 64);
}

function signatureOf(tx: SimTransaction): string {
  return base58.encodeAt(tx.bytes, tx.signaturesOffset, 64);
}
