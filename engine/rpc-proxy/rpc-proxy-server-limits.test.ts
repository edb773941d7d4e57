import net from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Simulator } from '../sim/index.js';
import type { RpcProxy } from './rpc-proxy.js';
import { addNodes, startProxy, startSim } from './testing.js';

/**
 * What the RPC proxy's uWS port does about idle and slow connections (issue 11 item 9; README
 * "Limits"): uWebSockets.js v20.30 offers no header or idle timeout setting and no connection cap,
 * only its own fixed timeout of 10 s (checked every 4 s) on a socket that has not completed a
 * request. These tests pin that it covers the cases the node:http ports' settings cover: a socket
 * that sends nothing, one idle after its answer, and one trickling its headers (slowloris).
 */
let sim: Simulator;
let proxy: RpcProxy;
let port = 0;

beforeAll(async () => {
  sim = await startSim();
  const nodes = await addNodes(sim, [{}]);
  const started = await startProxy(nodes);
  proxy = started.proxy;
  port = Number(new URL(started.url).port);
});

afterAll(async () => {
  await proxy.close();
  await sim.close();
});

/** Connects, runs `use` on the socket, and resolves with what the server sent once it closes the socket. */
function closedByServer(use: (socket: net.Socket) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => use(socket));
    let received = '';
    socket.on('data', (d: Buffer) => (received += d.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
  });
}

describe('RPC proxy uWS port: idle and slow connections', () => {
  it('closes a socket that sends nothing, one idle after its answer, and one trickling its headers', async () => {
    const timers: NodeJS.Timeout[] = [];
    const [silent, idle, slowloris] = await Promise.all([
      closedByServer(() => undefined),
      closedByServer((s) => s.write('GET /health HTTP/1.1\r\nHost: proxy\r\n\r\n')),
      closedByServer((s) => {
        s.write('POST /rpc HTTP/1.1\r\nHost: proxy\r\n');
        // One header byte a second: the socket never completes a request.
        const timer = setInterval(() => s.write('X'), 1_000);
        timers.push(timer);
        s.on('close', () => clearInterval(timer));
      }),
    ]);
    for (const t of timers) clearInterval(t);
    expect(silent).toBe('');
    expect(idle).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(slowloris).toBe('');
  }, 30_000);
});

describe('RPC proxy: batches', () => {
  const post = async (body: unknown): Promise<unknown> => {
    const res = await fetch(`http://127.0.0.1:${port}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return res.json();
  };

  it('refuses a batch of more than 100 calls with one error, reading none of them; takes 100', async () => {
    const invalid = new Array<number>(25_000).fill(1); // 50 KB: each item an invalid call
    expect(await post(invalid)).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request: a batch holds at most 100 calls; this one holds 25000' }, id: null });
    const calls = Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'getSlot' }));
    const replies = (await post(calls)) as { id: number; result?: number }[];
    expect(replies).toHaveLength(100);
    expect(replies.every((r) => typeof r.result === 'number')).toBe(true);
  });
});
