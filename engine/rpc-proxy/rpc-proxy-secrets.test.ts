import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { RpcNode, Simulator } from '../sim/index.js';
import type { RpcProxy } from './rpc-proxy.js';
import { defaultRpcProxyConfig } from './rpc-proxy-config.js';
import { createRpcProxy } from './rpc-proxy.js';
import { addNodes, call, post, silent, startProxy, startSim } from './testing.js';

/**
 * Issue 11, item 4: an upstream URL with user info and an api-key parameter never shows in the
 * proxy's metrics labels or its health body.
 */
let sim: Simulator;
let nodes: RpcNode[];
let proxy: RpcProxy;
let url: string;

beforeAll(async () => {
  sim = await startSim(37);
  nodes = await addNodes(sim, [{}]);
  const withSecrets = nodes.map((n) => {
    const u = new URL(n.rpc);
    return `http://operator:s3cretpw@${u.host}${u.pathname}?api-key=K3YK3Y`;
  });
  ({ proxy, url } = await startProxy(nodes, { endpoints: withSecrets, ws_endpoints: nodes.map((n) => n.pubsub) }));
});

afterAll(async () => {
  await proxy?.close();
  for (const n of nodes ?? []) await sim.rpcNodes.remove(n.id);
  await sim?.close();
});

describe('RPC proxy endpoints with credentials', () => {
  it('labels metrics and reports health by host:port only', async () => {
    const answer = await post(url, JSON.stringify(call('getSlot', [])));
    expect(answer.status).toBe(200);
    const metrics = await (await fetch(`${url}/rpc/metrics`)).text();
    const health = await (await fetch(`${url}/rpc/health`)).text();
    expect(metrics).toContain('endpoint="127.0.0.1:');
    for (const text of [metrics, health]) {
      expect(text).not.toContain('s3cretpw');
      expect(text).not.toContain('K3YK3Y');
      expect(text).not.toContain('operator');
    }
  });
});

describe('RPC proxy upstream with user info', () => {
  it('sends it as HTTP Basic auth to the upstream', async () => {
    const seen: (string | undefined)[] = [];
    const upstream = createServer((req, res) => {
      seen.push(req.headers.authorization);
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":7}'));
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const port = (upstream.address() as AddressInfo).port;
    const config = defaultRpcProxyConfig({ endpoints: [`http://operator:p%40ss@127.0.0.1:${port}/`], ws_endpoints: [`ws://127.0.0.1:${port}/`], port: 0, health_check_interval: 60_000 });
    const p = createRpcProxy(config, { logger: silent });
    const proxyPort = await p.start();
    try {
      const answer = await post(`http://127.0.0.1:${proxyPort}`, JSON.stringify(call('getSlot', [])));
      expect(answer.status).toBe(200);
      expect(seen.length).toBeGreaterThan(0);
      for (const header of seen) expect(header).toBe(`Basic ${Buffer.from('operator:p@ss').toString('base64')}`);
    } finally {
      await p.close();
      await new Promise((r) => upstream.close(r));
    }
  });
});
