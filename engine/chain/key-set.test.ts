import { describe, expect, it } from 'vitest';

import { ErrorCode } from '../errors.js';
import * as base58 from './base58.js';
import { KeySet } from './key-set.js';
import { Prng } from '../prng.js';

function key(prng: Prng): Uint8Array {
  return prng.bytes(32);
}

describe('KeySet', () => {
  it('finds added keys by base58, by bytes and at an offset inside a payload', () => {
    const prng = new Prng(1);
    const set = new KeySet();
    const a = key(prng);
    const b = key(prng);
    const idA = set.add(base58.encode(a));
    const idB = set.add(b);
    expect(idA).not.toBe(idB);
    expect(set.size).toBe(2);
    expect(set.idOf(a)).toBe(idA);
    expect(set.idOf(base58.encode(b))).toBe(idB);
    const payload = new Uint8Array(200);
    payload.set(b, 77);
    expect(set.idAt(payload, 77)).toBe(idB);
    expect(set.idAt(payload, 76)).toBe(-1);
    expect(base58.encode(set.keyAt(idA)!)).toBe(base58.encode(a));
    expect(set.addressAt(idB)).toBe(base58.encode(b));
  });

  it('misses keys not in the set and ranges that do not fit', () => {
    const prng = new Prng(2);
    const set = new KeySet();
    for (let i = 0; i < 50; i++) set.add(key(prng));
    for (let i = 0; i < 1000; i++) expect(set.idAt(key(prng), 0)).toBe(-1);
    const k = key(prng);
    set.add(k);
    expect(set.idAt(k, 1)).toBe(-1);
    expect(set.idAt(k, -1)).toBe(-1);
    expect(set.idAt(k.subarray(0, 31), 0)).toBe(-1);
  });

  it('returns the same id when a key is added twice', () => {
    const set = new KeySet();
    const k = new Prng(3).bytes(32);
    expect(set.add(k)).toBe(set.add(base58.encode(k)));
    expect(set.size).toBe(1);
  });

  it('tells apart keys that share their first 8 bytes', () => {
    const set = new KeySet(8);
    const prng = new Prng(4);
    const prefix = prng.bytes(8);
    const keys: Uint8Array[] = [];
    for (let i = 0; i < 40; i++) {
      const k = prng.bytes(32);
      k.set(prefix);
      keys.push(k);
    }
    const ids = keys.map((k) => set.add(k));
    expect(new Set(ids).size).toBe(40);
    keys.forEach((k, i) => expect(set.idAt(k, 0)).toBe(ids[i]));
    const stranger = prng.bytes(32);
    stranger.set(prefix);
    expect(set.idAt(stranger, 0)).toBe(-1);
    // differs only in the last byte
    const last = keys[0]!.slice();
    last[31]! ^= 1;
    expect(set.idAt(last, 0)).toBe(-1);
  });

  it('deletes keys, keeps the others findable and reuses freed ids', () => {
    const prng = new Prng(5);
    const set = new KeySet(4);
    const prefix = prng.bytes(8);
    const keys = Array.from({ length: 300 }, (_, i) => {
      const k = prng.bytes(32);
      if (i % 3 === 0) k.set(prefix); // long probe clusters
      return k;
    });
    const ids = keys.map((k) => set.add(k));
    for (let i = 0; i < keys.length; i += 2) expect(set.delete(keys[i]!)).toBe(true);
    expect(set.delete(keys[0]!)).toBe(false);
    expect(set.size).toBe(150);
    keys.forEach((k, i) => expect(set.idAt(k, 0)).toBe(i % 2 === 0 ? -1 : ids[i]));
    expect(set.keyAt(ids[0]!)).toBeUndefined();
    const again = set.add(prng.bytes(32));
    expect(ids.filter((_, i) => i % 2 === 0)).toContain(again);
    expect(set.ids().length).toBe(151);
  });

  it('still finds a key after another key with the same first two bytes is deleted', () => {
    const prng = new Prng(7);
    const set = new KeySet();
    const a = prng.bytes(32);
    const b = prng.bytes(32);
    b[0] = a[0]!;
    b[1] = a[1]!;
    const idB = set.add(b);
    set.add(a);
    set.delete(a);
    expect(set.idAt(b, 0)).toBe(idB);
    set.delete(b);
    expect(set.idAt(b, 0)).toBe(-1);
    expect(set.size).toBe(0);
  });

  it('grows past its initial capacity', () => {
    const prng = new Prng(6);
    const set = new KeySet(2);
    const keys = Array.from({ length: 5000 }, () => prng.bytes(32));
    keys.forEach((k, i) => expect(set.add(k)).toBe(i));
    expect(set.size).toBe(5000);
    keys.forEach((k, i) => expect(set.idAt(k, 0)).toBe(i));
    set.clear();
    expect(set.size).toBe(0);
    expect(set.idAt(keys[0]!, 0)).toBe(-1);
  });

  it('rejects keys that are not 32 bytes', () => {
    const set = new KeySet();
    expect(() => set.add(new Uint8Array(31))).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'key', value: 31 } }));
    expect(() => set.add('1111')).toThrow(/32/);
  });
});
