import { createHash } from 'node:crypto';

/**
 * The simulator's seeded randomness. Everything the chain generates (keys, market, flow, PoH)
 * draws from a `SimRandom` derived from the seed, never from Math.random(): two chains with the
 * same seed and settings produce the same bytes.
 *
 * The generator is mulberry32 (the algorithm of engine/chain/testing/prng.ts). Independent parts
 * of the simulator take independent streams, `SimRandom.derive(seed, label)`, so that adding a
 * draw to one (say, the flow) does not move another (the market).
 */
export class SimRandom {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A stream for one part of the simulator: seeded by sha256(seed ‖ label). */
  static derive(seed: number, label: string): SimRandom {
    return new SimRandom(deriveSeed(seed, label));
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

  /** exp(uniform(ln lo, ln hi)): sizes and prices spread over orders of magnitude. */
  logUniform(lo: number, hi: number): number {
    return Math.exp(this.uniform(Math.log(lo), Math.log(hi)));
  }

  /** Standard normal (Box-Muller; one value per call, so the stream stays simple). */
  normal(): number {
    const u = 1 - this.next(); // (0, 1]
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  /** A random-order copy of `items` (Fisher-Yates). */
  shuffled<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const t = out[i]!;
      out[i] = out[j]!;
      out[j] = t;
    }
    return out;
  }

  fill(out: Uint8Array): Uint8Array {
    for (let i = 0; i < out.length; i++) out[i] = this.u32() & 0xff;
    return out;
  }

  bytes(n: number): Uint8Array {
    return this.fill(new Uint8Array(n));
  }
}

/** A 32-bit seed from sha256(seed as u32 LE ‖ label). */
export function deriveSeed(seed: number, label: string): number {
  const head = Buffer.alloc(4);
  head.writeUInt32LE(seed >>> 0, 0);
  return createHash('sha256').update(head).update(label).digest().readUInt32LE(0);
}

/** 32 bytes from sha256(seed ‖ label): ed25519 seeds and addresses of the simulated accounts. */
export function seededBytes32(seed: number, label: string): Uint8Array {
  const head = Buffer.alloc(4);
  head.writeUInt32LE(seed >>> 0, 0);
  return new Uint8Array(createHash('sha256').update(head).update(label).digest());
}
