import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';

import { ErrorCode } from '../../errors.js';
import { encodeEntryMessage } from './entry-message.js';

const PROTO_DIR = join(dirname(fileURLToPath(import.meta.url)), '../../../proto');
const root = new protobuf.Root();
root.resolvePath = (_origin, target) => join(PROTO_DIR, target);
root.loadSync('shredstream.proto');
const Entry = root.lookupType('shredstream.Entry');

function decode(bytes: Uint8Array): { slot: string; entries: Uint8Array } {
  const obj = Entry.toObject(Entry.decode(bytes), { longs: String, defaults: true });
  return obj as { slot: string; entries: Uint8Array };
}

describe('encodeEntryMessage', () => {
  it.each([1n, 127n, 128n, 300_000_000n, 2n ** 53n - 1n, 2n ** 53n + 1n, 2n ** 63n, 2n ** 64n - 1n])(
    'encodes slot %s as protobufjs decodes it',
    (slot) => {
      const entries = new Uint8Array([1, 2, 3, 4, 5]);
      const m = decode(encodeEntryMessage(slot, entries));
      expect(m.slot).toBe(slot.toString());
      expect([...m.entries]).toEqual([1, 2, 3, 4, 5]);
    },
  );

  it('matches the bytes protobufjs writes', () => {
    const entries = new Uint8Array(300).map((_, i) => i & 0xff);
    const ours = encodeEntryMessage(123_456_789n, entries);
    const theirs = Entry.encode(Entry.fromObject({ slot: '123456789', entries })).finish();
    expect(Buffer.compare(ours, Buffer.from(theirs))).toBe(0);
  });

  it('omits default fields as proto3 encoders do', () => {
    expect(encodeEntryMessage(0n, new Uint8Array()).length).toBe(0);
    expect(decode(encodeEntryMessage(0n, new Uint8Array([9]))).slot).toBe('0');
  });

  it('rejects a slot outside u64', () => {
    expect(() => encodeEntryMessage(-1n, new Uint8Array())).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'slot', value: '-1' } }));
    expect(() => encodeEntryMessage(2n ** 64n, new Uint8Array())).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'slot', value: '18446744073709551616' } }));
  });
});
