import { describe, expect, it } from 'vitest';

import { loadGeyserProto } from './proto.js';

describe('loadGeyserProto', () => {
  it('gives Yellowstone Subscribe as a bidirectional stream at the upstream path', () => {
    const proto = loadGeyserProto();
    expect(proto.Geyser.service['Subscribe']).toMatchObject({
      path: '/geyser.Geyser/Subscribe',
      requestStream: true,
      responseStream: true,
    });
    expect(loadGeyserProto()).toBe(proto);
  });

  it('reads an account update by the upstream field numbers', () => {
    const subscribe = loadGeyserProto().Geyser.service['Subscribe']!;
    // SubscribeUpdate{ account(2): SubscribeUpdateAccount{ account(1): Info{ pubkey(1)=[7], lamports(2)=5,
    // data(6)=[1,2], write_version(7)=9 }, slot(2)=42 } }, hand-encoded.
    const info = Buffer.from([0x0a, 0x01, 0x07, 0x10, 0x05, 0x32, 0x02, 0x01, 0x02, 0x38, 0x09]);
    const account = Buffer.concat([Buffer.from([0x0a, info.length]), info, Buffer.from([0x10, 42])]);
    const update = Buffer.concat([Buffer.from([0x12, account.length]), account]);
    const decoded = subscribe.responseDeserialize(update) as Record<string, unknown>;
    expect(decoded['update_oneof']).toBe('account');
    expect(decoded).toMatchObject({
      account: { slot: '42', account: { lamports: '5', write_version: '9', data: Buffer.from([1, 2]), pubkey: Buffer.from([7]) } },
    });
  });

  it('writes from_slot as field 11 and the account filter as field 1', () => {
    const subscribe = loadGeyserProto().Geyser.service['Subscribe']!;
    const bytes = subscribe.requestSerialize({ accounts: { pools: { account: ['A'], owner: [] } }, from_slot: '3' });
    // map entry: key "pools" (field 1) + value (field 2: account(2) = "A")
    expect([...bytes]).toEqual([0x0a, 0x0c, 0x0a, 0x05, ...Buffer.from('pools'), 0x12, 0x03, 0x12, 0x01, 0x41, 0x58, 0x03]);
  });
});
