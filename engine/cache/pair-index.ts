/**
 * Pools by unordered mint pair, so a quote finds the pools of a pair without scanning the cache.
 * One intrusive doubly linked list per pair over pool ids (typed arrays); a Map from the pair's
 * numeric key to the list head. Keys are numbers built from the two mint ids (no string keys).
 *
 * Each pair with pools also carries a version: a number drawn from one counter that only grows,
 * taken anew whenever a pool joins or leaves the pair or `touch` says a pool of it changed. A
 * version is never handed out twice, not even after the pair empties (its version is then dropped:
 * `versionOf` reads 0) and the mint ids are reused for other mints, so "same version" means "same
 * pools in the same states" (the quote memo relies on it).
 */
import { NO_ID } from './intern-table.js';

export class PairIndex {
  private readonly heads = new Map<number, number>();
  private readonly versions = new Map<number, number>();
  private versionCounter = 0;
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
    this.versions.set(key, ++this.versionCounter);
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
    if (p === NO_ID && n === NO_ID) this.versions.delete(key);
    else this.versions.set(key, ++this.versionCounter);
    if (n !== NO_ID) this.prev[n] = p;
    this.keys[poolId] = -1;
    this.prev[poolId] = NO_ID;
    this.next[poolId] = NO_ID;
  }

  /** The first pool of the pair, NO_ID when none; walk on with `nextOf`. */
  first(mintX: number, mintY: number): number {
    return this.heads.get(this.keyOf(mintX, mintY)) ?? NO_ID;
  }

  /**
   * A pool of the pair changed state: the pair takes a new version, which is returned (0 for an
   * unlinked pool, which changes nothing).
   */
  touch(poolId: number): number {
    const key = this.keys[poolId]!;
    if (key === -1) return 0;
    this.versions.set(key, ++this.versionCounter);
    return this.versionCounter;
  }

  /** The version of the pair {x, y} (either order); 0 when it has no pool. */
  versionOf(mintX: number, mintY: number): number {
    return this.versions.get(this.keyOf(mintX, mintY)) ?? 0;
  }

  nextOf(poolId: number): number {
    return this.next[poolId] ?? NO_ID;
  }
}
