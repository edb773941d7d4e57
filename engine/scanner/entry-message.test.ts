import { describe, expect, it } from 'vitest';

import { isTpError } from '../errors.js';
import { encodeEntryMessage } from '../sim/stream/entry-message.js';
import { decodeEntryMessage } from './entry-message.js';

describe('decodeEntryMessage', () => {
  it('decodes slots exactly across the u64 range', () => {
    for (const slot of [0n, 1n, 127n, 128n, 300_000_000n, 2n ** 49n - 1n, 2n ** 49n, 2n ** 53n + 1n, 2n ** 64n - 1n]) {
      const decoded = decodeEntryMessage(encodeEntryMessage(slot, Uint8Array.of(1, 2, 3)));
      expect(decoded.slot).toBe(slot);
      expect([...decoded.entries]).toEqual([1, 2, 3]);
    }
  });

  it('returns entries as a view on the frame, not a copy', () => {
    const frame = encodeEntryMessage(42n, new Uint8Array(1000).fill(7));
    const { entries } = decodeEntryMessage(frame);
    expect(entries.buffer).toBe(frame.buffer);
    expect(entries.byteOffset).toBe(frame.byteOffset + frame.length - 1000);
    expect(entries.length).toBe(1000);
  });

  it('treats absent fields as proto3 defaults and skips unknown fields', () => {
    expect(decodeEntryMessage(new Uint8Array(0))).toEqual({ slot: 0n, entries: new Uint8Array(0) });
    // field 3 varint, field 4 bytes, field 5 fixed32, field 6 fixed64, then slot 5
    const frame = Uint8Array.of(0x18, 0x96, 0x01, 0x22, 0x02, 9, 9, 0x2d, 1, 2, 3, 4, 0x31, 1, 2, 3, 4, 5, 6, 7, 8, 0x08, 0x05);
    expect(decodeEntryMessage(frame).slot).toBe(5n);
  });

  it('rejects truncated and malformed frames with TP_ERR_ENTRY_MALFORMED', () => {
    const bad = [
      Uint8Array.of(0x08), // slot varint missing
      Uint8Array.of(0x08, 0x80), // varint cut
      Uint8Array.of(0x12, 0x05, 1, 2), // entries longer than the frame
      Uint8Array.of(0x0a, 0x00), // slot with wire type 2
      Uint8Array.of(0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02), // > u64
      Uint8Array.of(0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00), // 11 bytes
      Uint8Array.of(0x1b), // wire type 3 (groups)
      Uint8Array.of(0x00), // field 0
    ];
    for (const frame of bad) {
      let caught: unknown;
      try {
        decodeEntryMessage(frame);
      } catch (err) {
        caught = err;
      }
      expect(isTpError(caught, 'TP_ERR_ENTRY_MALFORMED'), `frame ${[...frame].join(',')}`).toBe(true);
    }
  });
});
