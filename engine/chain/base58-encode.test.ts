import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { encodeBase58 } from './base58-encode.js';
import { Prng } from './testing/prng.js';

describe('encodeBase58', () => {
  it('matches bs58 on random inputs of every length up to 80 bytes, with and without leading zeros', () => {
    const prng = new Prng(58);
    for (let i = 0; i < 20_000; i++) {
      const len = i % 81;
      const bytes = prng.bytes(len);
      const zeros = prng.int(4) === 0 ? Math.min(len, prng.int(5)) : 0;
      bytes.fill(0, 0, zeros);
      expect(encodeBase58(bytes)).toBe(bs58.encode(bytes));
    }
  });

  it('encodes the edge values', () => {
    expect(encodeBase58(new Uint8Array(0))).toBe('');
    expect(encodeBase58(new Uint8Array(32))).toBe('11111111111111111111111111111111');
    expect(encodeBase58(new Uint8Array(64).fill(255))).toBe(bs58.encode(new Uint8Array(64).fill(255)));
    expect(encodeBase58(Uint8Array.of(0, 0, 1))).toBe('112');
    expect(encodeBase58(Uint8Array.of(57))).toBe('z');
    expect(encodeBase58(Uint8Array.of(58))).toBe('21');
  });

  it('encodes a sub-range of a larger buffer', () => {
    const wsol = bs58.decode('So11111111111111111111111111111111111111112');
    const buf = new Uint8Array(100).fill(7);
    buf.set(wsol, 40);
    expect(encodeBase58(buf, 40, 72)).toBe('So11111111111111111111111111111111111111112');
  });
});
