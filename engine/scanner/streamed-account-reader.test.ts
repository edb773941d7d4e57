import { describe, expect, it } from 'vitest';

import type { AccountData, AccountFetcherStats, AccountReader } from '../rpc/index.js';
import { GeyserAccountStream } from './geyser-stream.js';
import { StreamedAccountReader } from './streamed-account-reader.js';

const A = '11111111111111111111111111111112';
const B = 'SysvarC1ock11111111111111111111111111111111';

function account(byte: number, slot: bigint): AccountData {
  return { data: new Uint8Array([byte]), owner: A, lamports: 1n, executable: false, slot };
}

class CountingReader implements AccountReader {
  readonly stats: AccountFetcherStats = { calls: 0, keys: 0, coalesced: 0, refused: 0, failedCalls: 0 };
  readonly queued = 0;
  readonly outstanding = 0;
  fetch(): Promise<AccountData | null> {
    this.stats.calls++;
    return Promise.resolve(account(9, 5n));
  }
}

function stream(): GeyserAccountStream {
  return new GeyserAccountStream({ endpoint: '127.0.0.1:1', accounts: [A], readAccounts: () => Promise.reject(new Error('unused')) });
}

describe('StreamedAccountReader', () => {
  it('answers a held account from the stream, with its write slot, and no RPC call', async () => {
    const s = stream();
    const rpc = new CountingReader();
    s.apply({ address: A, account: account(1, 7n), slot: 7n, writeVersion: 3n, source: 'stream' });
    const reader = new StreamedAccountReader(s, rpc, [A]);
    const read = await reader.fetch(A);
    expect(read?.data).toEqual(new Uint8Array([1]));
    expect(read?.slot).toBe(7n);
    expect(rpc.stats.calls).toBe(0);
    expect(reader.streamed).toBe(1);
  });

  it('reads an account the stream does not hold over RPC once, then holds it', async () => {
    const s = stream();
    const rpc = new CountingReader();
    const reader = new StreamedAccountReader(s, rpc, [A]);
    expect((await reader.fetch(B))?.data).toEqual(new Uint8Array([9]));
    expect((await reader.fetch(B))?.data).toEqual(new Uint8Array([9]));
    expect(rpc.stats.calls).toBe(1);
    // A stream write of the RPC read's slot is older than the read (the read is the slot's last state).
    expect(s.apply({ address: B, account: account(2, 5n), slot: 5n, writeVersion: 10n, source: 'stream' })).toBe(false);
    expect(s.apply({ address: B, account: account(3, 6n), slot: 6n, writeVersion: 1n, source: 'stream' })).toBe(true);
    expect((await reader.fetch(B))?.data).toEqual(new Uint8Array([3]));
  });

  it('holds an account that does not exist: read once, and its creation on the stream replaces it', async () => {
    const s = stream();
    const rpc = new CountingReader();
    rpc.fetch = () => {
      rpc.stats.calls++;
      return Promise.resolve(null);
    };
    const reader = new StreamedAccountReader(s, rpc, [A]);
    expect(await reader.fetch(B)).toBeNull();
    expect(await reader.fetch(B)).toBeNull();
    expect(rpc.stats.calls).toBe(1);
    expect(reader.misses).toBe(1);
    expect(s.apply({ address: B, account: account(4, 2n), slot: 2n, writeVersion: 1n, source: 'stream' })).toBe(true);
    expect((await reader.fetch(B))?.data).toEqual(new Uint8Array([4]));
  });

  it('reads ahead what it does not hold in one call, and a fetch meanwhile waits for that read', async () => {
    const s = stream();
    const rpc = new CountingReader();
    let answer: (() => void) | undefined;
    const calls: string[][] = [];
    const reader = new StreamedAccountReader(s, rpc, [A], (addresses) => {
      calls.push([...addresses]);
      return new Promise((resolve) => {
        answer = () => resolve({ slot: 8n, accounts: [account(5, 8n), null] });
      });
    });
    s.apply({ address: A, account: account(1, 7n), slot: 7n, writeVersion: 3n, source: 'stream' });
    const C = 'SysvarRent111111111111111111111111111111111';
    const ahead = reader.prefetch([A, B, C]);
    expect(calls).toEqual([[B, C]]);
    expect(reader.following).toBe(3);
    const fetched = reader.fetch(B);
    answer!();
    await ahead;
    expect((await fetched)?.data).toEqual(new Uint8Array([5]));
    expect(await reader.fetch(C)).toBeNull();
    expect(rpc.stats.calls).toBe(0);
    expect(reader.misses).toBe(0);
    expect(reader.ahead).toEqual({ accounts: 2, calls: 1, failedCalls: 0 });
  });
});
