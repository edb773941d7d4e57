import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import type { RpcNode, Simulator } from '../sim/index.js';
import { JsonRpcErrorCode } from './proxy-errors.js';
import type { RpcProxy } from './rpc-proxy.js';
import { WsProbe, addNodes, call, eventually, proxyHealth, startProxy, startSim, transferTx } from './testing.js';

/** WS /rpc/ws over real WebSockets, in front of simulator RPC nodes' PubSub. */

let sim: Simulator;
const cleanup: (() => Promise<unknown> | void)[] = [];

beforeAll(async () => {
  sim = await startSim(37);
});

afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

afterAll(async () => {
  await sim.close();
});

async function cluster(n: number, overrides: Parameters<typeof startProxy>[1] = {}): Promise<{ nodes: RpcNode[]; proxy: RpcProxy; url: string; ws: string }> {
  const nodes = await addNodes(sim, Array.from({ length: n }, () => ({})));
  cleanup.push(async () => {
    for (const node of nodes) await sim.rpcNodes.remove(node.id);
  });
  const started = await startProxy(nodes, overrides);
  cleanup.push(() => started.proxy.close());
  return { nodes, ...started };
}

async function client(url: string): Promise<WsProbe> {
  const c = await WsProbe.open(url);
  cleanup.push(() => c.close());
  return c;
}

const holders = (nodes: readonly RpcNode[]): number[] => nodes.map((n) => n.subscriptions);

describe('WS /rpc/ws', () => {
  it('keeps a subscription alive through its upstream\'s death: same id, notifications continue', async () => {
    const { nodes, ws } = await cluster(3);
    const c = await client(ws);
    const sub = await c.request(call('slotSubscribe', undefined, 1));
    expect(sub).toEqual({ jsonrpc: '2.0', result: expect.any(Number), id: 1 });
    const id = sub.result as number;
    const holder = await eventually(() => nodes.find((n) => n.subscriptions === 1), 'the subscription on a node');

    sim.chain.advanceSlot(1);
    const first = await c.notification(id, 'a slot notification');
    expect(first).toMatchObject({ jsonrpc: '2.0', method: 'slotNotification', params: { subscription: id, result: { slot: Number(sim.chain.slot('processed')) } } });

    await holder.stop();
    const next = await eventually(() => nodes.find((n) => n !== holder && n.subscriptions === 1), 'the subscription on another node');
    expect(next).not.toBe(holder);
    for (let i = 0; i < 3; i++) {
      sim.chain.advanceSlot(1);
      const n = await c.notification(id, 'a slot notification after the failover');
      expect(n.params.result.slot).toBe(Number(sim.chain.slot('processed')));
    }
    expect(c.closed).toBeNull();

    expect(await c.request(call('slotUnsubscribe', [id], 2))).toEqual({ jsonrpc: '2.0', result: true, id: 2 });
    await eventually(() => holders(nodes).every((h) => h === 0), 'the upstream subscription released');
    expect(await c.request(call('slotUnsubscribe', [id], 3))).toMatchObject({ id: 3, error: { code: -32602, message: 'Invalid subscription id.' } });
  });

  it('relays account notifications with each holder\'s id; identical subscriptions share one upstream subscription', async () => {
    const { nodes, ws } = await cluster(2);
    const a = await client(ws);
    const b = await client(ws);
    const trader = sim.chain.genesis.actors.traders[1]!.keypair.address;
    const params = [trader, { encoding: 'base64', commitment: 'processed' }];
    const idA = (await a.request(call('accountSubscribe', params, 'x'))).result as number;
    const idB = (await b.request(call('accountSubscribe', params, 'y'))).result as number;
    expect(idA).not.toBe(idB);
    expect(holders(nodes).sort()).toEqual([0, 1]);

    // A transfer to the trader changes its account.
    const { url } = { url: nodes[0]!.rpc };
    await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(call('sendTransaction', [transferTx(sim, 'notify'), { encoding: 'base64' }])) });
    sim.chain.advanceSlot(1);
    const na = await a.notification(idA, 'the account notification for a');
    const nb = await b.notification(idB, 'the account notification for b');
    expect(na.method).toBe('accountNotification');
    expect(na.params.result).toEqual(nb.params.result);
    expect(na.params.result.value.data[1]).toBe('base64');

    a.close();
    sim.chain.advanceSlot(1);
    await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(call('sendTransaction', [transferTx(sim, 'notify 2'), { encoding: 'base64' }])) });
    sim.chain.advanceSlot(1);
    expect((await b.notification(idB, 'b still notified')).params.subscription).toBe(idB);
  });

  it('one client leaving never ends another\'s equivalent subscription: params omitted or [], written in another order, or filled with the node\'s defaults', async () => {
    const { nodes, ws } = await cluster(1);
    const node = nodes[0]!;
    const a = await client(ws);
    const b = await client(ws);
    // slotSubscribe without params and with []: one subscription to the node.
    const slotA = (await a.request(call('slotSubscribe', undefined, 1))).result as number;
    const slotB = (await b.request(call('slotSubscribe', [], 2))).result as number;
    await eventually(() => node.subscriptions === 1, 'one slot subscription on the node');
    sim.chain.advanceSlot(1);
    await a.notification(slotA, 'a slot notification for a');
    await b.notification(slotB, 'a slot notification for b');

    // accountSubscribe: keys in another order (the same JSON), and the node's default encoding
    // written out (another JSON, the same subscription to the node: it answers the same id).
    const trader = sim.chain.genesis.actors.traders[3]!.keypair.address;
    const accA = (await a.request(call('accountSubscribe', [trader, { commitment: 'processed', encoding: 'base64' }], 3))).result as number;
    const accB = (await b.request(call('accountSubscribe', [trader, { encoding: 'base64', commitment: 'processed' }], 4))).result as number;
    const accC = (await b.request(call('accountSubscribe', [trader, { commitment: 'processed' }], 5))).result as number;
    const accD = (await a.request(call('accountSubscribe', [trader, { commitment: 'processed', encoding: 'binary' }], 6))).result as number;
    await eventually(() => node.subscriptions === 3, 'slot, base64 and binary account subscriptions on the node');

    // b leaves: a keeps every notification, and the node keeps the subscriptions a holds.
    b.close();
    await eventually(() => node.subscriptions === 3, 'nothing unsubscribed that a holds');
    const url = node.rpc;
    await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(call('sendTransaction', [transferTx(sim, 'equivalent', 1_000n, 0, 3), { encoding: 'base64' }])) });
    sim.chain.advanceSlot(1);
    await a.notification(slotA, 'a still gets slots');
    expect((await a.notification(accA, 'a still gets the base64 account')).params.result.value.data[1]).toBe('base64');
    expect((await a.notification(accD, 'a still gets the binary account')).params.subscription).toBe(accD);
    expect([accB, accC]).toHaveLength(2);

    // a's own unsubscribe of one of two merged holders keeps the other; the last one releases it.
    expect(await a.request(call('slotUnsubscribe', [slotA], 7))).toMatchObject({ result: true });
    expect(await a.request(call('accountUnsubscribe', [accA], 8))).toMatchObject({ result: true });
    expect(await a.request(call('accountUnsubscribe', [accD], 9))).toMatchObject({ result: true });
    await eventually(() => node.subscriptions === 0, 'every upstream subscription released');
  });

  it('signature subscriptions end after their notification', async () => {
    const { ws } = await cluster(2);
    const c = await client(ws);
    const tx = transferTx(sim, 'signature');
    const sent = await c.request(call('sendTransaction', [tx, { encoding: 'base64' }], 1));
    const signature = sent.result as string;
    const id = (await c.request(call('signatureSubscribe', [signature, { commitment: 'processed' }], 2))).result as number;
    sim.chain.advanceSlot(1);
    const n = await c.notification(id, 'the signature notification');
    expect(n).toMatchObject({ method: 'signatureNotification', params: { result: { value: { err: null } }, subscription: id } });
    expect(await c.request(call('signatureUnsubscribe', [id], 3))).toMatchObject({ error: { code: -32602 } });
  });

  it('moves subscriptions off an endpoint that falls behind', async () => {
    const { nodes, ws, url } = await cluster(2, { health_check_interval: 50, request_timeout: 500, max_slot_lag: 5 });
    const c = await client(ws);
    const id = (await c.request(call('slotSubscribe', undefined, 1))).result as number;
    const holder = await eventually(() => nodes.find((n) => n.subscriptions === 1), 'the subscription on a node');
    holder.slotLag = 20;
    await eventually(async () => (await proxyHealth(url)).endpoints.some((e) => e.state === 'lagging'), 'the lagging endpoint out');
    const other = await eventually(() => nodes.find((n) => n !== holder && n.subscriptions === 1), 'the subscription moved');
    await eventually(() => holder.subscriptions === 0, 'the lagging node released');
    // The node counts the subscribe as it passes; the simulator behind it registers it a moment
    // later, so a slot made at once may come before it: make slots until one is notified.
    const n = await eventually(async () => {
      sim.chain.advanceSlot(1);
      return c.notification(id, 'a notification from the new node', 1_000).catch(() => undefined);
    }, 'a notification from the new node');
    expect(n.params.result.slot).toBe(Number(sim.chain.slot('processed')));
    expect(other.subscriptions).toBe(1);
    holder.slotLag = 0;
  });

  it('answers other calls as POST /rpc does, batches too, and bad messages with JSON-RPC errors', async () => {
    const { nodes, ws } = await cluster(2, { max_body_bytes: 2048 });
    const c = await client(ws);
    expect((await c.request(call('getSlot', [{ commitment: 'processed' }], 'slot'))).result).toBe(Number(sim.chain.slot('processed')));
    c.socket.send(JSON.stringify([call('getSlot', [], 1), { jsonrpc: '2.0', id: 2 }, call('slotSubscribe', undefined, 3)]));
    const batch = await c.next(Array.isArray, 'the batch answer');
    expect(batch).toMatchObject([{ id: 1, result: expect.any(Number) }, { id: 2, error: { code: -32600 } }, { id: 3, result: expect.any(Number) }]);
    expect(await c.request('{"jsonrpc":"2.0","id":1,', null)).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
    expect(await c.request(call('accountSubscribe', ['not a key'], 9))).toMatchObject({ id: 9, error: { code: -32602 } });
    expect(await c.request(call('slotUnsubscribe', ['x'], 10))).toMatchObject({ id: 10, error: { code: -32602 } });

    // Over the size limit: the connection is closed; others are not affected.
    const big = await client(ws);
    big.socket.send(JSON.stringify(call('getMultipleAccounts', [Array(100).fill(sim.chain.pools()[0]!.address)])));
    await eventually(() => big.closed !== null, 'the oversized message closing its connection');
    expect((await c.request(call('getSlot', [], 11))).result).toBeGreaterThan(0);
    void nodes;
  });

  it('answers -32090 when no endpoint takes a subscription', async () => {
    const { nodes, ws } = await cluster(1, { request_timeout: 500 });
    await nodes[0]!.stop();
    const c = await client(ws);
    const r = await c.request(call('slotSubscribe', undefined, 1));
    expect(r).toMatchObject({ id: 1, error: { code: JsonRpcErrorCode.Unavailable, data: { tidepoolCode: 'TP_ERR_RPC_PROXY_UNAVAILABLE' } } });
  });

  it('closes client WebSockets with 1001 on close', async () => {
    const { proxy, ws } = await cluster(1);
    const c = await client(ws);
    await c.request(call('slotSubscribe', undefined, 1));
    await proxy.close();
    await eventually(() => c.closed !== null, 'the client closed');
    expect(c.closed!.code).toBe(1001);
  });
});
