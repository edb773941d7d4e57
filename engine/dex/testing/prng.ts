/**
 * Seeded pseudo-random numbers for property tests (xoshiro128**): the same seed gives the same
 * cases on every run, so a failing case can be replayed from its seed and index.
 */
export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    // splitmix32 to spread the seed over the state.
    let s = seed >>> 0;
    const next = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
  }

  /** Uniform 32-bit unsigned integer. */
  u32(): number {
    const result = Math.imul(rotl(Math.imul(this.b, 5) >>> 0, 7), 9) >>> 0;
    const t = (this.b << 9) >>> 0;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return result;
  }

  /** Uniform in [0, 1). */
  float(): number {
    return this.u32() / 0x100000000;
  }

  /** Uniform integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.float() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)]!;
  }

  /** Uniform bigint in [0, 2^bits). */
  bits(bits: number): bigint {
    let v = 0n;
    let left = bits;
    while (left > 0) {
      const take = Math.min(32, left);
      v = (v << BigInt(take)) | BigInt(this.u32() >>> (32 - take));
      left -= take;
    }
    return v;
  }

  /** Uniform bigint in [lo, hi]. */
  bigint(lo: bigint, hi: bigint): bigint {
    const range = hi - lo + 1n;
    const bits = range.toString(2).length + 16;
    return lo + (this.bits(bits) % range);
  }

  /** Log-uniform positive bigint with between minBits and maxBits significant bits. */
  logBig(minBits: number, maxBits: number): bigint {
    const bits = this.int(minBits, maxBits);
    return (1n << BigInt(bits - 1)) | this.bits(bits - 1);
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
