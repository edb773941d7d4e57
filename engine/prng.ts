/**
 * A small seeded PRNG (mulberry32), the one generator of the engine (leaf module): generated data,
 * fuzz failures and the simulator's chain all reproduce from a seed. Never Math.random() where a
 * result must repeat.
 */
export class Prng {
  protected state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform 32-bit unsigned integer. */
  u32(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** Uniform float in [0, 1). */
  next(): number {
    return this.u32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Uniform integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  /** Uniform float in [lo, hi). */
  uniform(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next();
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  fill(out: Uint8Array, from = 0, to = out.length): Uint8Array {
    for (let i = from; i < to; i++) out[i] = this.u32() & 0xff;
    return out;
  }

  bytes(n: number): Uint8Array {
    return this.fill(new Uint8Array(n));
  }
}
