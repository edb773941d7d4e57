import { MAX_PROCESSING_AGE } from './known-accounts.js';

/**
 * The recent blockhashes (agave's `BlockhashQueue`): each slot's blockhash and the slot it belongs
 * to, kept for `keepSlots` slots. A transaction's blockhash is usable while its age, counted from
 * the parent of the block it lands in, is at most MAX_PROCESSING_AGE.
 */
export class BlockhashQueue {
  private readonly slotByHash = new Map<string, bigint>();
  private readonly hashBySlot = new Map<bigint, string>();

  constructor(private readonly keepSlots: number) {}

  remember(slot: bigint, blockhash: string): void {
    this.slotByHash.set(blockhash, slot);
    this.hashBySlot.set(slot, blockhash);
    const old = slot - BigInt(this.keepSlots);
    const gone = this.hashBySlot.get(old);
    if (gone !== undefined) {
      this.hashBySlot.delete(old);
      this.slotByHash.delete(gone);
    }
  }

  /** The blockhash of `slot`, while kept. */
  hashAt(slot: bigint): string | undefined {
    return this.hashBySlot.get(slot);
  }

  /** Whether `blockhash` may be used by a transaction built on the bank of `slot`. */
  isValid(blockhash: string, slot: bigint): boolean {
    const hashSlot = this.slotByHash.get(blockhash);
    return hashSlot !== undefined && hashSlot <= slot && slot - hashSlot <= BigInt(MAX_PROCESSING_AGE);
  }
}
