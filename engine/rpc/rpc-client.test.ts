import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { parseEpochInfo, parseMultipleAccounts, parseRpcEndpoints, RpcClient } from './rpc-client.js';
import { ErrorCode } from '../errors.js';
import { isRpcFailure, type RpcFailure } from './rpc-errors.js';
import { dataAccount, startRpcFixture, testAddress, type RpcFixture } from '../scanner/testing/rpc-fixture.js';

describe('RpcClient.getMultipleAccounts against the simulator JSON-RPC', () => {
  let fx: RpcFixture;
  beforeEach(async () => {
    fx = await startRpcFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  it('returns data, owner, exact lamports and the context slot as bigint; null for missing', async () => {
    const a = testAddress(1);
    const b = testAddress(2);
    const big = 18_446_744_073_709_551_000n; // above 2^53: JSON.parse would round it
    fx.backend.setAccount(a, dataAccount(new Uint8Array([1, 2, 3, 250]), big, testAddress(7, 9)));
    fx.backend.advanceSlot(5);
    const client = new RpcClient({ endpoints: [fx.httpUrl] });
    const r = await client.getMultipleAccounts([a, b]);
    expect(r.slot).toBe(105n);
    expect(r.accounts[1]).toBeNull();
    const acc = r.accounts[0]!;
    expect([...acc.data]).toEqual([1, 2, 3, 250]);
    expect(acc.owner).toBe(testAddress(7, 9));
    expect(acc.lamports).toBe(big);
    expect(acc.slot).toBe(105n);
    expect(fx.posts).toHaveLength(1);
  });

  it('refuses more than 100 keys', async () => {
    const client = new RpcClient({ endpoints: [fx.httpUrl] });
    const keys = Array.from({ length: 101 }, (_, i) => testAddress(i));
    await expect(client.getMultipleAccounts(keys)).rejects.toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'addresses', value: keys.length } }));
    expect(fx.posts).toHaveLength(0);
  });

  it('refuses no endpoint, and an endpoint that is not http(s) without showing its password', () => {
    expect(() => new RpcClient({ endpoints: [] })).toThrow(expect.objectContaining({ code: ErrorCode.ArgumentInvalid, context: { argument: 'endpoints', value: 0 } }));
    let err: unknown;
    try {
      new RpcClient({ endpoints: ['ftp://user:hunter2@node.example/'] });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: ErrorCode.ArgumentInvalid, context: { argument: 'url' } });
    expect(JSON.stringify(err) + (err as Error).message).not.toContain('hunter2');
  });

  it('keeps the JSON-RPC error code and message', async () => {
    fx.faults.setRpcFault('getMultipleAccounts', { errorRate: 1, errorCode: -32005, errorMessage: 'Node is behind' });
    const client = new RpcClient({ endpoints: [fx.httpUrl] });
    const err = await client.getMultipleAccounts([testAddress(1)]).catch((e: unknown) => e);
    expect(isRpcFailure(err, 'rpc')).toBe(true);
    expect((err as RpcFailure).context.rpcCode).toBe(-32005);
    expect((err as RpcFailure).message).toContain('Node is behind');
  });

  it('gives a typed timeout error when the answer is later than the timeout', async () => {
    fx.faults.setRpcFault('getMultipleAccounts', { latencyMs: 1000 });
    const client = new RpcClient({ endpoints: [fx.httpUrl], timeoutMs: 50 });
    const err = await client.getMultipleAccounts([testAddress(1)]).catch((e: unknown) => e);
    expect(isRpcFailure(err, 'timeout')).toBe(true);
    expect((err as RpcFailure).context.endpoint).toBe(fx.httpUrl);
  });

  it('rotates over endpoints (round robin) and reports network failures typed', async () => {
    const other = await startRpcFixture();
    try {
      const client = new RpcClient({ endpoints: [fx.httpUrl, other.httpUrl] });
      for (let i = 0; i < 4; i++) await client.getMultipleAccounts([testAddress(1)]);
      expect(fx.posts).toHaveLength(2);
      expect(other.posts).toHaveLength(2);
    } finally {
      await other.close();
    }
    const dead = new RpcClient({ endpoints: [other.httpUrl] });
    const err = await dead.getMultipleAccounts([testAddress(1)]).catch((e: unknown) => e);
    expect(isRpcFailure(err, 'network')).toBe(true);
  });

  it('reports an invalid key as the node error (-32602)', async () => {
    const client = new RpcClient({ endpoints: [fx.httpUrl] });
    const err = await client.getMultipleAccounts(['not-a-key']).catch((e: unknown) => e);
    expect(isRpcFailure(err, 'rpc')).toBe(true);
    expect((err as RpcFailure).context.rpcCode).toBe(-32602);
  });
});

describe('parseMultipleAccounts', () => {
  it('rejects malformed replies typed', () => {
    for (const text of ['nope', '{"jsonrpc":"2.0","result":{"context":{"slot":1},"value":{}},"id":1}', '{"jsonrpc":"2.0","result":{"value":[null]},"id":1}']) {
      expect(() => parseMultipleAccounts(text, 1, 'http://x')).toThrow(expect.objectContaining({ code: ErrorCode.RpcFailed }));
      try {
        parseMultipleAccounts(text, 1, 'http://x');
      } catch (e) {
        expect(isRpcFailure(e, 'malformed')).toBe(true);
      }
    }
  });

  it('reads a context slot above 2^53 exactly', () => {
    const text = '{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.0.0","slot":18446744073709551615},"value":[null]},"id":1}';
    expect(parseMultipleAccounts(text, 1, 'http://x').slot).toBe(18_446_744_073_709_551_615n);
  });
});

describe('parseRpcEndpoints', () => {
  it('splits on commas and whitespace', () => {
    expect(parseRpcEndpoints(' http://a:1, http://b:2  http://c:3,')).toEqual(['http://a:1', 'http://b:2', 'http://c:3']);
    expect(parseRpcEndpoints(undefined)).toEqual([]);
  });
});

describe('RpcClient.getEpochInfo', () => {
  let fx: RpcFixture;
  beforeEach(async () => {
    fx = await startRpcFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  it('reads the epoch of the node\'s slot (a node without epochs: mainnet\'s 432,000 slots, no transaction count)', async () => {
    const client = new RpcClient({ endpoints: [fx.httpUrl] });
    try {
      const slot = fx.backend.slot('processed');
      expect(await client.getEpochInfo()).toEqual({
        epoch: slot / 432_000n,
        slotIndex: slot % 432_000n,
        slotsInEpoch: 432_000n,
        absoluteSlot: slot,
        blockHeight: fx.backend.blockHeight('processed'),
        transactionCount: null,
      });
    } finally {
      await client.close();
    }
  });
});

describe('parseEpochInfo', () => {
  it('keeps u64 values above 2^53 exact, and refuses errors and malformed results', () => {
    const text = '{"jsonrpc":"2.0","result":{"absoluteSlot":18446744073709551000,"blockHeight":1,"epoch":870,"slotIndex":5,"slotsInEpoch":432000,"transactionCount":18446744073709551001},"id":1}';
    expect(parseEpochInfo(text, 'http://x')).toEqual({
      absoluteSlot: 18_446_744_073_709_551_000n,
      blockHeight: 1n,
      epoch: 870n,
      slotIndex: 5n,
      slotsInEpoch: 432_000n,
      transactionCount: 18_446_744_073_709_551_001n,
    });
    for (const bad of [
      'not json',
      '{"jsonrpc":"2.0","error":{"code":-32005,"message":"Node is behind"},"id":1}',
      '{"jsonrpc":"2.0","result":null,"id":1}',
      '{"jsonrpc":"2.0","result":{"absoluteSlot":1,"blockHeight":1,"epoch":"870","slotIndex":5,"slotsInEpoch":432000},"id":1}',
      '{"jsonrpc":"2.0","result":{"absoluteSlot":1,"blockHeight":1,"slotIndex":5,"slotsInEpoch":432000},"id":1}',
    ]) {
      expect(() => parseEpochInfo(bad, 'http://x'), bad).toThrow(expect.objectContaining({ code: ErrorCode.RpcFailed }));
    }
    let failure: unknown;
    try {
      parseEpochInfo('{"jsonrpc":"2.0","error":{"code":-32005,"message":"Node is behind"},"id":1}', 'http://x');
    } catch (err) {
      failure = err;
    }
    expect(failure).toMatchObject({ context: { kind: 'rpc', rpcCode: -32005 } });
  });
});
