import { describe, expect, it } from 'vitest';
import { Prng } from '../prng.js';
import { ErrorCode } from '../errors.js';
import { ByteRingReader, ByteRingWriter, byteRingStats, createByteRing, maxPayloadFor } from './byte-ring.js';
import { RECORD_HEADER_BYTES } from './ring-layout.js';

function ring(capacity: number): { w: ByteRingWriter; r: ByteRingReader; sab: SharedArrayBuffer } {
  const sab = createByteRing(capacity);
  return { w: new ByteRingWriter(sab), r: new ByteRingReader(sab), sab };
}

function bytesOf(...values: number[]): Uint8Array {
  return Uint8Array.from(values);
}

function recordSize(length: number): number {
  return RECORD_HEADER_BYTES + Math.ceil(length / 8) * 8;
}

describe('ByteRing', () => {
  it('rejects capacities that are not powers of two in range, and buffers that are not rings', () => {
    expect(() => createByteRing(1000)).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'capacity', value: 1000 } }));
    expect(() => createByteRing(32)).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'capacity', value: 32 } }));
    expect(() => new ByteRingReader(new SharedArrayBuffer(256))).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'sab', value: 256 } }));
  });

  it('hands back the exact bytes, slot and receivedAt of each record, in order', () => {
    const { w, r, sab } = ring(1024);
    expect(w.tryWrite(7, 1234.5, bytesOf(1, 2, 3))).toBe(true);
    expect(w.tryWrite(8, 99, new Uint8Array(0))).toBe(true);
    expect(w.tryWrite(9, -1, bytesOf(255, 0, 255, 0, 255, 0, 255, 0, 9))).toBe(true);
    let rec = r.tryRead()!;
    expect([rec.slot, rec.receivedAt, [...rec.payload]]).toEqual([7, 1234.5, [1, 2, 3]]);
    rec = r.tryRead()!;
    expect([rec.slot, rec.receivedAt, rec.payload.length]).toEqual([8, 99, 0]);
    rec = r.tryRead()!;
    expect([rec.slot, rec.receivedAt, [...rec.payload]]).toEqual([9, -1, [255, 0, 255, 0, 255, 0, 255, 0, 9]]);
    expect(r.tryRead()).toBeNull(); // releases the last one
    expect(byteRingStats(sab)).toMatchObject({
      written: 3,
      read: 3,
      dropped: 0,
      usedBytes: 0,
    });
  });

  it('carries the slot as an exact u64', () => {
    const { w, r } = ring(1024);
    const slots = [0n, 1n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 53n - 1n, 2n ** 53n + 1n, 2n ** 63n + 12345n, 2n ** 64n - 1n];
    for (const s of slots) expect(w.tryWrite(s, 0, bytesOf(1))).toBe(true);
    expect(w.tryWrite(Number.MAX_SAFE_INTEGER, 0, bytesOf(1))).toBe(true);
    expect(w.tryWrite(4294967296 + 5, 0, bytesOf(1))).toBe(true);
    for (const s of slots) {
      const rec = r.tryRead()!;
      expect(rec.slotBigInt()).toBe(s);
      if (s <= 2n ** 53n) expect(rec.slot).toBe(Number(s));
    }
    expect(r.tryRead()!.slot).toBe(Number.MAX_SAFE_INTEGER);
    expect(r.tryRead()!.slotBigInt()).toBe(4294967301n);
    for (const bad of [-1, 1.5, 2 ** 53, Number.NaN, -1n, 2n ** 64n]) {
      expect(() => w.tryWrite(bad, 0, bytesOf(1))).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'slot', value: typeof bad === 'bigint' ? bad.toString() : bad } }));
    }
  });

  it('returns false when full, counts the drop, and accepts again once the reader releases', () => {
    const { w, r, sab } = ring(256);
    const payload = new Uint8Array(40).fill(3); // 64-byte records: 4 fill the ring
    for (let i = 0; i < 4; i++) expect(w.tryWrite(i, 0, payload)).toBe(true);
    expect(w.fits(40)).toBe(false);
    expect(w.tryWrite(4, 0, payload)).toBe(false);
    expect(w.tryWrite(5, 0, bytesOf(1))).toBe(false);
    expect(byteRingStats(sab)).toMatchObject({ written: 4, dropped: 2, droppedBytes: 41, oversize: 0, usedBytes: 256 });
    const rec = r.tryRead()!;
    expect(rec.slot).toBe(0);
    expect(w.tryWrite(6, 0, payload)).toBe(false); // still held: the view is valid until release
    r.release();
    expect(w.tryWrite(6, 0, payload)).toBe(true);
    const slots: number[] = [];
    for (let rec2 = r.tryRead(); rec2 !== null; rec2 = r.tryRead()) slots.push(rec2.slot);
    expect(slots).toEqual([1, 2, 3, 6]);
  });

  it('refuses and counts records larger than half the ring, which could never fit', () => {
    const { w, sab } = ring(256);
    expect(w.maxPayloadBytes).toBe(maxPayloadFor(256));
    expect(w.tryWrite(1, 0, new Uint8Array(w.maxPayloadBytes))).toBe(true);
    expect(w.tryWrite(1, 0, new Uint8Array(w.maxPayloadBytes + 1))).toBe(false);
    expect(byteRingStats(sab)).toMatchObject({ dropped: 1, oversize: 1, droppedBytes: w.maxPayloadBytes + 1 });
  });

  it('wraps a record that does not fit before the end to offset 0 behind a skip marker', () => {
    const { w, r, sab } = ring(256);
    const a = new Uint8Array(72).map((_, i) => i); // 96-byte records
    expect(w.tryWrite(1, 0, a)).toBe(true);
    expect(w.tryWrite(2, 0, a)).toBe(true);
    expect(r.tryRead()!.slot).toBe(1);
    expect(r.tryRead()!.slot).toBe(2);
    r.release();
    // head at 192: 64 bytes to the end, so the next 96-byte record goes to 0 after a skip.
    const b = new Uint8Array(70).map((_, i) => 255 - i);
    expect(w.tryWrite(3, 0, b)).toBe(true);
    expect(byteRingStats(sab).usedBytes).toBe(64 + 96);
    const rec = r.tryRead()!;
    expect(rec.slot).toBe(3);
    expect([...rec.payload]).toEqual([...b]);
    expect(rec.payload.byteOffset - 128).toBe(RECORD_HEADER_BYTES); // contiguous at data offset 0
    r.release();
    expect(byteRingStats(sab).usedBytes).toBe(0);
  });

  it('needs room for the skip too: refuses a wrapping record that fits only by splitting', () => {
    const { w, r } = ring(256);
    const a = new Uint8Array(72);
    w.tryWrite(1, 0, a); // [0, 96)
    w.tryWrite(2, 0, a); // [96, 192)
    r.tryRead();
    r.release(); // free: [0, 96) and [192, 256) = 160 bytes, but 64 contiguous at the end
    expect(w.tryWrite(3, 0, new Uint8Array(80))).toBe(false); // 104 bytes + 64 skip > 160 free
    expect(w.tryWrite(3, 0, new Uint8Array(72))).toBe(true); // 96 + 64 = 160
    expect(r.tryRead()!.slot).toBe(2);
    expect(r.tryRead()!.slot).toBe(3);
  });

  it('read(into) copies into the caller buffer and releases at once', () => {
    const { w, r, sab } = ring(256);
    w.tryWrite(5, 1.25, bytesOf(9, 8, 7, 6, 5));
    w.tryWrite(6, 0, new Uint8Array(16));
    const into = new Uint8Array(8);
    expect(r.read(into)).toBe(5);
    expect([...into.subarray(0, 5)]).toEqual([9, 8, 7, 6, 5]);
    expect([r.record.slot, r.record.receivedAt]).toEqual([5, 1.25]);
    expect(byteRingStats(sab).read).toBe(1);
    expect(() => r.read(into)).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'into', value: 8 } }));
    expect(byteRingStats(sab).read).toBe(1);
    expect(r.read(new Uint8Array(16))).toBe(16);
    expect(r.read(into)).toBe(-1);
  });

  it('matches a FIFO model over many records of random sizes and random interleavings', () => {
    const prng = new Prng(42);
    const { w, r, sab } = ring(4096);
    const model: { slot: number; at: number; bytes: Uint8Array }[] = [];
    let next = 0;
    let accepted = 0;
    let refused = 0;
    for (let step = 0; step < 60_000; step++) {
      if (prng.chance(0.55)) {
        const length = prng.chance(0.05) ? prng.range(1000, w.maxPayloadBytes) : prng.range(0, 300);
        const bytes = prng.bytes(length);
        const used = byteRingStats(sab).usedBytes;
        const ok = w.tryWrite(next, next * 0.5, bytes);
        if (ok) {
          model.push({ slot: next, at: next * 0.5, bytes });
          accepted++;
        } else {
          // Refused only when it does not fit: an empty ring accepts anything up to maxPayloadBytes.
          expect(model.length).toBeGreaterThan(0);
          expect(4096 - used).toBeLessThan(recordSize(length) * 2);
          refused++;
        }
        next++;
      } else {
        const rec = r.tryRead();
        const want = model.shift();
        if (want === undefined) {
          expect(rec).toBeNull();
          continue;
        }
        expect(rec).not.toBeNull();
        expect(rec!.slot).toBe(want.slot);
        expect(rec!.receivedAt).toBe(want.at);
        expect(Buffer.compare(rec!.payload, want.bytes)).toBe(0);
        r.release();
      }
    }
    expect(refused).toBeGreaterThan(0);
    expect(byteRingStats(sab)).toMatchObject({ written: accepted, dropped: refused });
  });

  it('waitForData reports data already there, times out on an empty ring, and wakes on close', () => {
    const { w, r } = ring(256);
    expect(r.waitForData(1)).toBe(false);
    w.tryWrite(1, 0, bytesOf(1));
    expect(r.waitForData(1_000)).toBe(true);
    expect(r.tryRead()!.slot).toBe(1);
    expect(r.closed).toBe(false);
    w.close();
    expect(r.waitForData(60_000)).toBe(false); // returns at once: closed and drained
    expect(r.closed).toBe(true);
  });

  it('waitForDataAsync resolves when the producer writes', async () => {
    const { w, r } = ring(256);
    const waiting = r.waitForDataAsync(60_000);
    setTimeout(() => w.tryWrite(3, 0, bytesOf(3)), 5);
    expect(await waiting).toBe(true);
    expect(r.tryRead()!.slot).toBe(3);
  });
});
