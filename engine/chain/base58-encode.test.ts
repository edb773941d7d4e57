import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../errors.js';
import { encodeBase58 } from './base58-encode.js';
import { Prng } from '../prng.js';

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

  it('matches bs58 at the extremes of every length up to 300 bytes, across the power table limit', () => {
    // 128 significant bytes is the last length the power table converts; longer ones divide.
    const prng = new Prng(5858);
    for (let len = 0; len <= 300; len++) {
      const cases = [new Uint8Array(len), new Uint8Array(len).fill(255), prng.bytes(len)];
      if (len > 0) {
        const one = new Uint8Array(len);
        one[len - 1] = 1;
        const top = new Uint8Array(len);
        top[0] = 1;
        const zeroLed = prng.bytes(len);
        zeroLed.fill(0, 0, prng.int(len + 1));
        cases.push(one, top, zeroLed);
      }
      for (const bytes of cases) expect(encodeBase58(bytes), `length ${len}`).toBe(bs58.encode(bytes));
    }
  });

  it('matches bs58 on random long inputs', () => {
    const prng = new Prng(581);
    for (const len of [129, 130, 131, 200, 255, 256, 257, 1000, 4096]) {
      const bytes = prng.bytes(len);
      expect(encodeBase58(bytes)).toBe(bs58.encode(bytes));
      bytes.fill(0, 0, 3);
      expect(encodeBase58(bytes)).toBe(bs58.encode(bytes));
    }
  });

  it('refuses a range outside the bytes or not made of integers', () => {
    const bytes = new Uint8Array(8);
    for (const [start, end] of [
      [-1, 4],
      [0, 9],
      [5, 4],
      [0.5, 4],
      [0, 3.5],
      [Number.NaN, 4],
      [0, Number.NaN],
    ] as const) {
      expect(() => encodeBase58(bytes, start, end), `[${start}, ${end})`).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'start..end', value: `${start}..${end}` } }));
    }
    expect(encodeBase58(bytes, 8)).toBe('');
    expect(encodeBase58(bytes, 3, 3)).toBe('');
    expect(encodeBase58(bytes, 6)).toBe('11');
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
