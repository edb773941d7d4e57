/**
 * The C++ base58 encoder against the TypeScript one and bs58 on the same inputs, the selecting
 * encodeBase58Fast against both, and the fallback when the add-on is off (TIDEPOOL_NATIVE=0).
 * Only the tests that call the add-on directly skip without it.
 */
import bs58 from 'bs58';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { ErrorCode } from '../errors.js';
import { encodeBase58 } from './base58-encode.js';
import { encodeBase58Fast, nativeEncodeBase58, tsEncodeBase58, type EncodeBase58Fn } from './native-base58.js';
import { Prng } from '../prng.js';

const native = nativeEncodeBase58;

interface Sample {
  /** The bytes alone, as bs58 gets them. */
  bytes: Uint8Array;
  /** The same bytes inside a larger buffer, at [start, end). */
  buffer: Uint8Array;
  start: number;
  end: number;
}

// Every length 0..80, several random values each: a quarter with 1-8 leading zero bytes (all zero
// when that is the whole length), some all 0xff, each also placed at a random offset of a larger buffer.
function samples(seed: number, perLength: number): Sample[] {
  const prng = new Prng(seed);
  const out: Sample[] = [];
  for (let len = 0; len <= 80; len++) {
    for (let k = 0; k < perLength; k++) {
      const bytes = prng.bytes(len);
      if (k % 4 === 1) bytes.fill(0, 0, Math.min(len, 1 + prng.int(8)));
      if (k % 16 === 2) bytes.fill(255);
      const start = prng.int(40);
      const buffer = prng.bytes(start + len + prng.int(40));
      buffer.set(bytes, start);
      out.push({ bytes, buffer, start, end: start + len });
    }
  }
  return out;
}

function expectAgreement(encode: EncodeBase58Fn, all: Sample[]): void {
  for (const { bytes, buffer, start, end } of all) {
    const expected = bs58.encode(bytes);
    expect(tsEncodeBase58(bytes), `TypeScript, length ${bytes.length}`).toBe(expected);
    expect(encode(bytes), `whole array, length ${bytes.length}`).toBe(expected);
    expect(encode(buffer, start, end), `range [${start}, ${end})`).toBe(expected);
    expect(encode(Uint8Array.from(bytes)), `fresh array, length ${bytes.length}`).toBe(expected);
  }
}

describe('native base58 encoder', () => {
  it.skipIf(native === null)('matches TypeScript and bs58 on random inputs of every length up to 80 bytes', () => {
    expectAgreement(native!, samples(58, 64));
  });

  it.skipIf(native === null)('matches bs58 on long inputs, past its table and its stack buffers', () => {
    const prng = new Prng(5);
    for (const len of [127, 128, 129, 130, 255, 256, 257, 300, 1000, 5000]) {
      for (const zeros of [0, 1, 7]) {
        const bytes = prng.bytes(len);
        bytes.fill(0, 0, zeros);
        expect(native!(bytes), `length ${len}, ${zeros} zeros`).toBe(bs58.encode(bytes));
        expect(native!(bytes), `length ${len}, ${zeros} zeros`).toBe(encodeBase58(bytes));
      }
    }
    expect(native!(new Uint8Array(1000))).toBe('1'.repeat(1000));
  });

  it.skipIf(native === null)('matches bs58 at the extremes of every length up to 300 bytes', () => {
    // Its paths: 32 and 64 bytes unrolled, the table up to 128 significant bytes, then division.
    for (let len = 0; len <= 300; len++) {
      const cases = [new Uint8Array(len), new Uint8Array(len).fill(255)];
      if (len > 0) {
        const one = new Uint8Array(len);
        one[len - 1] = 1;
        const top = new Uint8Array(len).fill(255);
        top[0] = 0;
        cases.push(one, top);
      }
      for (const bytes of cases) expect(native!(bytes), `length ${len}`).toBe(bs58.encode(bytes));
    }
  });

  it.skipIf(native === null)('takes the same defaults and refuses the same ranges as the TypeScript encoder', () => {
    const bytes = Uint8Array.of(0, 0, 7, 200, 13, 0, 91, 4);
    for (const args of [[], [0], [3], [8], [undefined, 5], [2, undefined], [2, 6], [4, 4]] as const) {
      expect(native!(bytes, ...args), JSON.stringify(args)).toBe(encodeBase58(bytes, ...args));
    }
    const buf = Buffer.from(bytes);
    expect(native!(buf, 1, 7)).toBe(encodeBase58(buf, 1, 7));
    for (const [start, end] of [
      [-1, 4],
      [0, 9],
      [9, 9],
      [5, 4],
      [0.5, 4],
      [0, 3.5],
      [Number.NaN, 4],
      [0, Number.POSITIVE_INFINITY],
    ] as const) {
      expect(() => native!(bytes, start, end), `[${start}, ${end})`).toThrow(RangeError);
      expect(() => encodeBase58(bytes, start, end), `[${start}, ${end})`).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: expect.objectContaining({ argument: 'start..end' }) }));
    }
  });

  it.skipIf(native === null)('refuses what is not a Uint8Array with a TypeError', () => {
    const call = native as unknown as (...args: unknown[]) => string;
    expect(() => call()).toThrow(TypeError);
    expect(() => call([1, 2, 3])).toThrow(TypeError);
    expect(() => call(new Uint16Array(4))).toThrow(TypeError);
    expect(() => call(new Uint8Array(4), '1', 2)).toThrow(TypeError);
  });
});

describe('encodeBase58Fast', () => {
  it.skipIf(native === null)("throws the engine's TpError for a bad range the add-on refuses", () => {
    const view = new Uint8Array(100).subarray(1, 41); // off the heap: a long range goes to the add-on
    expect(() => native!(view, 0, 41)).toThrow(RangeError);
    expect(() => encodeBase58Fast(view, 0, 41)).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'start..end', value: '0..41' } }));
  });

  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });

  it('matches TypeScript and bs58 on random inputs of every length up to 80 bytes', () => {
    expectAgreement(encodeBase58Fast, samples(580, 32));
  });

  it('is the TypeScript encoder when the add-on is not loaded, else a dispatcher to both', () => {
    if (native === null) expect(encodeBase58Fast).toBe(encodeBase58);
    else expect(encodeBase58Fast).not.toBe(encodeBase58);
  });

  it('falls back to the TypeScript encoder under TIDEPOOL_NATIVE=0', async () => {
    vi.stubEnv('TIDEPOOL_NATIVE', '0');
    vi.resetModules();
    const m = await import('./native-base58.js');
    expect(m.nativeEncodeBase58).toBeNull();
    expect(m.encodeBase58Fast).toBe(m.tsEncodeBase58);
    const bytes = new Prng(3).bytes(64);
    expect(m.encodeBase58Fast(bytes)).toBe(bs58.encode(bytes));
  });
});
