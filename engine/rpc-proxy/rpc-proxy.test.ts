import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { exposedTypes } from '../obs/exposition.js';
import { hasPromtool, runPromtool } from '../obs/index.js';
import type { RpcNode, Simulator } from '../sim/index.js';
import { JsonRpcErrorCode } from './proxy-errors.js';
import { RPC_PROXY_METRIC_NAMES } from './rpc-proxy-metrics.js';
import type { RpcProxy } from './rpc-proxy.js';
import { addNodes, call, eventually, getJson, post, proxyHealth, startProxy, startSim, transferTx } from './testing.js';

/**
 * The proxy over real HTTP, in front of simulator RPC nodes (one chain, several JSON-RPC ports,
 * each with its own faults and slot lag).
 */

let sim: Simulator;
const cleanup: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  sim = await startSim(31);
});

afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

afterAll(async () => {
  await sim.close();
});

async function cluster(options: Parameters<typeof addNodes>[1], proxyOverrides: Parameters<typeof startProxy>[1] = {}): Promise<{ nodes: RpcNode[]; proxy: RpcProxy; url: string }> {
  const nodes = await addNodes(sim, options);
  cleanup.push(async () => {
    for (const n of nodes) await sim.rpcNodes.remove(n.id);
  });
  const started = await startProxy(nodes, proxyOverrides);
  cleanup.push(() => started.proxy.close());
  return { nodes, proxy: started.proxy, url: started.url };
}

const received = (nodes: readonly RpcNode[], method: string): number[] => nodes.map((n) => n.received(method));
const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);

function someAccount(): string {
  return sim.chain.pools()[0]!.address;
}

describe('POST /rpc', () => {
  it('forwards a call byte for byte, u64 values included, and balances round robin', async () => {
    const { nodes, url } = await cluster([{}, {}, {}]);
    const body = JSON.stringify(call('getAccountInfo', [someAccount(), { encoding: 'base64', commitment: 'processed' }], 12345678901234567890n.toString()));
    const direct = await post(nodes[0]!.rpc, body, '');
    const proxied = await post(url, body);
    expect(proxied.status).toBe(200);
    expect(proxied.text).toBe(direct.text);
    // rentEpoch is u64::MAX: JSON.parse would round it, the proxy does not.
    expect(proxied.text).toContain('"rentEpoch":18446744073709551615');

    const before = received(nodes, 'getBalance');
    for (let i = 0; i < 6; i++) expect((await post(url, call('getBalance', [someAccount()], i))).json.result.value).toBeGreaterThan(0);
    expect(received(nodes, 'getBalance').map((n, i) => n - before[i]!)).toEqual([2, 2, 2]);
  });

  it('takes a down, a slow and a lagging endpoint out of rotation, serves from the healthy one, and puts them back', async () => {
    const { nodes, url } = await cluster([{}, {}, {}, { slotLag: 50 }], { health_check_interval: 50, request_timeout: 300, max_slot_lag: 10 });
    const [good, down, slow, lagging] = nodes as [RpcNode, RpcNode, RpcNode, RpcNode];
    await down.stop();
    slow.faults.setRpcFault('*', { latencyMs: 1_000 });
    const h = await eventually(async () => {
      const r = await proxyHealth(url);
      const states = r.endpoints.map((e) => e.state);
      return states.join() === 'up,down,down,lagging' ? r : undefined;
    }, 'down, slow and lagging endpoints out of rotation');
    expect(h.status).toBe('degraded');
    expect(h.endpoints[1]!.reason).toMatch(/ECONNREFUSED|connect/i);
    expect(h.endpoints[2]!.reason).toMatch(/timeout/);
    expect(h.endpoints[3]!.slotLag).toBe(50);
    expect(h.endpoints[3]!.reason).toContain('50 slots behind');
    expect(h.endpoints[0]!.slot).toBe(sim.chain.slot('processed').toString());
    expect((await getJson(url, '/ready')).status).toBe(200);
    // Every field /rpc/health documents, per endpoint and in all.
    expect(h).toMatchObject({ draining: false, bestSlot: expect.any(String), maxSlotLag: 10, healthCheckIntervalMs: 50, wsClients: 0, wsSubscriptions: 0 });
    expect(h.healthCheckRounds).toBeGreaterThan(0);
    for (const e of h.endpoints) {
      expect(e).toMatchObject({
        name: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
        inRotation: e.state === 'up',
        consecutiveFailures: expect.any(Number),
        requests: expect.any(Number),
        errors: { connect: expect.any(Number), network: expect.any(Number), timeout: expect.any(Number), http: expect.any(Number), rpc: expect.any(Number) },
        inFlight: expect.any(Number),
        connections: { open: expect.any(Number), busy: expect.any(Number), queued: expect.any(Number) },
        wsSubscriptions: 0,
        lastCheckUnixMs: expect.any(Number),
      });
    }
    expect(h.endpoints[0]!.latencyMs).toEqual(expect.any(Number));
    expect(h.endpoints[0]!.slotLag).toBe(0);
    expect((await getJson(url, '/health')).status).toBe(200);

    const before = received(nodes, 'getBalance');
    for (let i = 0; i < 8; i++) expect((await post(url, call('getBalance', [someAccount()], i))).json.result.value).toBeGreaterThanOrEqual(0);
    const after = received(nodes, 'getBalance');
    expect(after.map((n, i) => n - before[i]!)).toEqual([8, 0, 0, 0]);

    await down.start();
    slow.faults.clear();
    lagging.slotLag = 0;
    await eventually(async () => (await proxyHealth(url)).status === 'ok', 'every endpoint back in rotation');
    const spread = received(nodes, 'getBalance');
    for (let i = 0; i < 8; i++) await post(url, call('getBalance', [someAccount()], i));
    expect(received(nodes, 'getBalance').map((n, i) => n - spread[i]!)).toEqual([2, 2, 2, 2]);
    expect(good.received('getHealth')).toBeGreaterThan(0);
  });

  it('keeps checking an endpoint whose connections are all busy on its own connections', async () => {
    const { nodes, proxy, url } = await cluster([{}], { max_connections_per_endpoint: 1, request_timeout: 500, health_check_interval: 20, failure_threshold: 1000 });
    nodes[0]!.faults.setRpcFault('getBalance', { latencyMs: 450 });
    const rounds = proxy.health.rounds;
    // Four reads on one connection: the last ones wait in the queue past the deadline.
    await Promise.all(Array.from({ length: 4 }, (_, i) => post(url, call('getBalance', [someAccount()], i))));
    await eventually(() => proxy.health.rounds > rounds + 10, 'health rounds during and after the burst');
    const h = await proxyHealth(url);
    expect(h.endpoints[0]!.state).toBe('up');
    expect(await (await fetch(`${url}/rpc/metrics`)).text()).not.toMatch(/rpc_proxy_health_checks_total\{[^}]*outcome="down"\}/);
  });

  it('answers 503 on /ready and /rpc/health when no endpoint is in rotation', async () => {
    const { nodes, url } = await cluster([{}], { health_check_interval: 50, request_timeout: 300 });
    await nodes[0]!.stop();
    await eventually(async () => (await getJson(url, '/ready')).status === 503, '/ready 503');
    const h = await getJson(url, '/rpc/health');
    expect(h.status).toBe(503);
    expect(h.json.status).toBe('unavailable');
    // Still tried (the checks may be stale): refused, so never sent anywhere.
    const r = await post(url, call('getSlot'));
    expect(r.status).toBe(503);
    expect(r.json.error.code).toBe(JsonRpcErrorCode.Unavailable);
    expect(r.json.error.data.tidepoolCode).toBe('TP_ERR_RPC_PROXY_UNAVAILABLE');
    expect((await getJson(url, '/health')).status).toBe(200);
  });
});

describe('reads are retried on another endpoint', () => {
  it('after a connection refused, a timeout or an HTTP 5xx', async () => {
    // A provider's gateway: healthy at the first check, then answering 503.
    let busy = false;
    let target = '';
    const gateway: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (busy) {
          res.writeHead(503, { 'content-type': 'text/plain' }).end('upstream busy');
          return;
        }
        void fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) }).then(async (r) => {
          res.writeHead(r.status, { 'content-type': 'application/json' }).end(await r.text());
        });
      });
    });
    await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', r));
    cleanup.push(() => new Promise((r) => gateway.close(r)));
    const gatewayUrl = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
    const nodes = await addNodes(sim, [{}, {}, {}]);
    cleanup.push(async () => {
      for (const n of nodes) await sim.rpcNodes.remove(n.id);
    });
    const [good, dead, slow] = nodes as [RpcNode, RpcNode, RpcNode];
    const { proxy, url } = await startProxy([good, dead, slow], { request_timeout: 300, retry_count: 3, failure_threshold: 1000 });
    cleanup.push(() => proxy.close());
    // Every endpoint passed the first check; now one dies and one slows down, unseen by the checks (1 min apart).
    await dead.stop();
    slow.faults.setRpcFault('getBalance', { latencyMs: 2_000 });
    for (let i = 0; i < 9; i++) {
      const r = await post(url, call('getBalance', [someAccount()], i));
      expect(r.status).toBe(200);
      expect(r.json.result.value).toBeGreaterThanOrEqual(0);
    }
    expect(good.received('getBalance')).toBe(9);
    expect(slow.received('getBalance')).toBeGreaterThan(0);
    const metrics = await (await fetch(`${url}/rpc/metrics`)).text();
    expect(metrics).toMatch(/rpc_proxy_retries_total\{endpoint="127\.0\.0\.1:\d+",method="getBalance"\} [1-9]/);
    expect(metrics).toMatch(/rpc_proxy_errors_total\{endpoint="127\.0\.0\.1:\d+",method="getBalance",kind="timeout"\} [1-9]/);
    expect(metrics).toMatch(/rpc_proxy_errors_total\{endpoint="127\.0\.0\.1:\d+",method="getBalance",kind="connect"\} [1-9]/);

    // The gateway starts answering 503: reads go to the next endpoint.
    target = good.rpc;
    const { proxy: withGateway, url: gw } = await startProxyRaw([gatewayUrl, good.rpc]);
    cleanup.push(() => withGateway.close());
    expect(withGateway.healthReport().endpoints.map((e) => e.state)).toEqual(['up', 'up']);
    busy = true;
    for (let i = 0; i < 4; i++) expect((await post(gw, call('getSlot', [], i))).json.result).toBeGreaterThan(0);
    const m2 = await (await fetch(`${gw}/rpc/metrics`)).text();
    expect(m2).toMatch(/rpc_proxy_errors_total\{endpoint="127\.0\.0\.1:\d+",method="getSlot",kind="http"\} [1-9]/);
  });

  it('gives up after retry_count more attempts with -32091', async () => {
    const { nodes, url } = await cluster([{}, {}], { request_timeout: 200, retry_count: 1, failure_threshold: 1000 });
    for (const n of nodes) n.faults.setRpcFault('getBalance', { latencyMs: 1_500 });
    const r = await post(url, call('getBalance', [someAccount()], 'x'));
    expect(r.status).toBe(504);
    expect(r.json).toMatchObject({ jsonrpc: '2.0', id: 'x', error: { code: JsonRpcErrorCode.UpstreamFailed, data: { tidepoolCode: 'TP_ERR_RPC_PROXY_UPSTREAM_FAILED', attempts: 2 } } });
    expect(received(nodes, 'getBalance')).toEqual([1, 1]);
  });
});

/** A proxy over arbitrary endpoint URLs (the simulator's PubSub is not used). */
async function startProxyRaw(endpoints: string[]): Promise<{ proxy: RpcProxy; url: string }> {
  const { createRpcProxy } = await import('./rpc-proxy.js');
  const { defaultRpcProxyConfig } = await import('./rpc-proxy-config.js');
  const { silent } = await import('./testing.js');
  const proxy = createRpcProxy(defaultRpcProxyConfig({ endpoints, port: 0, health_check_interval: 60_000, request_timeout: 1_000, failure_threshold: 1000 }), { logger: silent });
  const port = await proxy.start();
  return { proxy, url: `http://127.0.0.1:${port}` };
}

describe('writes are never sent twice', () => {
  it('sendTransaction reaches one endpoint once when that endpoint dies mid-request', async () => {
    const { nodes, url } = await cluster([{}, {}, {}], { request_timeout: 5_000, retry_count: 3 });
    for (const n of nodes) n.faults.setRpcFault('sendTransaction', { latencyMs: 30_000 });
    const pending = post(url, call('sendTransaction', [transferTx(sim, 'mid-request death'), { encoding: 'base64' }], 77));
    const holder = await eventually(() => nodes.find((n) => n.received('sendTransaction') === 1), 'the transaction reaching a node');
    await holder.stop();
    const r = await pending;
    expect(r.status).toBe(502);
    expect(r.json).toMatchObject({ id: 77, error: { code: JsonRpcErrorCode.WriteOutcomeUnknown, data: { tidepoolCode: 'TP_ERR_RPC_PROXY_WRITE_OUTCOME_UNKNOWN', attempts: 1 } } });
    expect(sum(received(nodes, 'sendTransaction'))).toBe(1);
    // Nor later: the proxy is done with the call; another health round and reads change nothing.
    await post(url, call('getSlot'));
    expect(sum(received(nodes, 'sendTransaction'))).toBe(1);
  });

  it('sendTransaction times out on its endpoint: answered -32092, not sent elsewhere', async () => {
    const { nodes, url } = await cluster([{}, {}], { request_timeout: 300, retry_count: 3 });
    for (const n of nodes) n.faults.setRpcFault('sendTransaction', { latencyMs: 5_000 });
    const r = await post(url, call('sendTransaction', [transferTx(sim, 'timeout'), { encoding: 'base64' }], 5));
    expect(r.status).toBe(504);
    expect(r.json.error.code).toBe(JsonRpcErrorCode.WriteOutcomeUnknown);
    expect(sum(received(nodes, 'sendTransaction'))).toBe(1);
  });

  it('a write that could not be delivered goes to the next endpoint, once', async () => {
    const { nodes, url } = await cluster([{}, {}, {}], { failure_threshold: 1000 });
    await nodes[0]!.stop();
    const signatures = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const r = await post(url, call('sendTransaction', [transferTx(sim, `reroute ${i}`), { encoding: 'base64' }], i));
      expect(r.status).toBe(200);
      signatures.add(r.json.result as string);
    }
    expect(signatures.size).toBe(3);
    expect(nodes[0]!.received('sendTransaction')).toBe(0);
    expect(sum(received(nodes, 'sendTransaction'))).toBe(3);
    sim.chain.advanceSlot(1);
    for (const s of signatures) expect(sim.chain.signatureStatus(s)?.err).toBeNull();
  });

  it('unknown methods are writes: sent once, the node\'s "Method not found" passed back', async () => {
    const { nodes, url } = await cluster([{}, {}], { request_timeout: 300, retry_count: 3 });
    const r = await post(url, call('sendSomethingNew', [1], 9));
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 9 });
    const metrics = await (await fetch(`${url}/rpc/metrics`)).text();
    const sent = [...metrics.matchAll(/^rpc_proxy_requests_total\{endpoint="[^"]+",method="other"\} (\d+)$/gm)].map((m) => Number(m[1]));
    expect(sum(sent)).toBe(1);
    void nodes;
  });
});

describe('batches', () => {
  it('answer every call in order, ids as sent, reads and writes split, per-call errors', async () => {
    const { nodes, url } = await cluster([{}, {}], { request_timeout: 300, retry_count: 3 });
    const account = someAccount();
    const tx = transferTx(sim, 'in a batch');
    const batch =
      '[' +
      [
        '{"jsonrpc":"2.0","id":"a","method":"getBalance","params":["' + account + '"]}',
        '{"id":7,"method":"getSlot"}',
        '{"jsonrpc":"2.0","id":3,"method":"sendTransaction","params":["' + tx + '",{"encoding":"base64"}]}',
        '{"jsonrpc":"2.0","method":"getSlot"}',
        '{"jsonrpc":"2.0","id":18446744073709551615,"method":"getAccountInfo","params":["' + account + '",{"encoding":"base64"}]}',
        '{"jsonrpc":"2.0","id":5,"method":"fooBar"}',
        '42',
        '{"jsonrpc":"2.0","id":"a","method":"getBalance","params":["not a key"]}',
      ].join(',') +
      ']';
    const before = { balance: received(nodes, 'getBalance'), send: received(nodes, 'sendTransaction') };
    const r = await post(url, batch);
    expect(r.status).toBe(200);
    const answers = r.json as any[];
    expect(answers).toHaveLength(7);
    expect(answers[0]).toMatchObject({ id: 'a', result: { value: expect.any(Number) } });
    expect(answers[1]).toMatchObject({ id: 7, error: { code: JsonRpcErrorCode.InvalidRequest } });
    expect(answers[2]).toMatchObject({ id: 3, result: expect.any(String) });
    // The u64 id comes back exactly as sent.
    expect(r.text).toContain('"id":18446744073709551615}');
    expect(answers[3].result.value.data[1]).toBe('base64');
    expect(answers[4]).toEqual({ jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 5 });
    expect(answers[5]).toMatchObject({ id: null, error: { code: JsonRpcErrorCode.InvalidRequest } });
    expect(answers[6]).toMatchObject({ id: 'a', error: { code: -32602 } });
    expect(sum(received(nodes, 'getBalance')) - sum(before.balance)).toBe(2);
    expect(sum(received(nodes, 'sendTransaction')) - sum(before.send)).toBe(1);
  });

  it('retry their reads as one batch and never their writes', async () => {
    const { nodes, url } = await cluster([{}, {}], { request_timeout: 300, retry_count: 3, failure_threshold: 1000 });
    await nodes[0]!.stop();
    for (const n of nodes) n.faults.setRpcFault('sendTransaction', { latencyMs: 2_000 });
    const batch = [call('getSlot', [], 1), call('sendTransaction', [transferTx(sim, 'batch write'), { encoding: 'base64' }], 2), call('getSlot', [], 3)];
    const r = await post(url, batch);
    expect(r.status).toBe(200);
    const [a, b, c] = r.json as any[];
    expect(a).toMatchObject({ id: 1, result: expect.any(Number) });
    expect(b).toMatchObject({ id: 2, error: { code: JsonRpcErrorCode.WriteOutcomeUnknown } });
    expect(c).toMatchObject({ id: 3, result: expect.any(Number) });
    expect(received(nodes, 'sendTransaction')).toEqual([0, 1]);
  });

  it('of notifications only get an empty answer; an empty batch is an invalid request', async () => {
    const { url } = await cluster([{}]);
    const none = await post(url, [{ jsonrpc: '2.0', method: 'getSlot' }]);
    expect(none).toMatchObject({ status: 200, text: '' });
    const empty = await post(url, '[]');
    expect(empty.status).toBe(200);
    expect(empty.json).toMatchObject({ id: null, error: { code: JsonRpcErrorCode.InvalidRequest } });
  });
});

describe('bad input', () => {
  it('gets JSON-RPC errors, never a crash, and the proxy keeps serving', async () => {
    const { url } = await cluster([{}], { max_body_bytes: 4096 });
    const parse = await post(url, '{"jsonrpc":"2.0","id":1,"method":');
    expect(parse.status).toBe(200);
    expect(parse.json).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
    expect((await post(url, Buffer.from([0x7b, 0xff, 0xfe, 0x7d]))).json.error.code).toBe(-32700);
    expect((await post(url, '')).json.error.code).toBe(-32700);
    expect((await post(url, '"just a string"')).json).toMatchObject({ id: null, error: { code: -32600 } });
    expect((await post(url, { jsonrpc: '2.0', id: 4 })).json).toMatchObject({ id: 4, error: { code: -32600, message: 'Invalid request: method must be a non-empty string' } });
    expect((await post(url, { jsonrpc: '1.0', id: 4, method: 'getSlot' })).json.error.code).toBe(-32600);
    expect((await post(url, { jsonrpc: '2.0', id: { x: 1 }, method: 'getSlot' })).json).toMatchObject({ id: null, error: { code: -32600 } });
    expect((await post(url, { jsonrpc: '2.0', id: 1, method: 'getSlot', params: 5 })).json.error.code).toBe(-32600);
    expect((await post(url, { jsonrpc: '2.0', id: 1, method: 'getSlot', extra: true })).json.error.message).toContain('unknown member');
    // A batch of one item nested 2,000 deep: that item is not a call.
    const deep = await post(url, '['.repeat(2_000) + ']'.repeat(2_000));
    expect(deep.json).toEqual([{ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request: a call must be a JSON object' }, id: null }]);

    const huge = await post(url, JSON.stringify(call('getMultipleAccounts', [Array(200).fill(someAccount())])));
    expect(huge.status).toBe(413);
    expect(huge.json).toMatchObject({ id: null, error: { code: -32600, message: 'Invalid request: the body exceeds 4096 bytes' } });
    // Without a content-length (chunked), refused the same way once past the limit.
    const chunked = await fetch(`${url}/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new ReadableStream({
        start(controller) {
          for (let i = 0; i < 10; i++) controller.enqueue(new TextEncoder().encode(' '.repeat(1000)));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit).then(
      async (res) => res.status,
      () => 'reset',
    );
    expect([413, 'reset']).toContain(chunked);
    expect((await fetch(`${url}/rpc`)).status).toBe(405);
    expect((await fetch(`${url}/nope`)).status).toBe(404);

    expect((await post(url, call('getSlot'))).json.result).toBeGreaterThan(0);
    const metrics = await (await fetch(`${url}/rpc/metrics`)).text();
    expect(metrics).toMatch(/rpc_proxy_errors_total\{endpoint="none",method="none",kind="parse_error"\} 3/);
    expect(metrics).toMatch(/rpc_proxy_errors_total\{endpoint="none",method="none",kind="too_large"\} [12]/);
  });
});

describe('operations', () => {
  it.skipIf(!hasPromtool())('exposes metrics with promtool-clean names: requests, errors and latency by endpoint and method, health, subscriptions', async () => {
    const { url } = await cluster([{}, {}]);
    await post(url, call('getSlot'));
    await post(url, call('getBalance', ['bad key']));
    await post(url, '{');
    await post(url, [call('getSlot', [], 1), call('getSlot', [], 2)]);
    const res = await fetch(`${url}/rpc/metrics`);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    const types = exposedTypes(text);
    for (const name of Object.values(RPC_PROXY_METRIC_NAMES)) expect(types.has(name), name).toBe(true);
    expect(text).toMatch(/rpc_proxy_requests_total\{endpoint="127\.0\.0\.1:\d+",method="getSlot"\} 1/);
    expect(text).toMatch(/rpc_proxy_requests_total\{endpoint="127\.0\.0\.1:\d+",method="batch"\} 1/);
    expect(text).toMatch(/rpc_proxy_errors_total\{endpoint="127\.0\.0\.1:\d+",method="getBalance",kind="rpc"\} 1/);
    expect(text).toMatch(/rpc_proxy_request_duration_seconds_bucket\{le="0\.005",endpoint="127\.0\.0\.1:\d+",method="getSlot"\}/);
    expect(text).toMatch(/rpc_proxy_calls_total\{method="getSlot",transport="http"\} 3/);
    expect(text).toMatch(/rpc_proxy_endpoint_up\{endpoint="127\.0\.0\.1:\d+"\} 1/);
    const check = runPromtool(['check', 'metrics'], text);
    expect(check.stdout + check.stderr).toBe('');
    expect(check.status).toBe(0);
  });

  it('closes gracefully: the call in flight is answered, new connections are refused', async () => {
    const nodes = await addNodes(sim, [{}]);
    cleanup.push(() => sim.rpcNodes.remove(nodes[0]!.id));
    const { proxy, url } = await startProxy(nodes, { shutdown_timeout: 5_000 });
    nodes[0]!.faults.setRpcFault('getBalance', { latencyMs: 300 });
    const pending = post(url, call('getBalance', [someAccount()], 'late'));
    await eventually(() => nodes[0]!.received('getBalance') === 1, 'the call reaching the node');
    const closing = proxy.close();
    const r = await pending;
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ id: 'late', result: { value: expect.any(Number) } });
    await closing;
    await expect(fetch(`${url}/health`)).rejects.toThrow();
  });
});
