import type { AccountRecord, EntryBatch } from './chain-backend.js';

export type SlotListener = (slot: bigint, parent: bigint, root: bigint) => void;
export type AccountListener = (account: AccountRecord | null, slot: bigint) => void;
export type EntriesListener = (batch: EntryBatch) => void;
/**
 * Every account one landed transaction (or a direct write) changed, by address; null for a deleted
 * account. Called as the transaction is applied to the slot being built (before the slot commits),
 * with that slot and the transaction's first signature (64 bytes; undefined for a direct write).
 * `writes` and `signature` are valid during the call only: copy what you keep.
 */
export type AccountWritesListener = (writes: ReadonlyMap<string, AccountRecord | null>, slot: bigint, signature: Uint8Array | undefined) => void;

/**
 * The subscription side of ChainBackend (onSlot, onAccount, onEntries), shared by the simulated
 * chain and the in-memory test backend. Each `on*` returns its unsubscribe function; an address
 * whose last account listener leaves is forgotten.
 */
export class ChainListeners {
  readonly slot = new Set<SlotListener>();
  readonly account = new Map<string, Set<AccountListener>>();
  readonly entries = new Set<EntriesListener>();
  readonly writes = new Set<AccountWritesListener>();

  onSlot(listener: SlotListener): () => void {
    this.slot.add(listener);
    return () => this.slot.delete(listener);
  }

  onAccount(address: string, listener: AccountListener): () => void {
    let set = this.account.get(address);
    if (set === undefined) this.account.set(address, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.account.get(address) === set) this.account.delete(address);
    };
  }

  onEntries(listener: EntriesListener): () => void {
    this.entries.add(listener);
    return () => this.entries.delete(listener);
  }

  /** Every account write of every address, transaction by transaction (the Geyser account stream). */
  onAccountWrites(listener: AccountWritesListener): () => void {
    this.writes.add(listener);
    return () => this.writes.delete(listener);
  }
}
