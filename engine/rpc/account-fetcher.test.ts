import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { AccountFetcher } from './account-fetcher.js';
import { RpcClient } from './rpc-client.js';
import { ErrorCode } from '../errors.js';
import { isRpcFailure, type RpcFailure } from './rpc-errors.js';
import { dataAccount, startRpcFixture, testAddress, type RpcFixture } from '../scanner/testing/rpc-fixture.js';

/** Keys asked in each getMultipleAccounts POST the server answered. */
function keysPerCall(fx: RpcFixture): string[][] {
  return fx.posts.map((p) => (JSON.parse(p) as { params: [string[]] }).params[0]);
}

describe('AccountFetcher over the simulator JSON-RPC', () => {
  let fx: RpcFixture;
  let client: RpcClient;
  beforeEach(async () => {
    fx = await startRpcFixture();
    client = new RpcClient({ endpoints: [fx.httpUrl] });
  });
  afterEach(async () => {
    await fx.close();
  });

  it('batches N concurrent fetches into ceil(N / batchSize) calls, each account to its caller', async () => {
    const n = 23;
    const addrs = Array.from({ length: n }, (_, i) => testAddress(i));
    addrs.forEach((a, i) => fx.backend.setAccount(a, dataAccount(new Uint8Array([i]))));
    const fetcher = new AccountFetcher(client, { batchSize: 5 });
    const got = await Promise.all(addrs.map((a) => fetcher.fetch(a)));
    expect(got.map((g) => g!.data[0])).toEqual(addrs.map((_, i) => i));
    expect(fx.posts).toHaveLength(Math.ceil(n / 5));
    expect(keysPerCall(fx).flat().sort()).toEqual([...addrs].sort());
    expect(fetcher.stats.calls).toBe(5);
    expect(fetcher.outstanding).toBe(0);
  });

  it('sends a partial batch once the code that queued it is done, before the event loop turns', async () => {
    const sent: string[][] = [];
    const fetcher = new AccountFetcher({ getMultipleAccounts: (keys) => (sent.push([...keys]), client.getMultipleAccounts(keys)) });
    fx.backend.setAccount(testAddress(1), dataAccount(new Uint8Array([7])));
    let turned = false;
    setImmediate(() => (turned = true));
    const reads = [fetcher.fetch(testAddress(1)), fetcher.fetch(testAddress(2))];
    expect(sent).toEqual([]); // still coalescing: the synchronous run is not over
    await Promise.resolve();
    expect(sent).toEqual([[testAddress(1), testAddress(2)]]);
    expect(turned).toBe(false);
    const [a, b] = await Promise.all(reads);
    expect(a!.data[0]).toBe(7);
    expect(b).toBeNull();
  });

  it('flushes a partial batch after the max delay', async () => {
    const fetcher = new AccountFetcher(client, { batchSize: 100, maxDelayMs: 1 });
    fx.backend.setAccount(testAddress(1), dataAccount(new Uint8Array([7])));
    const [a, b] = await Promise.all([fetcher.fetch(testAddress(1)), fetcher.fetch(testAddress(2))]);
    expect(a!.data[0]).toBe(7);
    expect(b).toBeNull();
    expect(fx.posts).toHaveLength(1);
  });

  it('coalesces the same address, queued or in flight, into one key', async () => {
    const fetcher = new AccountFetcher(client);
    const a = testAddress(1);
    fx.backend.setAccount(a, dataAccount(new Uint8Array([1])));
    const p1 = fetcher.fetch(a);
    const p2 = fetcher.fetch(a);
    const p3 = fetcher.fetch(testAddress(2));
    await new Promise((r) => setImmediate(r)); // sent: p4 joins the request in flight
    const p4 = fetcher.fetch(a);
    const [r1, r2, r3, r4] = await Promise.all([p1, p2, p3, p4]);
    expect(r1).toBe(r2);
    expect(r4).toBe(r1);
    expect(r3).toBeNull();
    expect(keysPerCall(fx)).toEqual([[a, testAddress(2)]]);
    expect(fetcher.stats.coalesced).toBe(2);
  });

  it('fresh fetches join a queued request but not one already sent', async () => {
    const fetcher = new AccountFetcher(client);
    const a = testAddress(1);
    fx.backend.setAccount(a, dataAccount(new Uint8Array([1])));
    const old = fetcher.fetch(a);
    expect(fetcher.fetch(a, { fresh: true })).toBe(old); // still queued: shared
    await new Promise((r) => setImmediate(r)); // sent
    fx.backend.setAccount(a, dataAccount(new Uint8Array([2])));
    const fresh = fetcher.fetch(a, { fresh: true });
    expect(fresh).not.toBe(old);
    await old; // 1 or 2, depending on when the server read it
    expect((await fresh)!.data[0]).toBe(2);
    expect(keysPerCall(fx)).toEqual([[a], [a]]);
    expect(fetcher.outstanding).toBe(0);
  });

  it('never sends more than 100 keys per call', async () => {
    const fetcher = new AccountFetcher(client, { batchSize: 100 });
    const addrs = Array.from({ length: 250 }, (_, i) => testAddress(i));
    const got = await Promise.all(addrs.map((a) => fetcher.fetch(a)));
    expect(got.every((g) => g === null)).toBe(true);
    const sizes = keysPerCall(fx).map((k) => k.length);
    expect(sizes).toEqual([100, 100, 50]);
    expect(() => new AccountFetcher(client, { batchSize: 101 })).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'batchSize', value: 101 } }));
  });

  it('rejects every waiter of a failed batch with the RPC error code, then recovers', async () => {
    fx.faults.setRpcFault('getMultipleAccounts', { errorRate: 1 });
    const fetcher = new AccountFetcher(client, { batchSize: 3 });
    const results = await Promise.allSettled([1, 2, 3, 4].map((i) => fetcher.fetch(testAddress(i))));
    for (const r of results) {
      expect(r.status).toBe('rejected');
      const err = (r as PromiseRejectedResult).reason as unknown;
      expect(isRpcFailure(err, 'rpc')).toBe(true);
      expect((err as RpcFailure).context.rpcCode).toBe(-32603);
    }
    expect(fetcher.stats.failedCalls).toBe(2);
    expect(fetcher.outstanding).toBe(0);
    fx.faults.setRpcFault('getMultipleAccounts', { errorRate: 0 });
    await expect(fetcher.fetch(testAddress(1))).resolves.toBeNull();
  });

  it('rejects waiters with a typed timeout when the RPC is slower than the timeout', async () => {
    fx.faults.setRpcFault('getMultipleAccounts', { latencyMs: 1000 });
    const slow = new RpcClient({ endpoints: [fx.httpUrl], timeoutMs: 50 });
    const fetcher = new AccountFetcher(slow);
    const results = await Promise.allSettled([fetcher.fetch(testAddress(1)), fetcher.fetch(testAddress(2))]);
    for (const r of results) expect(isRpcFailure((r as PromiseRejectedResult).reason, 'timeout')).toBe(true);
  });

  it('refuses fetches beyond the queue limit instead of buffering them', async () => {
    const fetcher = new AccountFetcher(client, { batchSize: 100, maxQueued: 3 });
    const ok = [1, 2, 3].map((i) => fetcher.fetch(testAddress(i)));
    await expect(fetcher.fetch(testAddress(4))).rejects.toMatchObject({ code: ErrorCode.FetchQueueFull });
    // A queued address still coalesces when the queue is full.
    const again = fetcher.fetch(testAddress(1));
    expect(fetcher.stats.refused).toBe(1);
    await Promise.all([...ok, again]);
    expect(fetcher.queued).toBe(0);
  });
});
