import { describe, expect, it } from 'vitest';

import { rustDebugValue, writeF64, writeJson } from './json-text.js';

describe('writeJson', () => {
  it('writes bigints as exact integers', () => {
    expect(writeJson({ rentEpoch: 18_446_744_073_709_551_615n, list: [1n, 'a', null] })).toBe(
      '{"rentEpoch":18446744073709551615,"list":[1,"a",null]}',
    );
  });

  it('sorts keys at every level when asked, as serde_json Value maps do', () => {
    expect(writeJson({ b: 1, a: { d: 2, c: 3 } }, true)).toBe('{"a":{"c":3,"d":2},"b":1}');
  });

  it('leaves out undefined fields and writes non-finite numbers as null', () => {
    expect(writeJson({ a: undefined, b: Number.NaN })).toBe('{"b":null}');
  });
});

describe('writeF64', () => {
  it('writes floats as ryu does', () => {
    const cases: [number, string][] = [
      [1, '1.0'],
      [1.5, '1.5'],
      [0, '0.0'],
      [123.45, '123.45'],
      [0.0001, '0.0001'],
      [0.00001, '0.00001'],
      [0.000001, '1e-6'],
      [0.000123, '0.000123'],
      [1e15, '1000000000000000.0'],
      [1e16, '1e16'],
      [1.5e17, '1.5e17'],
      [-2.25, '-2.25'],
      [Number('18446744.073709551615'), '18446744.07370955'], // more digits than a double holds
    ];
    for (const [x, text] of cases) expect(writeF64(x), String(x)).toBe(text);
  });
});

describe('rustDebugValue', () => {
  it('prints serde_json values as Rust Debug does', () => {
    expect(rustDebugValue([1, 'x', true, null])).toBe('Array [Number(1), String("x"), Bool(true), Null]');
    expect(rustDebugValue({ b: 1, a: 1.5 })).toBe('Object {"a": Number(1.5), "b": Number(1)}');
  });
});
