/**
 * Update-order list over pool ids (a doubly linked list in typed arrays): the head is the least
 * recently updated pool, the one over-capacity eviction removes (docs/architecture.md §3). O(1) touch,
 * remove and oldest; no allocation after construction.
 */
import { NO_ID } from './intern-table.js';

export class RecencyList {
  private head = NO_ID;
  private tail = NO_ID;
  private readonly prev: Int32Array;
  private readonly next: Int32Array;
  private readonly linked: Uint8Array;

  constructor(capacity: number) {
    this.prev = new Int32Array(capacity).fill(NO_ID);
    this.next = new Int32Array(capacity).fill(NO_ID);
    this.linked = new Uint8Array(capacity);
  }

  /** Marks `id` as the most recently updated (appends it, or moves it to the tail). */
  touch(id: number): void {
    if (this.linked[id] === 1) {
      if (this.tail === id) return;
      this.unlink(id);
    }
    this.linked[id] = 1;
    this.prev[id] = this.tail;
    this.next[id] = NO_ID;
    if (this.tail === NO_ID) this.head = id;
    else this.next[this.tail] = id;
    this.tail = id;
  }

  remove(id: number): void {
    if (this.linked[id] !== 1) return;
    this.unlink(id);
    this.linked[id] = 0;
  }

  /** The least recently updated id, NO_ID when empty. */
  oldest(): number {
    return this.head;
  }

  /** The id updated just after `id`, NO_ID at the tail. */
  newer(id: number): number {
    return this.next[id] ?? NO_ID;
  }

  private unlink(id: number): void {
    const p = this.prev[id]!;
    const n = this.next[id]!;
    if (p === NO_ID) this.head = n;
    else this.next[p] = n;
    if (n === NO_ID) this.tail = p;
    else this.prev[n] = p;
    this.prev[id] = NO_ID;
    this.next[id] = NO_ID;
  }
}
