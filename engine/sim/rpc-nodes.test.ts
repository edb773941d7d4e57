import { once } from 'node:events';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';

import { loadConfig } from '../config/index.js';
import { createLogger } from '../obs/index.js';
import { simSchema } from './sim-config.js';
import { createSimulator, type Simulator } from './simulator.js';

let sim: Simulator;
let admin: string;

beforeAll(async () => {
  // A manual chain without generated traffic: slots only on advanceSlot().
  const flags = { seed: '23', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', tokens: '2', 'pools-per-kind': '1', 'tx-rate': '0' };
  sim = createSimulator(loadConfig(simSchema, { env: {}, flags }).values, { manual: true, logger: createLogger({ level: 'silent' }) });
  admin = (await sim.start()).http;
  sim.chain.advanceSlot(40);
});

afterAll(async () => {
  await sim.close();
});

async function rpc(url: string, method: string, params?: unknown): Promise<any> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, ...(params === undefined ? {} : { params }) }),
  });
  return res.json();
}

async function adminCall(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${admin}${path}`, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  return { status: res.status, body: await res.json() };
}

describe('simulator RPC nodes', () => {
  it('serve the same chain with their slots behind by the node lag', async () => {
    const node = await sim.rpcNodes.add({ slotLag: 7 });
    const chainSlot = sim.chain.slot('processed');
    expect((await rpc(node.rpc, 'getSlot', [{ commitment: 'processed' }])).result).toBe(Number(chainSlot - 7n));
    const info = await rpc(node.rpc, 'getLatestBlockhash', [{ commitment: 'processed' }]);
    expect(info.result.context.slot).toBe(Number(chainSlot - 7n));
    node.slotLag = 0;
    expect((await rpc(node.rpc, 'getSlot', [{ commitment: 'processed' }])).result).toBe(Number(chainSlot));
    await sim.rpcNodes.remove(node.id);
  });

  it('count the calls they receive by method, and keep their own faults', async () => {
    const node = await sim.rpcNodes.add();
    node.faults.setRpcFault('getHealth', { errorRate: 1, errorCode: -32005, errorMessage: 'Node is unhealthy' });
    expect((await rpc(node.rpc, 'getHealth')).error).toEqual({ code: -32005, message: 'Node is unhealthy' });
    expect((await rpc(sim.servers.rpc.address!.url, 'getHealth')).result).toBe('ok');
    await rpc(node.rpc, 'getSlot');
    await rpc(node.rpc, 'noSuchMethod');
    expect(node.received('getHealth')).toBe(1);
    expect(node.received('getSlot')).toBe(1);
    expect(node.received('noSuchMethod')).toBe(0);
    await sim.rpcNodes.remove(node.id);
  });

  it('die with their connections cut and come back on the same ports', async () => {
    const node = await sim.rpcNodes.add();
    const { rpc: url, ws } = { rpc: node.rpc, ws: node.pubsub };
    const socket = new WebSocket(ws);
    await once(socket, 'open');
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'slotSubscribe' }));
    await once(socket, 'message');
    expect(node.subscriptions).toBe(1);
    node.faults.setRpcFault('getSlot', { latencyMs: 60_000 });
    const pending = fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}' });
    while (node.received('getSlot') === 0) await new Promise((r) => setTimeout(r, 5));
    const closed = once(socket, 'close');
    await node.stop();
    await expect(pending).rejects.toThrow();
    expect((await closed)[0]).toBe(1006);
    await expect(rpc(url, 'getSlot')).rejects.toThrow();
    await node.start();
    node.faults.clear();
    expect(node.rpc).toBe(url);
    expect((await rpc(url, 'getHealth')).result).toBe('ok');
    await sim.rpcNodes.remove(node.id);
  });

  it('are added, changed and removed over /admin/rpc-nodes, bad bodies changing nothing', async () => {
    const added = await adminCall('POST', '/admin/rpc-nodes', { slotLag: 3 });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ running: true, slotLag: 3, received: {}, rpcFaults: {} });
    const id = added.body.id as number;
    expect((await adminCall('GET', '/admin/rpc-nodes')).body.nodes.map((n: { id: number }) => n.id)).toContain(id);

    const bad = await adminCall('POST', `/admin/rpc-nodes/${id}`, { slotLag: 1, rpc: { getSlot: { errorRate: 2 } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('rpc.getSlot.errorRate');
    expect((await adminCall('GET', `/admin/rpc-nodes/${id}`)).body.slotLag).toBe(3);
    expect((await adminCall('POST', `/admin/rpc-nodes/${id}`, { lag: 1 })).status).toBe(400);

    const changed = await adminCall('POST', `/admin/rpc-nodes/${id}`, { slotLag: 0, rpc: { getSlot: { latencyMs: 5 } }, running: false });
    expect(changed.body).toMatchObject({ running: false, slotLag: 0, rpcFaults: { getSlot: { latencyMs: 5 } } });
    await expect(rpc(changed.body.rpc, 'getSlot')).rejects.toThrow();
    expect((await adminCall('POST', `/admin/rpc-nodes/${id}`, { running: true })).body.running).toBe(true);
    expect((await rpc(changed.body.rpc, 'getSlot')).result).toBeGreaterThan(0);

    expect((await adminCall('DELETE', `/admin/rpc-nodes/${id}`)).body).toEqual({ id, removed: true });
    expect((await adminCall('GET', `/admin/rpc-nodes/${id}`)).status).toBe(404);
    expect((await adminCall('GET', '/admin/rpc-nodes/x')).status).toBe(404);
  });
});
