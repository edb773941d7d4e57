import { describe, expect, it } from 'vitest';

import { decodeGeyserUpdate, encodeAccountUpdate, type AccountUpdateFields } from './geyser-codec.js';
import { loadGeyserProto } from './proto.js';

const subscribe = loadGeyserProto().Geyser.service['Subscribe']!;

function fields(over: Partial<AccountUpdateFields> = {}): AccountUpdateFields {
  return {
    filters: ['tidepool', 'vaults'],
    slot: (1n << 60n) + 7n,
    pubkey: new Uint8Array(32).fill(1),
    lamports: (1n << 64n) - 1n,
    owner: new Uint8Array(32).fill(2),
    executable: false,
    rentEpoch: 18_446_744_073_709_551_615n,
    data: Uint8Array.from({ length: 10_240 }, (_, i) => i & 0xff),
    writeVersion: (1n << 53n) + 1n,
    txnSignature: new Uint8Array(64).fill(3),
    createdAtMs: 1_764_000_000_123,
    ...over,
  };
}

/** The update as proto-loader's serializer writes it (the client's peer before geyser-codec.ts). */
function viaLoader(f: AccountUpdateFields): Buffer {
  return subscribe.responseSerialize({
    filters: f.filters,
    account: {
      slot: f.slot.toString(),
      is_startup: false,
      account: {
        pubkey: Buffer.from(f.pubkey),
        lamports: f.lamports.toString(),
        owner: Buffer.from(f.owner),
        executable: f.executable,
        rent_epoch: f.rentEpoch.toString(),
        data: Buffer.from(f.data),
        write_version: f.writeVersion.toString(),
        ...(f.txnSignature !== undefined ? { txn_signature: Buffer.from(f.txnSignature) } : {}),
      },
    },
    created_at: { seconds: String(Math.floor(f.createdAtMs / 1000)), nanos: (f.createdAtMs % 1000) * 1_000_000 },
  });
}

describe('encodeAccountUpdate', () => {
  it('writes what proto-loader reads back field for field, u64s above 2^53 exact', () => {
    const f = fields();
    const read = subscribe.responseDeserialize(encodeAccountUpdate(f)) as Record<string, unknown>;
    expect(read['update_oneof']).toBe('account');
    expect(read).toMatchObject({
      filters: ['tidepool', 'vaults'],
      account: {
        slot: f.slot.toString(),
        is_startup: false,
        account: {
          pubkey: Buffer.from(f.pubkey),
          lamports: '18446744073709551615',
          owner: Buffer.from(f.owner),
          executable: false,
          rent_epoch: '18446744073709551615',
          data: Buffer.from(f.data),
          write_version: f.writeVersion.toString(),
          txn_signature: Buffer.from(f.txnSignature!),
        },
      },
      created_at: { seconds: '1764000000', nanos: 123_000_000 },
    });
  });

  it('gives the same bytes as proto-loader for the same update', () => {
    expect(encodeAccountUpdate(fields()).equals(viaLoader(fields()))).toBe(true);
    const direct = fields({ txnSignature: undefined });
    expect(encodeAccountUpdate(direct).equals(viaLoader(direct))).toBe(true);
  });

  it('leaves txn_signature out for a direct write', () => {
    const read = subscribe.responseDeserialize(encodeAccountUpdate(fields({ txnSignature: undefined }))) as { account: { account: Record<string, unknown> } };
    expect(read.account.account['txn_signature'] ?? null).toBeNull();
  });
});

describe('decodeGeyserUpdate', () => {
  it('reads an account update as proto-loader wrote it, u64s as bigints and bytes as views', () => {
    const f = fields();
    const bytes = viaLoader(f);
    const u = decodeGeyserUpdate(bytes);
    expect(u).toEqual({
      kind: 'account',
      slot: f.slot,
      pubkey: f.pubkey,
      lamports: f.lamports,
      owner: f.owner,
      executable: false,
      data: f.data,
      writeVersion: f.writeVersion,
      txnSignature: f.txnSignature,
    });
    if (u.kind !== 'account') throw new Error('not an account update');
    // A view of the message's bytes, as a plain Uint8Array (slice copies, as callers expect).
    expect(u.data.buffer).toBe(bytes.buffer);
    expect(Buffer.isBuffer(u.data)).toBe(false);
  });

  it('has no signature for a direct write, and empty data for a deleted account', () => {
    const u = decodeGeyserUpdate(viaLoader(fields({ txnSignature: undefined, data: new Uint8Array(0), lamports: 0n })));
    expect(u).toMatchObject({ kind: 'account', txnSignature: undefined, lamports: 0n });
    if (u.kind === 'account') expect(u.data.length).toBe(0);
  });

  it('reads slot updates with and without a parent, pongs and pings', () => {
    const slot = subscribe.responseSerialize({ filters: ['slots'], slot: { slot: '9007199254740993', parent: '9007199254740992', status: 'SLOT_PROCESSED' } });
    expect(decodeGeyserUpdate(slot)).toEqual({ kind: 'slot', slot: 9_007_199_254_740_993n, parent: 9_007_199_254_740_992n });
    const first = subscribe.responseSerialize({ filters: ['slots'], slot: { slot: '5', status: 'SLOT_PROCESSED' } });
    expect(decodeGeyserUpdate(first)).toEqual({ kind: 'slot', slot: 5n, parent: undefined });
    expect(decodeGeyserUpdate(subscribe.responseSerialize({ filters: [], pong: { id: 42 } }))).toEqual({ kind: 'pong', id: 42 });
    expect(decodeGeyserUpdate(subscribe.responseSerialize({ filters: [], ping: {} }))).toEqual({ kind: 'ping' });
    expect(decodeGeyserUpdate(subscribe.responseSerialize({ filters: [] }))).toEqual({ kind: 'other' });
  });

  it('refuses malformed bytes with an error', () => {
    const bytes = encodeAccountUpdate(fields());
    expect(() => decodeGeyserUpdate(bytes.subarray(0, bytes.length - 100))).toThrow();
    expect(() => decodeGeyserUpdate(Buffer.from([0x12, 0xff, 0xff, 0xff, 0xff, 0x0f]))).toThrow();
  });
});
