import { describe, expect, it } from 'vitest';
import * as base58 from '../chain/base58.js';
import { isTpError } from '../errors.js';
import { Prng } from '../prng.js';
import { createLookupDirectory, LookupDirectory, LookupDirectoryReader } from './lookup-directory.js';
import { LD_NO_BLOCK, LD_NO_POOL } from './lookup-layout.js';

const prng = new Prng(11);
const address = (): string => base58.encode(prng.bytes(32));
const pools = Array.from({ length: 8 }, address);
const bytesOf = (a: string): Uint8Array => base58.decodePubkey(a);

function open(capacity: number, mapBlocks?: number): { dir: LookupDirectory; reader: LookupDirectoryReader } {
  const sab = createLookupDirectory({ capacity, mapBlocks });
  const dir = new LookupDirectory(sab);
  dir.setKeys(pools, 2);
  return { dir, reader: new LookupDirectoryReader(sab) };
}

/** What a reader sees of a table: its known length and its pool id per index (-1 = none), or null. */
function view(reader: LookupDirectoryReader, table: string): { length: number; pools: number[] } | null {
  const v = reader.begin();
  expect(v).toBeGreaterThanOrEqual(0);
  const rec = reader.find(bytesOf(table), 0);
  if (rec < 0) return null;
  const length = reader.knownLength(rec);
  const block = reader.block(rec);
  const ids: number[] = [];
  for (let i = 0; i < length; i++) {
    const id = block === LD_NO_BLOCK ? LD_NO_POOL : reader.poolAt(block, i);
    ids.push(id === LD_NO_POOL ? -1 : id);
  }
  expect(reader.changedSince(v)).toBe(false);
  return { length, pools: ids };
}

describe('LookupDirectory', () => {
  it('gives readers each table length and the pool id at every index, found from payload bytes', () => {
    const { dir, reader } = open(64);
    const t1 = address();
    const t2 = address();
    const other = address();
    dir.put(t1, [other, pools[3]!, other, pools[0]!]);
    dir.put(t2, [other, other]); // no monitored address: stored without a map
    expect(view(reader, t1)).toEqual({ length: 4, pools: [-1, 3, -1, 0] });
    expect(view(reader, t2)).toEqual({ length: 2, pools: [-1, -1] });
    expect(reader.block(reader.find(bytesOf(t2), 0))).toBe(LD_NO_BLOCK);
    expect(view(reader, address())).toBeNull();
    // Found at any offset of a payload.
    const payload = new Uint8Array(100);
    payload.set(bytesOf(t1), 50);
    expect(reader.find(payload, 50)).toBe(reader.find(bytesOf(t1), 0));
    expect(reader.find(payload, 80)).toBe(-1); // 32 bytes from 80 run past the end
    expect(reader.keysVersion()).toBe(2);
    expect(dir.stats).toMatchObject({ tables: 2, mapBlocksUsed: 1, writes: 2 });
    expect(dir.poolOf(pools[5]!)).toBe(5);
    expect(dir.poolOf(other)).toBe(-1);
  });

  it('rewrites a table in place (longer after an extension, map dropped when no pool is left)', () => {
    const { dir, reader } = open(8);
    const t = address();
    dir.put(t, [pools[1]!]);
    const before = reader.find(bytesOf(t), 0);
    dir.put(t, [pools[1]!, address(), pools[2]!]);
    expect(reader.find(bytesOf(t), 0)).toBe(before);
    expect(view(reader, t)).toEqual({ length: 3, pools: [1, -1, 2] });
    dir.put(t, [address()]);
    expect(view(reader, t)).toEqual({ length: 1, pools: [-1] });
    expect(dir.stats.mapBlocksUsed).toBe(0);
    expect(dir.knownLength(t)).toBe(1);
    expect(dir.remove(t)).toBe(true);
    expect(dir.remove(t)).toBe(false);
    expect(view(reader, t)).toBeNull();
    expect(dir.size).toBe(0);
  });

  it('moves the version through odd and back to even on every write, which voids overlapping reads', () => {
    const { dir, reader } = open(8);
    const v = reader.begin();
    dir.put(address(), [pools[0]!]);
    expect(reader.changedSince(v)).toBe(true);
    const w = reader.begin();
    expect(w).toBe(v + 2);
    // A rebuild reads its tables before the write starts, then writes everything at once.
    let seenDuringSource = -2;
    dir.setTableSource(() => {
      seenDuringSource = reader.begin();
      return [pools[0]!];
    });
    dir.setKeys(pools, 4);
    expect(seenDuringSource).toBe(w);
    expect(reader.begin()).toBe(w + 2);
  });

  it('evicts the table written longest ago when full, and keeps every other table findable', () => {
    const { dir, reader } = open(16);
    const tables = Array.from({ length: 40 }, address);
    for (const t of tables) dir.put(t, [address()]);
    expect(dir.size).toBe(16);
    expect(dir.stats.evictions).toBe(24);
    tables.forEach((t, i) => expect(view(reader, t) !== null).toBe(i >= 24));
    // Writing a table again moves it to the back of the order.
    dir.put(tables[24]!, [address(), address()]);
    dir.put(address(), []);
    expect(view(reader, tables[24]!)).toEqual({ length: 2, pools: [-1, -1] });
    expect(view(reader, tables[25]!)).toBeNull();
  });

  it('evicts the oldest table holding a map when the map blocks run out', () => {
    const { dir, reader } = open(16, 2);
    const plain = address();
    const a = address();
    const b = address();
    const c = address();
    dir.put(a, [pools[0]!]);
    dir.put(plain, [address()]);
    dir.put(b, [pools[1]!]);
    dir.put(c, [pools[2]!]);
    expect(dir.stats.blockEvictions).toBe(1);
    expect(view(reader, a)).toBeNull();
    expect(view(reader, plain)).not.toBeNull(); // older, but holds no map
    expect(view(reader, b)).toEqual({ length: 1, pools: [1] });
    expect(view(reader, c)).toEqual({ length: 1, pools: [2] });
  });

  it('stays correct under random puts and removes (backward-shift deletion)', () => {
    const { dir, reader } = open(64, 64);
    const model = new Map<string, number>();
    const live: string[] = [];
    const r = new Prng(3);
    for (let step = 0; step < 5_000; step++) {
      if (live.length > 0 && r.chance(0.45)) {
        const t = live.splice(r.int(live.length), 1)[0]!;
        dir.remove(t);
        model.delete(t);
      } else if (live.length < 60) {
        const t = address();
        const length = r.range(0, 256);
        dir.put(t, Array.from({ length }, (_, i) => (i === 7 ? pools[4]! : `1${'1'.repeat(31)}`)));
        model.set(t, length);
        live.push(t);
      }
    }
    for (const [t, length] of model) {
      const seen = view(reader, t)!;
      expect(seen.length).toBe(length);
      if (length > 7) expect(seen.pools[7]).toBe(4);
    }
    expect(dir.size).toBe(model.size);
    expect(dir.stats.evictions + dir.stats.blockEvictions).toBe(0);
  });

  it('rebuilds every map for new keys from its table source, dropping tables the source lost', () => {
    const { dir, reader } = open(16);
    const kept = address();
    const lost = address();
    const contents = new Map([[kept, [pools[2]!, pools[6]!]]]);
    dir.put(kept, contents.get(kept)!);
    dir.put(lost, [pools[2]!]);
    dir.setTableSource((a) => contents.get(a));
    dir.setKeys([pools[6]!, pools[2]!], 10);
    expect(reader.keysVersion()).toBe(10);
    expect(view(reader, kept)).toEqual({ length: 2, pools: [1, 0] });
    expect(view(reader, lost)).toBeNull();
    expect(dir.stats).toMatchObject({ rebuilds: 2, rebuildDrops: 1, tables: 1 });
    dir.setTableSource(null);
    dir.setKeys(pools, 12);
    expect(dir.size).toBe(0);
  });

  it('refuses bad sizes and bad tables with TpErrors, and keys a directory cannot number', () => {
    const code = (f: () => unknown): string | undefined => {
      try {
        f();
      } catch (e) {
        return isTpError(e) ? e.code : 'not a TpError';
      }
      return undefined;
    };
    expect(code(() => createLookupDirectory({ capacity: 0 }))).toBe('TP_ERR_CONFIG_INVALID');
    expect(code(() => createLookupDirectory({ capacity: 8, mapBlocks: 9 }))).toBe('TP_ERR_CONFIG_INVALID');
    const { dir } = open(4);
    expect(code(() => dir.put('not base58 0OIl', []))).toBe('TP_ERR_BASE58_INVALID');
    expect(code(() => dir.put(address(), new Array<string>(257).fill(pools[0]!)))).toBe('TP_ERR_ACCOUNT_INVALID');
    expect(code(() => dir.setKeys(new Array<string>(65_536).fill(pools[0]!), 3))).toBe('TP_ERR_CONFIG_INVALID');
    expect(dir.size).toBe(0);
    expect(code(() => new LookupDirectory(new SharedArrayBuffer(64)))).toBe('TP_ERR_INTERNAL');
  });
});
