import { describe, expect, it } from 'vitest';

import { SimRandom, deriveSeed, seededBytes32 } from './prng.js';

describe('SimRandom', () => {
  it('repeats its stream for a seed', () => {
    const a = new SimRandom(7);
    const b = new SimRandom(7);
    const xs = Array.from({ length: 100 }, () => a.u32());
    expect(Array.from({ length: 100 }, () => b.u32())).toEqual(xs);
    expect(new Set(xs).size).toBeGreaterThan(95);
  });

  it('gives independent streams to different labels of one seed', () => {
    expect(deriveSeed(1, 'flow')).not.toBe(deriveSeed(1, 'market'));
    expect(deriveSeed(1, 'flow')).toBe(deriveSeed(1, 'flow'));
    expect(deriveSeed(2, 'flow')).not.toBe(deriveSeed(1, 'flow'));
    expect(Buffer.from(seededBytes32(1, 'a')).equals(Buffer.from(seededBytes32(1, 'a')))).toBe(true);
  });

  it('draws within the asked ranges', () => {
    const r = new SimRandom(3);
    for (let i = 0; i < 1000; i++) {
      const x = r.logUniform(0.01, 100);
      expect(x).toBeGreaterThanOrEqual(0.01);
      expect(x).toBeLessThan(100);
      const n = r.range(-3, 3);
      expect(n).toBeGreaterThanOrEqual(-3);
      expect(n).toBeLessThanOrEqual(3);
    }
    const normals = Array.from({ length: 4000 }, () => r.normal());
    const mean = normals.reduce((a, b) => a + b, 0) / normals.length;
    const sd = Math.sqrt(normals.reduce((a, b) => a + (b - mean) ** 2, 0) / normals.length);
    expect(Math.abs(mean)).toBeLessThan(0.06);
    expect(Math.abs(sd - 1)).toBeLessThan(0.06);
  });
});
