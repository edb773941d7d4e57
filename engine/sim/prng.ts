import { createHash } from 'node:crypto';
import { Prng } from '../prng.js';

/**
 * The simulator's seeded randomness. Everything the chain generates (keys, market, flow, PoH)
 * draws from a `SimRandom` derived from the seed, never from Math.random(): two chains with the
 * same seed and settings produce the same bytes.
 *
 * The generator is engine/prng.ts's mulberry32. Independent parts
 * of the simulator take independent streams, `SimRandom.derive(seed, label)`, so that adding a
 * draw to one (say, the flow) does not move another (the market).
 */
export class SimRandom extends Prng {
  /** A stream for one part of the simulator: seeded by sha256(seed ‖ label). */
  static derive(seed: number, label: string): SimRandom {
    return new SimRandom(deriveSeed(seed, label));
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
