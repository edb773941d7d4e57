import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { loadShredstreamProto, protoDir } from './proto.js';

describe('loadShredstreamProto', () => {
  it('finds the package proto/ directory', () => {
    expect(existsSync(join(protoDir(), 'shredstream.proto'))).toBe(true);
    expect(existsSync(join(protoDir(), 'shared.proto'))).toBe(true);
  });

  it('gives both ShredStream services with the upstream method paths', () => {
    const proto = loadShredstreamProto();
    expect(proto.ShredstreamProxy.service['SubscribeEntries']).toMatchObject({
      path: '/shredstream.ShredstreamProxy/SubscribeEntries',
      requestStream: false,
      responseStream: true,
    });
    expect(proto.Shredstream.service['SendHeartbeat']?.path).toBe('/shredstream.Shredstream/SendHeartbeat');
    expect(loadShredstreamProto()).toBe(proto);
  });

  it('keeps proto field names and u64 as strings by default, and accepts overrides', () => {
    const entry = loadShredstreamProto().ShredstreamProxy.service['SubscribeEntries']!;
    const bytes = Buffer.from([0x08, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10]); // slot 2^53 + 1
    expect(entry.responseDeserialize(bytes)).toMatchObject({ slot: '9007199254740993' });
    const hb = loadShredstreamProto({ keepCase: false }).Shredstream.service['SendHeartbeat']!;
    expect(hb.responseDeserialize(Buffer.from([0x08, 0x88, 0x27]))).toEqual({ ttlMs: 5000 });
  });
});
