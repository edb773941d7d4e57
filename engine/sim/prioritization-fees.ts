import { VOTE_PROGRAM_ID } from './known-accounts.js';
import type { SimTransaction } from './sim-transaction.js';

/**
 * The node's prioritization-fee cache (agave PrioritizationFeeCache) for getRecentPrioritizationFees:
 * for each of the last MAX_SLOTS slots, the smallest compute-unit price (micro-lamports per unit,
 * from SetComputeUnitPrice, 0 without one) paid by a non-vote transaction in the block, and per
 * account the smallest paid by one that write-locked it. Failed transactions count (they are in the
 * block and paid). A query for accounts answers, per slot, the largest of the block's minimum and
 * each named account's minimum: the price a transaction locking all of them had to beat.
 */

export const PRIORITIZATION_FEE_SLOTS = 150;
/** getRecentPrioritizationFees takes at most this many addresses. */
export const MAX_PRIORITIZATION_FEE_ACCOUNTS = 128;

/** One block's minimums, filled while the block is made. */
export class SlotFees {
  minimum: bigint | undefined;
  readonly byAccount = new Map<string, bigint>();

  /** Records a landed transaction; votes are left out as the node leaves them out. */
  add(tx: SimTransaction, keys: readonly string[], writable: Uint8Array, unitPrice: bigint): void {
    if (isVote(tx, keys)) return;
    if (this.minimum === undefined || unitPrice < this.minimum) this.minimum = unitPrice;
    for (let k = 0; k < keys.length; k++) {
      if (writable[k] !== 1) continue;
      const key = keys[k]!;
      const seen = this.byAccount.get(key);
      if (seen === undefined || unitPrice < seen) this.byAccount.set(key, unitPrice);
    }
  }
}

function isVote(tx: SimTransaction, keys: readonly string[]): boolean {
  if (tx.instructions.length === 0) return false;
  for (const ix of tx.instructions) if (keys[ix.programIdIndex] !== VOTE_PROGRAM_ID) return false;
  return true;
}

export class PrioritizationFeeCache {
  private readonly slots: { slot: bigint; fees: SlotFees }[] = [];

  constructor(private readonly keep = PRIORITIZATION_FEE_SLOTS) {}

  /** A finished block's fees (slots in increasing order). */
  addSlot(slot: bigint, fees: SlotFees): void {
    this.slots.push({ slot, fees });
    while (this.slots.length > this.keep) this.slots.shift();
  }

  /** Ascending by slot. */
  recent(accounts: readonly string[] = []): { slot: bigint; prioritizationFee: bigint }[] {
    return this.slots.map(({ slot, fees }) => {
      let fee = fees.minimum ?? 0n;
      for (const account of accounts) {
        const own = fees.byAccount.get(account);
        if (own !== undefined && own > fee) fee = own;
      }
      return { slot, prioritizationFee: fee };
    });
  }
}
