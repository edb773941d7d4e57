/**
 * A string intern table with reference counts: each distinct string gets a small integer id that
 * indexes the cache's typed arrays. Ids are dense in [0, capacity); a released id is reused before
 * a never-used one (LIFO), so the typed arrays never grow.
 */
import { invalidArgument } from '../errors.js';

/** "No id": returned by lookups that find nothing and by `acquire` on a full table. */
export const NO_ID = -1;

export class InternTable {
  readonly capacity: number;
  private readonly ids = new Map<string, number>();
  private readonly strings: (string | undefined)[];
  private readonly refs: Uint32Array;
  /** Stack of released ids; `freeTop` entries are valid. */
  private readonly free: Int32Array;
  private freeTop = 0;
  /** Ids below this have been handed out at least once. */
  private highWater = 0;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw invalidArgument('capacity', capacity, `capacity must be a positive integer, got ${capacity}`);
    this.capacity = capacity;
    this.strings = new Array<string | undefined>(capacity).fill(undefined);
    this.refs = new Uint32Array(capacity);
    this.free = new Int32Array(capacity);
  }

  /** Number of live strings. */
  get size(): number {
    return this.ids.size;
  }

  /** The id of `s`, or NO_ID when it is not interned. */
  idOf(s: string): number {
    return this.ids.get(s) ?? NO_ID;
  }

  /** The string of a live id, undefined for a free or out-of-range id. */
  stringOf(id: number): string | undefined {
    return this.strings[id];
  }

  refCount(id: number): number {
    return this.refs[id] ?? 0;
  }

  /** Interns `s` (if needed) and takes one reference to it. NO_ID when `s` is new and the table is full. */
  acquire(s: string): number {
    let id = this.ids.get(s);
    if (id === undefined) {
      if (this.freeTop > 0) id = this.free[--this.freeTop]!;
      else if (this.highWater < this.capacity) id = this.highWater++;
      else return NO_ID;
      this.ids.set(s, id);
      this.strings[id] = s;
    }
    this.refs[id]!++;
    return id;
  }

  /** Drops one reference; at zero the string is forgotten and its id freed. Returns true when freed. */
  release(id: number): boolean {
    const s = this.strings[id];
    if (s === undefined) return false;
    if (--this.refs[id]! > 0) return false;
    this.ids.delete(s);
    this.strings[id] = undefined;
    this.free[this.freeTop++] = id;
    return true;
  }

  /** Live strings, in id order (a fresh array; not for hot paths). */
  values(): string[] {
    const out: string[] = [];
    for (let id = 0; id < this.highWater; id++) {
      const s = this.strings[id];
      if (s !== undefined) out.push(s);
    }
    return out;
  }
}
