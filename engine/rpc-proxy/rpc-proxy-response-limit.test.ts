import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { defaultRpcProxyConfig } from './rpc-proxy-config.js';
import { createRpcProxy, type RpcProxy } from './rpc-proxy.js';
import { call, post, silent } from './testing.js';

/**
 * The proxy's response limit (rpc-proxy-server.ts DEFAULT_RESPONSE_LIMIT_MS): uWebSockets.js closes
 * a connection whose response is not sent within 10 s, so a call whose upstream is still silent
 * then must be answered by the proxy first. Here an upstream answers the health checks and holds
 * every other call; the limit is shortened to 300 ms, the upstream deadline left at 5 s.
 */
let upstream: http.Server;
const held: http.ServerResponse[] = [];
let proxy: RpcProxy;
let url = '';

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // The health checks (getHealth, getSlot) are answered; every other call is held.
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { method?: string };
      if (body.method === 'getHealth') return res.end('{"jsonrpc":"2.0","id":1,"result":"ok"}');
      if (body.method === 'getSlot') return res.end('{"jsonrpc":"2.0","id":1,"result":100}');
      held.push(res);
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const config = defaultRpcProxyConfig({
    endpoints: [`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`],
    port: 0,
    health_check_interval: 60_000,
    request_timeout: 5_000,
    retry_count: 0,
    shutdown_timeout: 100,
  });
  proxy = createRpcProxy(config, { logger: silent, responseLimitMs: 300 });
  url = `http://127.0.0.1:${await proxy.start()}`;
});

afterAll(async () => {
  for (const res of held) res.end('{"jsonrpc":"2.0","id":1,"result":0}');
  await proxy.close();
  await new Promise((resolve) => upstream.close(resolve));
});

describe('RPC proxy response limit', () => {
  it('answers a held read with its id and the no-answer error before uWS would close the connection', async () => {
    const answer = await post(url, call('getBalance', ['11111111111111111111111111111111'], 7));
    expect(answer.json).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32091, data: { reason: "no answer within the proxy's response limit of 300 ms" } } });
    expect(answer.status).toBeGreaterThanOrEqual(500);
  });

  it('answers a held write as one whose outcome is unknown', async () => {
    const answer = await post(url, call('sendTransaction', ['AQ=='], 'w1'));
    expect(answer.json).toMatchObject({ id: 'w1', error: { code: -32092 } });
  });

  it('answers each call of a held batch, none for its notification', async () => {
    const batch = [call('getBalance', ['11111111111111111111111111111111'], 1), { jsonrpc: '2.0', method: 'getSlot' }, call('getEpochInfo', [], 2)];
    const answer = await post(url, batch);
    expect(answer.status).toBe(200);
    expect(answer.json).toHaveLength(2);
    expect(answer.json.map((r: { id: number; error: { code: number } }) => [r.id, r.error.code])).toEqual([
      [1, -32091],
      [2, -32091],
    ]);
  });

  it('drops the upstream answer that comes after the limit, and the connection serves the next call', async () => {
    const first = await post(url, call('getBalance', ['11111111111111111111111111111111'], 8));
    expect(first.json.error.code).toBe(-32091);
    // The held call's late answer reaches the proxy now; it must not be written on the connection.
    const late = held.pop()!;
    late.end('{"jsonrpc":"2.0","id":8,"result":{"value":5}}');
    await new Promise((resolve) => late.on('finish', resolve));
    const next = await post(url, call('getBalance', ['11111111111111111111111111111111'], 9));
    expect(next.json).toMatchObject({ id: 9, error: { code: -32091 } });
  });
});
