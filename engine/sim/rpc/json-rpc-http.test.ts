import { performance } from 'node:perf_hooks';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { rpcError } from '../chain-backend.js';
import { JsonRpcHttpServer } from './json-rpc-http.js';
import { JsonRpcWsServer } from './json-rpc-ws.js';
import { MemoryBackend } from './memory-backend.js';
import { account, address, call, post, startTestServers, type TestServers } from './testing/test-servers.js';

let t: TestServers;
let url: string;

beforeEach(async () => {
  t = await startTestServers();
  url = t.httpUrl;
});

afterEach(async () => {
  await t.close();
});

describe('results', () => {
  it('writes u64 values above 2^53 with their exact digits', async () => {
    await t.close();
    t = await startTestServers(new MemoryBackend({ slot: 2n ** 53n + 7n, finalizedLag: 0n }));
    url = t.httpUrl;
    t.backend.setAccount(address(1), account(new Uint8Array([1, 2, 3]), { lamports: 2n ** 60n + 1n }));
    const info = await post(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getAccountInfo', params: [address(1), { encoding: 'base64' }] }));
    expect(info.text).toContain('"rentEpoch":18446744073709551615');
    expect(info.text).toContain('"lamports":1152921504606846977');
    expect(info.text).toContain('"slot":9007199254740999');
    const slot = await post(url, '{"jsonrpc":"2.0","id":2,"method":"getSlot"}');
    expect(slot.text).toBe('{"jsonrpc":"2.0","result":9007199254740999,"id":2}\n');
  });

  it('answers getAccountInfo with sorted keys, apiVersion in the context and binary (base58) by default', async () => {
    t.backend.setAccount(address(1), account(new Uint8Array([0, 0, 1])));
    const reply = await post(url, JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'getAccountInfo', params: [address(1)] }));
    expect(reply.status).toBe(200);
    expect(reply.contentType).toBe('application/json; charset=utf-8');
    expect(reply.text).toBe(
      '{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.2.20","slot":68},"value":{"data":"112","executable":false,' +
        `"lamports":1000000,"owner":"${address(9)}","rentEpoch":18446744073709551615,"space":3}},"id":5}\n`,
    );
  });

  it('slices data, keeps space whole, and falls back to base64 for jsonParsed', async () => {
    t.backend.setAccount(address(1), account(Uint8Array.from([10, 11, 12, 13, 14])));
    const sliced = await call(url, 'getAccountInfo', [address(1), { encoding: 'base64', dataSlice: { offset: 1, length: 2 } }]);
    expect(Buffer.from(sliced.result.value.data[0], 'base64')).toEqual(Buffer.from([11, 12]));
    expect(sliced.result.value.space).toBe(5);
    const past = await call(url, 'getAccountInfo', [address(1), { encoding: 'base64', dataSlice: { offset: 9, length: 2 } }]);
    expect(past.result.value.data).toEqual(['', 'base64']);
    const parsed = await call(url, 'getAccountInfo', [address(1), { encoding: 'jsonParsed' }]);
    expect(parsed.result.value.data).toEqual([Buffer.from([10, 11, 12, 13, 14]).toString('base64'), 'base64']);
    const b58 = await call(url, 'getAccountInfo', [address(1), { encoding: 'base58' }]);
    expect(b58.result.value.data[1]).toBe('base58');
  });

  it('answers getMultipleAccounts in request order with null for missing accounts', async () => {
    t.backend.setAccount(address(1), account(new Uint8Array([1])));
    t.backend.setAccount(address(3), account(new Uint8Array([3, 3])));
    const reply = await call(url, 'getMultipleAccounts', [[address(3), address(2), address(1)], { commitment: 'processed' }]);
    expect(reply.result.context.slot).toBe(100);
    const values = reply.result.value;
    expect(values[1]).toBeNull();
    expect(Buffer.from(values[0].data[0], 'base64')).toEqual(Buffer.from([3, 3]));
    expect(Buffer.from(values[2].data[0], 'base64')).toEqual(Buffer.from([1]));
  });

  it('uses the finalized bank when no commitment is given, as the node does', async () => {
    expect((await call(url, 'getSlot')).result).toBe(68);
    expect((await call(url, 'getSlot', [{ commitment: 'confirmed' }])).result).toBe(99);
    expect((await call(url, 'getSlot', [{ commitment: 'processed' }])).result).toBe(100);
    // A bad commitment inside a flattened config is ignored by serde: the default applies.
    expect((await call(url, 'getSlot', [{ commitment: 'bogus' }])).result).toBe(68);
    expect((await call(url, 'getBlockHeight', [{ commitment: 'processed' }])).result).toBe(100);
  });

  it('answers getTokenAccountBalance with the ui amount forms', async () => {
    t.backend.setAccount(address(4), account(new Uint8Array(165)));
    t.backend.setTokenBalance(address(4), { amount: 1_500_000n, decimals: 6 });
    const reply = await post(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getTokenAccountBalance', params: [address(4)] }));
    expect(reply.text).toContain('"value":{"amount":"1500000","decimals":6,"uiAmount":1.5,"uiAmountString":"1.5"}');
    t.backend.setTokenBalance(address(4), { amount: 2_000_000n, decimals: 6 });
    const whole = await post(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getTokenAccountBalance', params: [address(4)] }));
    expect(whole.text).toContain('"uiAmount":2.0,"uiAmountString":"2"');
    const missing = await call(url, 'getTokenAccountBalance', [address(5)]);
    expect(missing.error).toEqual({ code: -32602, message: 'Invalid param: could not find account' });
    t.backend.setAccount(address(6), account(new Uint8Array(3)));
    const notToken = await call(url, 'getTokenAccountBalance', [address(6)]);
    expect(notToken.error).toEqual({ code: -32602, message: 'Invalid param: not a Token account' });
  });

  it('answers the node and blockhash methods', async () => {
    expect((await call(url, 'getHealth')).result).toBe('ok');
    expect((await call(url, 'getVersion')).result).toEqual({ 'feature-set': 3294202862, 'solana-core': '2.2.20' });
    expect((await call(url, 'getGenesisHash')).result).toBe(t.backend.genesisHash());
    const latest = await call(url, 'getLatestBlockhash', [{ commitment: 'processed' }]);
    expect(latest.result.value).toEqual({ blockhash: t.backend.latestBlockhash().blockhash, lastValidBlockHeight: 251 });
    const valid = await call(url, 'isBlockhashValid', [latest.result.value.blockhash, { commitment: 'processed' }]);
    expect(valid.result.value).toBe(true);
    expect((await call(url, 'isBlockhashValid', [address(3)])).result.value).toBe(false);
    expect((await call(url, 'isBlockhashValid', ['0OIl'])).error).toEqual({ code: -32602, message: 'Invalid' });
  });

  it('answers GET /health with ok', async () => {
    const res = await fetch(`${url}/health`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('ok');
  });
});

describe('errors', () => {
  it('answers an unknown method with -32601', async () => {
    expect(await call(url, 'getNothing', [])).toEqual({ jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 1 });
  });

  it('answers invalid JSON with -32700 and a null id', async () => {
    const reply = await post(url, '{"jsonrpc":"2.0","id":1,');
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}\n');
  });

  it('answers calls of the wrong shape with -32600', async () => {
    const extra = await post(url, '{"jsonrpc":"2.0","id":3,"method":"getSlot","extra":1}');
    expect(JSON.parse(extra.text)).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request' }, id: 3 });
    const noMethod = await post(url, '{"jsonrpc":"2.0","id":4}');
    expect(JSON.parse(noMethod.text).error.code).toBe(-32600);
    const badVersion = await post(url, '{"jsonrpc":"1.0","id":4,"method":"getSlot"}');
    expect(JSON.parse(badVersion.text).error).toEqual({ code: -32600, message: 'Invalid request' });
    const noVersion = await post(url, '{"id":4,"method":"getSlot"}');
    expect(JSON.parse(noVersion.text).error).toEqual({ code: -32600, message: 'Unsupported JSON-RPC protocol version' });
    const scalar = await post(url, '42');
    expect(JSON.parse(scalar.text)).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request' }, id: null });
  });

  it('words bad params as serde and jsonrpc-derive do', async () => {
    expect((await call(url, 'getAccountInfo', [5])).error).toEqual({
      code: -32602,
      message: 'Invalid params: invalid type: integer `5`, expected a string.',
    });
    expect((await call(url, 'getAccountInfo', [])).error).toEqual({
      code: -32602,
      message: '`params` should have at least 1 argument(s)',
    });
    expect((await call(url, 'getAccountInfo')).error.message).toBe('`params` should have at least 1 argument(s)');
    expect((await call(url, 'getAccountInfo', { pubkey: address(1) })).error.message).toBe('`params` should be an array');
    expect((await call(url, 'getAccountInfo', [address(1), {}, 3])).error).toEqual({
      code: -32602,
      message: 'Invalid parameters: Expected from 1 to 2 parameters.',
      data: '"Got: 3"',
    });
    expect((await call(url, 'getHealth', [1])).error).toEqual({
      code: -32602,
      message: 'Invalid parameters: No parameters were expected',
      data: 'Array([Number(1)])',
    });
    expect((await call(url, 'getMultipleAccounts', [address(1)])).error.message).toBe(
      `Invalid params: invalid type: string "${address(1)}", expected a sequence.`,
    );
    expect((await call(url, 'getAccountInfo', [address(1), 'base64'])).error.message).toBe(
      'Invalid params: invalid type: string "base64", expected struct RpcAccountInfoConfig.',
    );
    expect((await call(url, 'getAccountInfo', [address(1), { dataSlice: { offset: 1 } }])).error.message).toBe(
      'Invalid params: missing field `length`.',
    );
    expect((await call(url, 'getSlot', [{ minContextSlot: -1 }])).error.message).toBe(
      'Invalid params: invalid value: integer `-1`, expected u64.',
    );
    expect((await call(url, 'getTokenAccountBalance', [address(1), {}])).error.message).toBe(
      'Invalid params: missing field `commitment`.',
    );
    expect((await call(url, 'getSignatureStatuses', [[], {}])).error.message).toBe(
      'Invalid params: missing field `searchTransactionHistory`.',
    );
  });

  it('refuses an unknown encoding with the list of known ones', async () => {
    expect((await call(url, 'getAccountInfo', [address(1), { encoding: 'hex' }])).error).toEqual({
      code: -32602,
      message:
        'Invalid params: unknown variant `hex`, expected one of `binary`, `base58`, `base64`, `jsonParsed`, `base64+zstd`.',
    });
    expect((await call(url, 'sendTransaction', ['AA==', { encoding: 'json' }])).error).toEqual({
      code: -32602,
      message: 'unsupported encoding: json. Supported encodings: base58, base64',
    });
    expect((await call(url, 'sendTransaction', ['AA==', { encoding: 'hex' }])).error.message).toBe(
      'Invalid params: unknown variant `hex`, expected one of `binary`, `base64`, `base58`, `json`, `jsonParsed`.',
    );
  });

  it('refuses bad base58 addresses and signatures as the node parses them', async () => {
    expect((await call(url, 'getBalance', ['0OIl'])).error).toEqual({ code: -32602, message: 'Invalid param: Invalid' });
    expect((await call(url, 'getBalance', ['abc'])).error).toEqual({ code: -32602, message: 'Invalid param: WrongSize' });
    expect((await call(url, 'getBalance', ['1'.repeat(45)])).error.message).toBe('Invalid param: WrongSize');
    expect((await call(url, 'getMultipleAccounts', [[address(1), 'nope!']])).error.message).toBe('Invalid param: Invalid');
    expect((await call(url, 'getSignatureStatuses', [[address(1)]])).error.message).toBe('Invalid param: WrongSize');
  });

  it('refuses more than 100 keys and more than 256 signatures', async () => {
    const keys = Array.from({ length: 101 }, (_, i) => address(i + 1));
    expect((await call(url, 'getMultipleAccounts', [keys])).error).toEqual({
      code: -32602,
      message: 'Too many inputs provided; max 100',
    });
    expect((await call(url, 'getMultipleAccounts', [keys.slice(0, 100)])).result.value).toHaveLength(100);
    const sigs = Array.from({ length: 257 }, () => '1'.repeat(64));
    expect((await call(url, 'getSignatureStatuses', [sigs])).error.message).toBe('Too many inputs provided; max 256');
  });

  it('refuses base58 account data over 128 bytes with -32600', async () => {
    t.backend.setAccount(address(1), account(new Uint8Array(129)));
    expect((await call(url, 'getAccountInfo', [address(1)])).error).toEqual({
      code: -32600,
      message: 'Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.',
    });
    const sliced = await call(url, 'getAccountInfo', [address(1), { dataSlice: { offset: 0, length: 128 } }]);
    expect(typeof sliced.result.value.data).toBe('string');
  });

  it('reports an unreached minContextSlot with the slot reached', async () => {
    expect((await call(url, 'getBalance', [address(1), { commitment: 'processed', minContextSlot: 101 }])).error).toEqual({
      code: -32016,
      message: 'Minimum context slot has not been reached',
      data: { contextSlot: 100 },
    });
    expect((await call(url, 'getBalance', [address(1), { commitment: 'processed', minContextSlot: 100 }])).result.value).toBe(0);
  });

  it('checks transaction encodings and sizes before the chain sees them', async () => {
    expect((await call(url, 'sendTransaction', ['AAA*', { encoding: 'base64' }])).error.message).toBe(
      'invalid base64 encoding: InvalidByte(3, 42)',
    );
    expect((await call(url, 'sendTransaction', ['0abc'])).error.message).toBe(
      "invalid base58 encoding: InvalidCharacter { character: '0', index: 0 }",
    );
    expect((await call(url, 'sendTransaction', ['A'.repeat(1648), { encoding: 'base64' }])).error.message).toBe(
      'base64 encoded solana_transaction::versioned::VersionedTransaction too large: 1648 bytes (max: encoded/raw 1644/1232)',
    );
    expect((await call(url, 'sendTransaction', ['AA==', { encoding: 'base64' }])).error.code).toBe(-32602);
    expect(t.backend.sentTransactions).toHaveLength(0);
  });

  it('passes the chain RpcError through with its code, message and data', async () => {
    t.backend.sendTransactionError = rpcError(-32002, 'Transaction simulation failed: Blockhash not found', {
      err: 'BlockhashNotFound',
      logs: [],
      unitsConsumed: 0n,
    });
    const tx = Buffer.concat([Buffer.from([1]), Buffer.alloc(64, 7), Buffer.alloc(40)]).toString('base64');
    expect((await call(url, 'sendTransaction', [tx, { encoding: 'base64' }])).error).toEqual({
      code: -32002,
      message: 'Transaction simulation failed: Blockhash not found',
      data: { err: 'BlockhashNotFound', logs: [], unitsConsumed: 0 },
    });
  });

  it('refuses sigVerify with replaceRecentBlockhash', async () => {
    const tx = Buffer.concat([Buffer.from([1]), Buffer.alloc(100, 7)]).toString('base64');
    expect((await call(url, 'simulateTransaction', [tx, { encoding: 'base64', sigVerify: true, replaceRecentBlockhash: true }])).error).toEqual({
      code: -32602,
      message: 'sigVerify may not be used with replaceRecentBlockhash',
    });
  });
});

describe('batches and notifications', () => {
  it('answers a batch in order, leaving out notifications', async () => {
    const body = JSON.stringify([
      { jsonrpc: '2.0', id: 'a', method: 'getSlot', params: [{ commitment: 'processed' }] },
      { jsonrpc: '2.0', method: 'getSlot' },
      { jsonrpc: '2.0', id: 'b', method: 'nope' },
      7,
      { jsonrpc: '2.0', id: 'c', method: 'getBalance', params: [address(1)] },
    ]);
    const reply = await post(url, body);
    expect(JSON.parse(reply.text)).toEqual([
      { jsonrpc: '2.0', result: 100, id: 'a' },
      { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 'b' },
      { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request' }, id: null },
      { jsonrpc: '2.0', result: { context: { apiVersion: '2.2.20', slot: 68 }, value: 0 }, id: 'c' },
    ]);
  });

  it('answers a notification, or a batch of them, with an empty body', async () => {
    const one = await post(url, '{"jsonrpc":"2.0","method":"getSlot"}');
    expect(one).toMatchObject({ status: 200, text: '' });
    const batch = await post(url, '[{"jsonrpc":"2.0","method":"getSlot"},{"jsonrpc":"2.0","method":"getHealth"}]');
    expect(batch).toMatchObject({ status: 200, text: '' });
    expect((await post(url, '[]')).text).toBe('');
  });

  it('does not run a method called as a notification, as the node registers none', async () => {
    const tx = Buffer.concat([Buffer.from([1]), Buffer.alloc(64, 7), Buffer.alloc(40)]).toString('base64');
    await post(url, JSON.stringify({ jsonrpc: '2.0', method: 'sendTransaction', params: [tx, { encoding: 'base64' }] }));
    expect(t.backend.sentTransactions).toHaveLength(0);
  });
});

describe('faults', () => {
  it('always answers with the injected error at rate 1', async () => {
    t.faults.setRpcFault('getSlot', { errorRate: 1, errorCode: -32005, errorMessage: 'Node is unhealthy' });
    for (let i = 0; i < 20; i++) {
      expect((await call(url, 'getSlot', undefined, i)).error).toEqual({ code: -32005, message: 'Node is unhealthy' });
    }
    // Other methods are untouched.
    expect((await call(url, 'getHealth')).result).toBe('ok');
  });

  it('never injects at rate 0', async () => {
    t.faults.setRpcFault('*', { errorRate: 0 });
    for (let i = 0; i < 50; i++) expect((await call(url, 'getSlot', undefined, i)).result).toBe(68);
  });

  it('applies the `*` fault to every method', async () => {
    t.faults.setRpcFault('*', { errorRate: 1 });
    expect((await call(url, 'getHealth')).error).toEqual({ code: -32603, message: 'Internal error (injected)' });
  });

  it('delays the answer by at least the injected latency', async () => {
    t.faults.setRpcFault('getBalance', { latencyMs: 120 });
    const started = performance.now();
    const reply = await call(url, 'getBalance', [address(1)]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(120);
    expect(reply.result.value).toBe(0);
  });

  it('delays a batch by the latency of its slowest call, keeping the order', async () => {
    t.faults.setRpcFault('getBalance', { latencyMs: 80 });
    const started = performance.now();
    const reply = await post(url, JSON.stringify([
      { jsonrpc: '2.0', id: 1, method: 'getBalance', params: [address(1)] },
      { jsonrpc: '2.0', id: 2, method: 'getHealth' },
    ]));
    expect(performance.now() - started).toBeGreaterThanOrEqual(80);
    expect(JSON.parse(reply.text).map((r: { id: number }) => r.id)).toEqual([1, 2]);
  });
});

describe('http', () => {
  it('refuses a body that is not declared JSON with 415', async () => {
    const reply = await post(url, '{"jsonrpc":"2.0","id":1,"method":"getSlot"}', 'text/plain');
    expect(reply.status).toBe(415);
    expect(reply.text).toBe('Supplied content type is not allowed. Content-Type: application/json is required\n');
  });

  it('refuses other HTTP methods with 405', async () => {
    const res = await fetch(url, { method: 'PUT', body: '{}' });
    expect(res.status).toBe(405);
  });

  it('refuses a body over the limit with 413', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getSlot', params: ['x'.repeat(60_000)] });
    const reply = await post(url, big);
    expect(reply.status).toBe(413);
  });

  it('binds where it is told and closes gracefully', async () => {
    const server = new JsonRpcHttpServer({ backend: t.backend, host: '127.0.0.1', port: 0 });
    const bound = await server.start();
    expect(bound.host).toBe('127.0.0.1');
    expect(bound.port).toBeGreaterThan(0);
    expect((await call(bound.url, 'getHealth')).result).toBe('ok');
    await server.close();
    expect(server.address).toBeNull();
    await expect(fetch(bound.url, { method: 'POST' })).rejects.toThrow();
  });

  it('rejects start when the port is taken', async () => {
    const port = t.http.address!.port;
    await expect(new JsonRpcHttpServer({ backend: t.backend, port }).start()).rejects.toThrow(/EADDRINUSE/);
    await expect(new JsonRpcWsServer({ backend: t.backend, port: t.ws.address!.port }).start()).rejects.toThrow(/EADDRINUSE/);
  });

  it('finishes a delayed answer while closing', async () => {
    t.faults.setRpcFault('getHealth', { latencyMs: 100 });
    // Close once the server holds the request (it looks up the method's fault on arrival), not
    // after a guessed delay: under load the request may not have arrived yet.
    const lookup = t.faults.rpcFault.bind(t.faults);
    const arrived = new Promise<void>((resolve) => {
      t.faults.rpcFault = (method: string) => {
        resolve();
        return lookup(method);
      };
    });
    const pending = call(url, 'getHealth');
    await arrived;
    const closing = t.http.close();
    expect((await pending).result).toBe('ok');
    await closing;
  });
});
