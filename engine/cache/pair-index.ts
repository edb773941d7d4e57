/**
 * Pools by unordered mint pair, so a quote finds the pools of a pair without scanning the cache.
 * One intrusive doubly linked list per pair over pool ids (typed arrays); a Map from the pair's
 * numeric key to the list head. Keys are numbers built from the two mint ids (no string keys).
 */
import { NO_ID } from './intern-table.js';

export class PairIndex {
  private readonly heads = new Map<number, number>();
  private readonly prev: Int32Array;
  private readonly next: Int32Array;
  /** The pair key each pool is linked under; -1 when unlinked. */
  private readonly keys: Float64Array;
  private readonly mintCapacity: number;

  constructor(poolCapacity: number, mintCapacity: number) {
    this.prev = new Int32Array(poolCapacity).fill(NO_ID);
    this.next = new Int32Array(poolCapacity).fill(NO_ID);
    this.keys = new Float64Array(poolCapacity).fill(-1);
    this.mintCapacity = mintCapacity;
  }

  /** The key of the unordered pair {x, y} of mint ids (same key in either order). */
  keyOf(mintX: number, mintY: number): number {
    return mintX < mintY ? mintX * this.mintCapacity + mintY : mintY * this.mintCapacity + mintX;
  }

  /** Number of pairs with at least one pool. */
  get pairCount(): number {
    return this.heads.size;
  }

  add(poolId: number, mintX: number, mintY: number): void {
    if (this.keys[poolId] !== -1) this.remove(poolId);
    const key = this.keyOf(mintX, mintY);
    const head = this.heads.get(key) ?? NO_ID;
    this.keys[poolId] = key;
    this.prev[poolId] = NO_ID;
    this.next[poolId] = head;
    if (head !== NO_ID) this.prev[head] = poolId;
    this.heads.set(key, poolId);
  }

  remove(poolId: number): void {
    const key = this.keys[poolId]!;
    if (key === -1) return;
    const p = this.prev[poolId]!;
    const n = this.next[poolId]!;
    if (p === NO_ID) {
      if (n === NO_ID) this.heads.delete(key);
      else this.heads.set(key, n);
    } else {
      this.next[p] = n;
    }
    if (n !== NO_ID) this.prev[n] = p;
    this.keys[poolId] = -1;
    this.prev[poolId] = NO_ID;
    this.next[poolId] = NO_ID;
  }

  /** The first pool of the pair, NO_ID when none; walk on with `nextOf`. */
  first(mintX: number, mintY: number): number {
    return this.heads.get(this.keyOf(mintX, mintY)) ?? NO_ID;
  }

  nextOf(poolId: number): number {
    return this.next[poolId] ?? NO_ID;
  }
}
