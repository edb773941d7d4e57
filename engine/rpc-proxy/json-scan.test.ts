import { describe, expect, it } from 'vitest';

import { arrayItems, member, objectMembers, replyKind, skipValue } from './json-scan.js';

const b = (s: string): Buffer => Buffer.from(s);
const text = (buf: Buffer, span: { start: number; end: number }): string => buf.subarray(span.start, span.end).toString();

describe('json-scan', () => {
  it('finds members of an object as raw bytes, u64 numbers untouched', () => {
    const buf = b(' {"jsonrpc":"2.0", "id" : 18446744073709551615,"params":[{"a":"}]\\"x"},[1,2]],"k\\u0041":null} ');
    const members = objectMembers(buf, 0, buf.length)!;
    expect(members.map((m) => m.key)).toEqual(['jsonrpc', 'id', 'params', 'kA']);
    expect(text(buf, member(members, 'id')!)).toBe('18446744073709551615');
    expect(text(buf, member(members, 'params')!)).toBe('[{"a":"}]\\"x"},[1,2]]');
    expect(text(buf, member(members, 'kA')!)).toBe('null');
  });

  it('keeps the last of repeated keys, as JSON.parse does', () => {
    const buf = b('{"id":1,"id":2}');
    expect(text(buf, member(objectMembers(buf, 0, buf.length)!, 'id')!)).toBe('2');
  });

  it('splits arrays into items', () => {
    const buf = b('[ {"a":[1,{"b":"]"}]}, 2 ,"s", [] ,{}]');
    expect(arrayItems(buf, 0, buf.length)!.map((s) => text(buf, s))).toEqual(['{"a":[1,{"b":"]"}]}', '2', '"s"', '[]', '{}']);
    expect(arrayItems(b('[]'), 0, 2)).toEqual([]);
  });

  it('answers null or -1 for what is not the expected shape, never reading out of bounds', () => {
    for (const bad of ['', '{', '{"a"}', '{"a":}', '{"a":1,}', '{"a":1}x', '[1,]', '[1', '"abc', '{"a":[1}', '[}']) {
      const buf = b(bad);
      expect(objectMembers(buf, 0, buf.length) === null || bad.startsWith('[')).toBe(true);
      if (bad.startsWith('[')) expect(arrayItems(buf, 0, buf.length)).toBeNull();
    }
    expect(skipValue(b('[[[['), 0, 4)).toBe(-1);
    expect(skipValue(b('"a\nb"'), 0, 5)).toBe(-1);
  });

  it('walks deep nesting without recursion', () => {
    const deep = b('['.repeat(200_000) + ']'.repeat(200_000));
    expect(skipValue(deep, 0, deep.length)).toBe(deep.length);
  });

  it('tells a result reply from an error reply from the first members', () => {
    expect(replyKind(b('{"jsonrpc":"2.0","result":{"huge":1},"id":1}'))).toBe('result');
    expect(replyKind(b('{"id":1,"jsonrpc":"2.0","error":{"code":-32602,"message":"x"}}'))).toBe('error');
    expect(replyKind(b('[{"jsonrpc":"2.0","result":1,"id":1}]'))).toBeNull();
    expect(replyKind(b('Too many requests'))).toBeNull();
    expect(replyKind(b('{"id":1}'))).toBeNull();
  });
});
