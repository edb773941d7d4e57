import { describe, expect, it } from 'vitest';

import { isTpError, ErrorCode } from '../errors.js';
import {
  COMPACT_U16_INVALID,
  COMPACT_U16_TRUNCATED,
  compactU16Size,
  decodeCompactU16,
  encodeCompactU16,
  readCompactU16,
  writeCompactU16,
} from './compact-u16.js';

// docs/wire-formats.md §2 (sdk/program/src/short_vec.rs test vectors)
const VECTORS: [number, number[]][] = [
  [0x0, [0x00]],
  [0x7f, [0x7f]],
  [0x80, [0x80, 0x01]],
  [0xff, [0xff, 0x01]],
  [0x100, [0x80, 0x02]],
  [0x7fff, [0xff, 0xff, 0x01]],
  [0x3fff, [0xff, 0x7f]],
  [0x4000, [0x80, 0x80, 0x01]],
  [0xffff, [0xff, 0xff, 0x03]],
];

describe('compact-u16', () => {
  it('encodes the reference vectors', () => {
    for (const [value, bytes] of VECTORS) {
      expect(Array.from(encodeCompactU16(value)), `0x${value.toString(16)}`).toEqual(bytes);
      expect(compactU16Size(value)).toBe(bytes.length);
    }
  });

  it('decodes the reference vectors, reporting their size', () => {
    for (const [value, bytes] of VECTORS) {
      expect(decodeCompactU16(Uint8Array.from(bytes))).toEqual({ value, size: bytes.length });
      const r = readCompactU16(Uint8Array.from([0xaa, ...bytes, 0xbb]), 1, bytes.length + 2);
      expect([r & 0xffff, r >>> 16]).toEqual([value, bytes.length]);
    }
  });

  it('round-trips every value', () => {
    const out = new Uint8Array(3);
    for (let v = 0; v <= 0xffff; v++) {
      const end = writeCompactU16(out, 0, v);
      const r = readCompactU16(out, 0, end);
      if ((r & 0xffff) !== v || r >>> 16 !== end) throw new Error(`round trip failed at ${v}`);
    }
  });

  it('rejects non-minimal forms, a fourth byte and values above 0xffff', () => {
    for (const bad of [
      [0x80, 0x00],
      [0xff, 0x00],
      [0x80, 0x80, 0x00],
      [0xff, 0xff, 0x00],
      [0x80, 0x80, 0x80],
      [0xff, 0xff, 0x80, 0x00],
      [0xff, 0xff, 0x04],
      [0x80, 0x80, 0x7f],
    ]) {
      expect(readCompactU16(Uint8Array.from(bad), 0, bad.length), bad.join(' ')).toBe(COMPACT_U16_INVALID);
      expect(() => decodeCompactU16(Uint8Array.from(bad))).toThrow(/invalid compact-u16/);
    }
  });

  it('reports a read that runs past the end as truncated, without reading past it', () => {
    expect(readCompactU16(new Uint8Array(0), 0, 0)).toBe(COMPACT_U16_TRUNCATED);
    expect(readCompactU16(Uint8Array.from([0x80]), 0, 1)).toBe(COMPACT_U16_TRUNCATED);
    expect(readCompactU16(Uint8Array.from([0xff, 0xff]), 0, 2)).toBe(COMPACT_U16_TRUNCATED);
    // `end` bounds the read even when the array goes on
    expect(readCompactU16(Uint8Array.from([0x80, 0x01]), 0, 1)).toBe(COMPACT_U16_TRUNCATED);
    try {
      decodeCompactU16(Uint8Array.from([0x80]));
      expect.unreachable();
    } catch (err) {
      expect(isTpError(err, 'TP_ERR_ENTRY_MALFORMED')).toBe(true);
    }
  });

  it('refuses to encode values outside 0..0xffff', () => {
    for (const bad of [-1, 0x10000, 1.5, Number.NaN]) expect(() => encodeCompactU16(bad)).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'value', value: bad } }));
  });
});
