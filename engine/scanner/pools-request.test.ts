import { describe, expect, it } from 'vitest';

import { MAX_JSON_DEPTH, jsonDepth, parsePoolsBody } from './pools-request.js';

const POOL = '11111111111111111111111111111111';

describe('the POST /config/pools body', () => {
  it('measures nesting without recursion, skipping brackets inside strings', () => {
    expect(jsonDepth('{"pools":["a"]}')).toBe(2);
    expect(jsonDepth('{"pools":["[[[[[[", "\\"[[["]}')).toBe(2);
    expect(jsonDepth('['.repeat(1_000_000) + ']'.repeat(1_000_000))).toBe(MAX_JSON_DEPTH + 1);
  });

  it('takes {"pools": [...]} or a bare array of strings', () => {
    expect(parsePoolsBody(JSON.stringify({ pools: [POOL] }))).toEqual([POOL]);
    expect(parsePoolsBody(JSON.stringify([POOL]))).toEqual([POOL]);
  });

  it('refuses an empty list, deep nesting, non-strings and non-JSON, naming the problem', () => {
    expect(() => parsePoolsBody('{"pools":[]}')).toThrow(/empty/);
    expect(() => parsePoolsBody(`[${'['.repeat(50)}${']'.repeat(50)}]`)).toThrow(/nests deeper than 4/);
    expect(() => parsePoolsBody(JSON.stringify({ pools: [POOL, 7, null, {}] }))).toThrow(/pools\[1\] is a number.*pools\[2\] is null.*pools\[3\] is an object/);
    expect(() => parsePoolsBody(JSON.stringify({ pools: Array.from({ length: 25 }, () => 1) }))).toThrow(/and 15 more/);
    expect(() => parsePoolsBody('{"pools":')).toThrow(/not JSON/);
    expect(() => parsePoolsBody('{"pool":["x"]}')).toThrow(/must be \{"pools"/);
  });
});
