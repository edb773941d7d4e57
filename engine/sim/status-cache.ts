import type { TransactionErrorValue } from './tx-errors.js';

/**
 * Which transactions landed in which slot, with their result, for the last STATUS_CACHE_SLOTS
 * slots (a node's status cache): getSignatureStatuses reads it, and it refuses duplicates. Keys
 * are 20 bytes of the first signature (sim-transaction.ts signatureKeyOf), one map per slot so
 * old slots are dropped in one step.
 */
export class StatusCache {
  private readonly slots: { slot: bigint; statuses: Map<string, TransactionErrorValue | null> }[] = [];

  constructor(private readonly keepSlots: number) {}

  /** Records a slot's statuses (slots must come in increasing order). */
  addSlot(slot: bigint, statuses: Map<string, TransactionErrorValue | null>): void {
    this.slots.push({ slot, statuses });
    while (this.slots.length > 0 && this.slots[0]!.slot <= slot - BigInt(this.keepSlots)) this.slots.shift();
  }

  get(key: string): { slot: bigint; err: TransactionErrorValue | null } | undefined {
    for (let i = this.slots.length - 1; i >= 0; i--) {
      const entry = this.slots[i]!;
      const err = entry.statuses.get(key);
      if (err !== undefined) return { slot: entry.slot, err };
    }
    return undefined;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }
}
