import { describe, expect, it } from 'vitest';
import { encode as base58Encode } from '../chain/base58.js';
import { Prng } from '../prng.js';
import { ErrorCode } from '../errors.js';
import { createKeyTable, KeyTableReader, writeKeyTable } from './key-table.js';

const prng = new Prng(5);
const keys = Array.from({ length: 6 }, () => prng.bytes(32));

describe('KeyTable', () => {
  it('gives a reader the keys with pool id = table index, base58 or bytes alike', () => {
    const sab = createKeyTable(8);
    const version = writeKeyTable(sab, [keys[0]!, base58Encode(keys[1]!), keys[2]!]);
    const reader = new KeyTableReader(sab);
    expect(reader.version).toBe(version);
    const ids = keys.map((k) => reader.keys.idAt(k, 0));
    expect(ids.slice(3)).toEqual([-1, -1, -1]);
    expect(ids.slice(0, 3).map((id) => reader.poolOf[id]!)).toEqual([0, 1, 2]);
  });

  it('reloads only when the table changed, and a key listed twice keeps its first index', () => {
    const sab = createKeyTable(8);
    writeKeyTable(sab, [keys[0]!]);
    const reader = new KeyTableReader(sab);
    expect(reader.refresh()).toBe(false);
    writeKeyTable(sab, [keys[3]!, keys[4]!, keys[3]!]);
    expect(reader.refresh()).toBe(true);
    expect(reader.keys.idAt(keys[0]!, 0)).toBe(-1);
    expect(reader.poolOf[reader.keys.idAt(keys[3]!, 0)]).toBe(0);
    expect(reader.poolOf[reader.keys.idAt(keys[4]!, 0)]).toBe(1);
    expect(reader.keys.size).toBe(2);
    expect(reader.refresh()).toBe(false);
    expect(reader.reloads).toBe(2);
  });

  it('refuses more keys than the capacity, and malformed keys, without touching the table', () => {
    const sab = createKeyTable(2);
    const version = writeKeyTable(sab, [keys[0]!]);
    expect(() => writeKeyTable(sab, keys.slice(0, 3))).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'keys', value: 3 } }));
    expect(() => writeKeyTable(sab, [new Uint8Array(31)])).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'key', value: 31 } }));
    const reader = new KeyTableReader(sab);
    expect(reader.version).toBe(version);
    expect(reader.keys.size).toBe(1);
  });
});
