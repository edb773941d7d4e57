import type { AccountRecord } from './chain-backend.js';

/**
 * The chain's accounts, per commitment. The latest processed state is one map (O(1) reads for
 * execution); each slot newer than the root keeps the accounts it changed, so reads at an older
 * slot (confirmed, finalized) walk back through those frames to the rooted state. Records are
 * immutable once stored: writers store new records (copy-on-write through AccountOverlay).
 */

export interface AccountReader {
  get(address: string): AccountRecord | null;
}

/**
 * Changes layered over a reader: what a transaction (or a bundle, or a slot) has written so far.
 * `null` marks a deleted account. Committing copies the changes into the parent overlay.
 */
export class AccountOverlay implements AccountReader {
  readonly changes = new Map<string, AccountRecord | null>();

  constructor(readonly parent: AccountReader) {}

  get(address: string): AccountRecord | null {
    const changed = this.changes.get(address);
    return changed !== undefined ? changed : this.parent.get(address);
  }

  set(address: string, record: AccountRecord | null): void {
    this.changes.set(address, record);
  }

  /** Moves the changes into `target` (usually the parent overlay) and clears this one. */
  commitInto(target: AccountOverlay): void {
    for (const [address, record] of this.changes) target.changes.set(address, record);
    this.changes.clear();
  }
}

interface Frame {
  slot: bigint;
  changes: Map<string, AccountRecord | null>;
}

export class AccountsDb implements AccountReader {
  /** State as of the newest committed slot. */
  private readonly latest: Map<string, AccountRecord>;
  /** State as of the root. */
  private readonly rooted: Map<string, AccountRecord>;
  /** Changes of each slot after the root, oldest first. */
  private readonly frames: Frame[] = [];
  private rootSlot: bigint;

  constructor(genesis: ReadonlyMap<string, AccountRecord>, slot: bigint) {
    this.latest = new Map(genesis);
    this.rooted = new Map(genesis);
    this.rootSlot = slot;
  }

  /** The latest committed state. */
  get(address: string): AccountRecord | null {
    return this.latest.get(address) ?? null;
  }

  /** The state as of `slot` (at most the root's age back; older slots read as the root). */
  getAt(address: string, slot: bigint): AccountRecord | null {
    for (let i = this.frames.length - 1; i >= 0; i--) {
      const frame = this.frames[i]!;
      if (frame.slot > slot) continue;
      const changed = frame.changes.get(address);
      if (changed !== undefined) return changed;
    }
    return this.rooted.get(address) ?? null;
  }

  /** Records `changes` as slot `slot`'s. */
  commitSlot(slot: bigint, changes: ReadonlyMap<string, AccountRecord | null>): void {
    const frame: Frame = { slot, changes: new Map(changes) };
    for (const [address, record] of frame.changes) {
      if (record === null) this.latest.delete(address);
      else this.latest.set(address, record);
    }
    this.frames.push(frame);
  }

  /**
   * Writes `record` (null: deletes the account) into the newest committed slot, as if that slot
   * had written it: reads at that slot and later see it, reads at older slots do not.
   * (Administrative changes made between slots: extending a lookup table, a pool created or
   * closed by the market admin.)
   */
  amend(address: string, record: AccountRecord | null): void {
    if (record === null) this.latest.delete(address);
    else this.latest.set(address, record);
    const newest = this.frames[this.frames.length - 1];
    if (newest !== undefined) newest.changes.set(address, record);
    else if (record === null) this.rooted.delete(address);
    else this.rooted.set(address, record);
  }

  /** Folds every frame at or before `slot` into the rooted state. */
  setRoot(slot: bigint): void {
    if (slot <= this.rootSlot) return;
    let drop = 0;
    for (const frame of this.frames) {
      if (frame.slot > slot) break;
      for (const [address, record] of frame.changes) {
        if (record === null) this.rooted.delete(address);
        else this.rooted.set(address, record);
      }
      drop++;
    }
    this.frames.splice(0, drop);
    this.rootSlot = slot;
  }

  /** Every address of the latest state (tests, tools). */
  addresses(): IterableIterator<string> {
    return this.latest.keys();
  }
}
