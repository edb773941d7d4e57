import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import * as base58 from '../chain/base58.js';
import { Prng } from '../prng.js';
import { manualSimulator } from '../quote/testing.js';
import { dataAccount, startRpcFixture, testAddress, type RpcFixture } from '../scanner/testing/rpc-fixture.js';
import type { Simulator } from '../sim/simulator.js';
import { AccountFetcher } from './account-fetcher.js';
import { RpcClient, type AccountData, type RpcClientOptions } from './rpc-client.js';
import { ErrorCode, isTpError } from '../errors.js';
import { isRpcFailure, type RpcFailure } from './rpc-errors.js';
import type { RpcWorkerUnavailable } from './rpc-thread.js';
import { WorkerAccountFetcher, type WorkerAccountFetcherOptions } from './worker-account-fetcher.js';

/**
 * WorkerAccountFetcher against the simulator's JSON-RPC on port 0, beside the in-thread
 * AccountFetcher. The worker module runs from dist/ (npm run build).
 */
const RPC_WORKER = resolve(import.meta.dirname, '../../dist/engine/rpc/rpc-worker.js');
const built = existsSync(RPC_WORKER);

const opened: WorkerAccountFetcher[] = [];

function workerFetcher(rpc: RpcClientOptions, options: WorkerAccountFetcherOptions = {}): WorkerAccountFetcher {
  const fetcher = new WorkerAccountFetcher(rpc, { filename: RPC_WORKER, ...options });
  opened.push(fetcher);
  return fetcher;
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((f) => f.close()));
});

/** Keys asked in each getMultipleAccounts POST the server answered. */
function keysPerCall(fx: RpcFixture): string[][] {
  return fx.posts.map((p) => (JSON.parse(p) as { params: [string[]] }).params[0]);
}

function plain(a: AccountData | null): unknown {
  return a === null ? null : { data: Buffer.from(a.data).toString('hex'), owner: a.owner, lamports: a.lamports, executable: a.executable, slot: a.slot };
}

describe.skipIf(!built)('WorkerAccountFetcher against the simulator (whole chain)', () => {
  let sim: Simulator;
  let rpcUrl: string;

  beforeAll(async () => {
    sim = manualSimulator(5);
    rpcUrl = (await sim.start()).rpc;
    sim.chain.advanceSlot(3);
  });
  afterAll(async () => {
    await sim.close();
  });

  it('answers as AccountFetcher does for every pool, tick and bin array, and missing accounts', async () => {
    const addresses: string[] = [];
    for (const view of sim.chain.pools()) {
      addresses.push(view.address);
      for (const array of sim.chain.poolInfo(view.address)!.arrays) addresses.push(array.address);
    }
    const missing = Array.from({ length: 5 }, (_, i) => base58.encode(new Prng(300 + i).bytes(32)));
    addresses.push(...missing);
    const inThread = new AccountFetcher(new RpcClient({ endpoints: [rpcUrl] }));
    const inWorker = workerFetcher({ endpoints: [rpcUrl] });
    const [expected, got] = await Promise.all([
      Promise.all(addresses.map((a) => inThread.fetch(a))),
      Promise.all(addresses.map((a) => inWorker.fetch(a))),
    ]);
    expect(got.map(plain)).toEqual(expected.map(plain));
    expect(got.filter((a) => a === null)).toHaveLength(missing.length);
    expect(got.some((a) => a !== null && a.data.length >= 10_000)).toBe(true); // tick arrays
    expect(got.find((a) => a !== null)!.slot).toBe(sim.chain.slot());
    expect(inWorker.stats.calls).toBe(inThread.stats.calls);
    expect(inWorker.threadStats()).toMatchObject({ calls: inWorker.stats.calls, ringFull: 0, pending: 0, workerStarts: 1, workerDeaths: 0 });
  });
});

describe.skipIf(!built)('WorkerAccountFetcher over the simulator JSON-RPC', () => {
  let fx: RpcFixture;
  let rpc: RpcClientOptions;

  beforeEach(async () => {
    fx = await startRpcFixture();
    rpc = { endpoints: [fx.httpUrl] };
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((f) => f.close()));
    await fx.close();
  });

  it('returns data, owner, exact lamports, executable and the context slot; null for missing', async () => {
    const big = 18_446_744_073_709_551_000n; // above 2^53
    fx.backend.setAccount(testAddress(1), dataAccount(new Uint8Array([1, 2, 3, 250]), big, testAddress(7, 9)));
    fx.backend.setAccount(testAddress(3), { ...dataAccount(new Uint8Array(0)), executable: true });
    fx.backend.advanceSlot(5);
    const fetcher = workerFetcher(rpc);
    const [a, b, c] = await Promise.all([1, 2, 3].map((i) => fetcher.fetch(testAddress(i))));
    expect(plain(a!)).toEqual({ data: '010203fa', owner: testAddress(7, 9), lamports: big, executable: false, slot: 105n });
    expect(b).toBeNull();
    expect(c!.executable).toBe(true);
    expect(c!.data).toHaveLength(0);
    expect(fx.posts).toHaveLength(1);
  });

  it('batches N concurrent fetches into ceil(N / batchSize) calls, each account to its caller', async () => {
    const n = 23;
    const addrs = Array.from({ length: n }, (_, i) => testAddress(i));
    addrs.forEach((a, i) => fx.backend.setAccount(a, dataAccount(new Uint8Array([i]))));
    const fetcher = workerFetcher(rpc, { batchSize: 5 });
    const got = await Promise.all(addrs.map((a) => fetcher.fetch(a)));
    expect(got.map((g) => g!.data[0])).toEqual(addrs.map((_, i) => i));
    expect(fx.posts).toHaveLength(Math.ceil(n / 5));
    expect(keysPerCall(fx).flat().sort()).toEqual([...addrs].sort());
    expect(fetcher.stats.calls).toBe(5);
    expect(fetcher.outstanding).toBe(0);
  });

  it('never sends more than 100 keys per call', async () => {
    const fetcher = workerFetcher(rpc, { batchSize: 100 });
    const addrs = Array.from({ length: 250 }, (_, i) => testAddress(i));
    const got = await Promise.all(addrs.map((a) => fetcher.fetch(a)));
    expect(got.every((g) => g === null)).toBe(true);
    expect(keysPerCall(fx).map((k) => k.length)).toEqual([100, 100, 50]);
    expect(() => new WorkerAccountFetcher(rpc, { filename: RPC_WORKER, batchSize: 101 })).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'batchSize', value: 101 } }));
  });

  it('coalesces the same address, queued or in flight, into one key', async () => {
    const fetcher = workerFetcher(rpc);
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
    const fetcher = workerFetcher(rpc);
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

  it('rejects every waiter of a failed batch with the RpcFailure the in-thread client gives, then recovers', async () => {
    fx.faults.setRpcFault('getMultipleAccounts', { errorRate: 1, errorCode: -32005, errorMessage: 'Node is behind' });
    const expected = (await new RpcClient(rpc).getMultipleAccounts([testAddress(1)]).catch((e: unknown) => e)) as RpcFailure;
    expect(isRpcFailure(expected, 'rpc')).toBe(true);
    const fetcher = workerFetcher(rpc, { batchSize: 3 });
    const results = await Promise.allSettled([1, 2, 3, 4].map((i) => fetcher.fetch(testAddress(i))));
    for (const r of results) {
      expect(r.status).toBe('rejected');
      const err = (r as PromiseRejectedResult).reason as RpcFailure;
      expect(isTpError(err, ErrorCode.RpcFailed)).toBe(true);
      expect([err.context.kind, err.message, err.context.rpcCode, err.context.endpoint, err.context.method]).toEqual([expected.context.kind, expected.message, -32005, expected.context.endpoint, expected.context.method]);
    }
    expect(fetcher.stats.failedCalls).toBe(2);
    expect(fetcher.outstanding).toBe(0);
    fx.faults.clear();
    fx.backend.setAccount(testAddress(1), dataAccount(new Uint8Array([9])));
    expect((await fetcher.fetch(testAddress(1)))!.data[0]).toBe(9);
  });

  it('gives the node\'s error for an invalid key, as the in-thread client does', async () => {
    const fetcher = workerFetcher(rpc);
    const err = await fetcher.fetch('not-a-key').catch((e: unknown) => e);
    expect(isRpcFailure(err, 'rpc')).toBe(true);
    expect((err as RpcFailure).context.rpcCode).toBe(-32602);
  });

  it('rejects waiters with a typed timeout when the RPC is slower than the timeout', async () => {
    fx.faults.setRpcFault('getMultipleAccounts', { latencyMs: 1000 });
    const fetcher = workerFetcher({ ...rpc, timeoutMs: 50 });
    const results = await Promise.allSettled([fetcher.fetch(testAddress(1)), fetcher.fetch(testAddress(2))]);
    for (const r of results) {
      const err = (r as PromiseRejectedResult).reason as RpcFailure;
      expect(isRpcFailure(err, 'timeout')).toBe(true);
      expect(err.message).toBe('getMultipleAccounts: no answer within 50 ms');
      expect(err.context.endpoint).toBe(fx.httpUrl);
    }
  });

  it('moves many 10 KB accounts per call intact, in parts when a call exceeds a ring record', async () => {
    const addrs = Array.from({ length: 300 }, (_, i) => testAddress(i));
    const datas = addrs.map((a, i) => {
      const data = new Prng(1000 + i).bytes(10_240);
      fx.backend.setAccount(a, dataAccount(data, BigInt(i) * 1_000_003n));
      return data;
    });
    // 8 MiB: one record per call; 256 KiB and 64 KiB: each call in parts, and the worker waits
    // for this thread to drain the ring before it can write the rest.
    for (const answerRingBytes of [1 << 23, 1 << 18, 1 << 16]) {
      const fetcher = workerFetcher(rpc, { answerRingBytes });
      const got = await Promise.all(addrs.map((a) => fetcher.fetch(a)));
      for (let i = 0; i < addrs.length; i++) {
        expect(Buffer.from(got[i]!.data).equals(Buffer.from(datas[i]!)), `account ${i}`).toBe(true);
        expect(got[i]!.lamports).toBe(BigInt(i) * 1_000_003n);
      }
      const stats = fetcher.threadStats();
      expect(stats.calls).toBe(3);
      const perRecord = Math.floor((answerRingBytes / 2 - 24 - 12) / (16 + testAddress(0, 9).length + 10_240));
      expect(stats.answerRecords).toBe(3 * Math.ceil(100 / perRecord));
      expect(stats.answerRing).toMatchObject({ dropped: 0, written: stats.answerRecords, read: stats.answerRecords });
      // The data belongs to the caller: it stays intact once the ring space is reused.
      const again = await Promise.all(addrs.slice(0, 100).map((a) => fetcher.fetch(a, { fresh: true })));
      expect(again.every((a, i) => Buffer.from(a!.data).equals(Buffer.from(datas[i]!)))).toBe(true);
      expect(Buffer.from(got[0]!.data).equals(Buffer.from(datas[0]!))).toBe(true);
    }
  });

  it('fails the call of an account larger than a ring record, and serves the others', async () => {
    fx.backend.setAccount(testAddress(1), dataAccount(new Uint8Array(40_000)));
    fx.backend.setAccount(testAddress(2), dataAccount(new Uint8Array([5])));
    // 64 KiB ring: records up to 32 KiB.
    const fetcher = workerFetcher(rpc, { answerRingBytes: 1 << 16, batchSize: 1 });
    const [big, small] = await Promise.allSettled([fetcher.fetch(testAddress(1)), fetcher.fetch(testAddress(2))]);
    expect(isRpcFailure((big as PromiseRejectedResult).reason, 'malformed')).toBe(true);
    expect(((big as PromiseRejectedResult).reason as Error).message).toMatch(/account 0 holds 40000 bytes/);
    expect((small as PromiseFulfilledResult<AccountData | null>).value!.data[0]).toBe(5);
  });

  it('refuses fetches beyond the queue limit instead of buffering them', async () => {
    const fetcher = workerFetcher(rpc, { batchSize: 100, maxQueued: 3 });
    const ok = [1, 2, 3].map((i) => fetcher.fetch(testAddress(i)));
    await expect(fetcher.fetch(testAddress(4))).rejects.toMatchObject({ code: ErrorCode.FetchQueueFull });
    const again = fetcher.fetch(testAddress(1)); // a queued address still coalesces
    expect(fetcher.stats.refused).toBe(1);
    await Promise.all([...ok, again]);
    expect(fetcher.queued).toBe(0);
  });

  it('refuses calls the full request ring cannot hold (FetchQueueFull, counted), and answers the rest', async () => {
    // 16 KiB ring: three 100-key calls (4.6 KB each) at most; the worker takes one at a time. The
    // server answers on this thread, so nothing is answered while the six calls are written.
    const fetcher = workerFetcher(rpc, { requestRingBytes: 1 << 14, maxInFlight: 1 });
    const addrs = Array.from({ length: 600 }, (_, i) => testAddress(i));
    const results = await Promise.allSettled(addrs.map((a) => fetcher.fetch(a)));
    const refused = results.filter((r) => r.status === 'rejected');
    expect(refused.length).toBeGreaterThanOrEqual(200);
    for (const r of refused) {
      const err = (r as PromiseRejectedResult).reason as unknown;
      expect(isTpError(err, ErrorCode.FetchQueueFull)).toBe(true);
      expect(isTpError(err, ErrorCode.FetchQueueFull)).toBe(true);
    }
    const stats = fetcher.threadStats();
    expect(stats.ringFull * 100).toBe(refused.length);
    expect(stats.calls + stats.ringFull).toBe(6);
    expect(fetcher.stats.failedCalls).toBe(stats.ringFull);
    expect(keysPerCall(fx)).toHaveLength(stats.calls);
    await expect(fetcher.fetch(testAddress(1), { fresh: true })).resolves.toBeNull();
  });

  it('close() lets the calls in flight and the queued ones finish, then ends the worker', async () => {
    fx.faults.setRpcFault('getMultipleAccounts', { latencyMs: 100 });
    fx.backend.setAccount(testAddress(1), dataAccount(new Uint8Array([1])));
    fx.backend.setAccount(testAddress(2), dataAccount(new Uint8Array([2])));
    const fetcher = workerFetcher(rpc);
    const inFlight = fetcher.fetch(testAddress(1));
    await new Promise((r) => setImmediate(r)); // sent
    const queued = fetcher.fetch(testAddress(2));
    expect(fetcher.queued).toBe(1);
    const closed = fetcher.close();
    await expect(fetcher.fetch(testAddress(3))).rejects.toMatchObject({ code: ErrorCode.RpcWorkerUnavailable });
    expect((await inFlight)!.data[0]).toBe(1);
    expect((await queued)!.data[0]).toBe(2);
    await closed;
    expect(fetcher.outstanding).toBe(0);
    expect(fetcher.threadStats()).toMatchObject({ pending: 0, workerDeaths: 0 });
    await expect(fetcher.fetch(testAddress(1))).rejects.toMatchObject({ context: { reason: 'closed' } });
  });

  it('rejects with RpcWorkerUnavailable when the worker cannot run, and tries a new worker on the next call', async () => {
    const fetcher = workerFetcher(rpc, { filename: resolve(import.meta.dirname, 'no-such-worker.js') });
    const err = await fetcher.fetch(testAddress(1)).catch((e: unknown) => e);
    expect(isTpError(err, ErrorCode.RpcWorkerUnavailable)).toBe(true);
    expect((err as RpcWorkerUnavailable).context.reason).toBe('exited');
    expect((err as Error).message).toMatch(/Cannot find module/);
    await expect(fetcher.fetch(testAddress(1))).rejects.toMatchObject({ code: ErrorCode.RpcWorkerUnavailable });
    const stats = fetcher.threadStats();
    expect(stats.workerStarts).toBeGreaterThanOrEqual(2);
    expect(stats.workerDeaths).toBe(stats.workerStarts);
  });
});

/** A JSON-RPC server that answers nothing: it holds every request open and counts those whose client went. */
async function startHoldingServer(): Promise<{ url: string; held: number; gone: number; close(): Promise<void> }> {
  const { createServer } = await import('node:http');
  const state = { held: 0, gone: 0 };
  const server = createServer((req, res) => {
    state.held++;
    res.on('close', () => state.gone++);
    req.resume();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    get held() {
      return state.held;
    },
    get gone() {
      return state.gone;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

async function until(probe: () => boolean, what: string): Promise<void> {
  for (let i = 0; !probe(); i++) {
    if (i > 500) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe.skipIf(!built)('WorkerAccountFetcher under AbortSignals', () => {
  it("aborts the worker's HTTP request when every fetch it serves was aborted", async () => {
    const server = await startHoldingServer();
    try {
      // The request timeout is far off: only the abort can end the request the server holds.
      const fetcher = workerFetcher({ endpoints: [server.url], timeoutMs: 600_000 });
      const controller = new AbortController();
      const read = fetcher.fetch(testAddress(1), { signal: controller.signal });
      await until(() => server.held === 1, 'the request at the server');
      const reason = new Error('deadline');
      controller.abort(reason);
      await expect(read).rejects.toBe(reason);
      await until(() => server.gone === 1, 'the worker to drop the request');
      await until(() => fetcher.threadStats().pending === 0, 'the abort answered');
      expect(fetcher.outstanding).toBe(0);
      // The worker goes on serving: the next read reaches the server.
      const next = fetcher.fetch(testAddress(2), { signal: controller.signal });
      await expect(next).rejects.toBe(reason); // already aborted: not sent
      const other = new AbortController();
      const again = fetcher.fetch(testAddress(2), { signal: other.signal });
      await until(() => server.held === 2, 'the second request');
      other.abort(reason);
      await expect(again).rejects.toBe(reason);
      await until(() => server.gone === 2, 'the second request dropped');
    } finally {
      await Promise.all(opened.splice(0).map((f) => f.close()));
      await server.close();
    }
  });

  it('keeps the request of a fetch without a signal going when the others are aborted', async () => {
    const server = await startHoldingServer();
    try {
      const fetcher = workerFetcher({ endpoints: [server.url], timeoutMs: 600_000 });
      const controller = new AbortController();
      const watched = fetcher.fetch(testAddress(1), { signal: controller.signal });
      const pinned = fetcher.fetch(testAddress(1)).catch((e: unknown) => e);
      await until(() => server.held === 1, 'the request at the server');
      controller.abort(new Error('deadline'));
      await expect(watched).rejects.toThrow('deadline');
      expect(fetcher.threadStats().pending).toBe(1);
      expect(server.gone).toBe(0);
      await server.close(); // the held request fails: the pinned fetch gets the failure
      expect(isRpcFailure(await pinned)).toBe(true);
    } finally {
      await Promise.all(opened.splice(0).map((f) => f.close()));
    }
  });
});
