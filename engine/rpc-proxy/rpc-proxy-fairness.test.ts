import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Simulator } from '../sim/index.js';
import type { RpcProxy } from './rpc-proxy.js';
import { WsProbe, addNodes, call, eventually, postFrom, startProxy, startSim } from './testing.js';

/**
 * Issue 26 item 4: no client takes another's share of the proxy. A per-client rate limit
 * (rate_limit_rps, keyed by API key / JWT subject / remote address as the quote service keys its
 * clients) answers HTTP 429 with Retry-After and a -32093 body, or a -32093 reply on the WebSocket;
 * a WebSocket client that leaves more than max_ws_buffered_bytes unread is disconnected. Clients
 * are told apart by their loopback source address (127.0.0.x) or their API key.
 */
const SECRET = 'an-rpc-proxy-fairness-secret-of-32-bytes!!';
let sim: Simulator;
let limited: { proxy: RpcProxy; url: string; ws: string };
let keyed: { proxy: RpcProxy; url: string; ws: string };
let bounded: { proxy: RpcProxy; url: string; ws: string };

beforeAll(async () => {
  sim = await startSim();
  const nodes = await addNodes(sim, [{}]);
  [limited, keyed, bounded] = await Promise.all([
    startProxy(nodes, { rate_limit_rps: 1 }),
    startProxy(nodes, { rate_limit_rps: 1, 'auth.mode': 'on', 'auth.apiKeys': ['key-of-a', 'key-of-b'], 'auth.jwtSecret': SECRET }),
    startProxy(nodes, { max_ws_buffered_bytes: 64 * 1024 }),
  ]);
});

afterAll(async () => {
  await Promise.all([limited.proxy.close(), keyed.proxy.close(), bounded.proxy.close()]);
  await sim.close();
});

const refusedCount = async (proxy: RpcProxy, transport: 'http' | 'ws'): Promise<number> =>
  (await proxy.metrics.rateLimited.get()).values.find((v) => v.labels.transport === transport)?.value ?? 0;

/** Calls getSlot from `from` until one is refused (burst 2 at 1 call/s: the third at once); every answer before it. */
async function callUntilRefused(url: string, from: string, headers: Record<string, string> = {}): Promise<Awaited<ReturnType<typeof postFrom>>[]> {
  const answers = [];
  for (let i = 0; i < 20; i++) {
    const a = await postFrom(url, call('getSlot', undefined, i), from, headers);
    answers.push(a);
    if (a.status !== 200) break;
  }
  return answers;
}

describe('RPC proxy: per-client rate limit', () => {
  it('answers 429 with Retry-After and a JSON-RPC error over the limit, and takes calls again after Retry-After', async () => {
    const before = await refusedCount(limited.proxy, 'http');
    const answers = await callUntilRefused(limited.url, '127.0.0.3');
    const refused = answers.at(-1)!;
    expect(answers.length).toBeGreaterThanOrEqual(3); // the burst (2 × rate) went through first
    expect(answers.slice(0, -1).every((a) => a.status === 200 && typeof a.json.result === 'number')).toBe(true);
    expect(refused.status).toBe(429);
    expect(refused.retryAfter).toBe('1');
    expect(refused.json).toEqual({
      jsonrpc: '2.0',
      error: { code: -32093, message: 'rate limit of 1 calls per second exceeded; the call was not sent', data: { tidepoolCode: 'TP_ERR_RATE_LIMITED', retryAfter: 1 } },
      id: null,
    });
    expect(await refusedCount(limited.proxy, 'http')).toBe(before + 1);
    // The client does what Retry-After says: after it, the call is taken.
    await new Promise((r) => setTimeout(r, Number(refused.retryAfter) * 1000 + 50));
    const again = await postFrom(limited.url, call('getSlot'), '127.0.0.3');
    expect(again.status).toBe(200);
    expect(typeof again.json.result).toBe('number');
  });

  it('keys clients apart: by address with auth off, by API key or JWT subject with auth on', async () => {
    // 127.0.0.4 spends its bucket; 127.0.0.5 is another client and is answered.
    expect((await callUntilRefused(limited.url, '127.0.0.4')).at(-1)!.status).toBe(429);
    expect((await postFrom(limited.url, call('getSlot'), '127.0.0.5')).status).toBe(200);
    // Auth on: the API key is the client, whatever the address; key B is answered after key A is refused.
    expect((await callUntilRefused(keyed.url, '127.0.0.6', { 'x-api-key': 'key-of-a' })).at(-1)!.status).toBe(429);
    const b = await postFrom(keyed.url, call('getSlot'), '127.0.0.6', { 'x-api-key': 'key-of-b' });
    expect(b.status).toBe(200);
    expect(typeof b.json.result).toBe('number');
    // A JWT's subject is the client: executor-2 is answered after executor-1 is refused, same address.
    const bearer = async (subject: string): Promise<Record<string, string>> => ({
      authorization: `Bearer ${await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(subject).setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode(SECRET))}`,
    });
    expect((await callUntilRefused(keyed.url, '127.0.0.9', await bearer('executor-1'))).at(-1)!.status).toBe(429);
    expect((await postFrom(keyed.url, call('getSlot'), '127.0.0.9', await bearer('executor-2'))).status).toBe(200);
  });

  it('answers a WebSocket call over the limit with a JSON-RPC error carrying its id; another client is answered', async () => {
    const before = await refusedCount(limited.proxy, 'ws');
    const a = await WsProbe.open(limited.ws, { localAddress: '127.0.0.7' });
    const b = await WsProbe.open(limited.ws, { localAddress: '127.0.0.8' });
    try {
      let reply: any;
      for (let id = 1; id <= 20; id++) {
        reply = await a.request(call('getSlot', undefined, id));
        if (reply.error !== undefined) break;
      }
      expect(reply.id).toBeGreaterThanOrEqual(3);
      expect(reply).toEqual({ jsonrpc: '2.0', error: { code: -32093, message: 'rate limit of 1 calls per second exceeded; the call was not sent', data: { tidepoolCode: 'TP_ERR_RATE_LIMITED', retryAfter: 1 } }, id: reply.id });
      expect(await refusedCount(limited.proxy, 'ws')).toBe(before + 1);
      expect(a.closed).toBeNull();
      const other = await b.request(call('getSlot', undefined, 'b-1'));
      expect(typeof other.result).toBe('number');
    } finally {
      a.close();
      b.close();
    }
  });
});

describe('RPC proxy: a WebSocket client that does not read', () => {
  it('is disconnected once it leaves more than max_ws_buffered_bytes unread; a reading client keeps its answers', async () => {
    const slowClosed = async (): Promise<number> => (await bounded.proxy.metrics.wsSlowClientsClosed.get()).values[0]?.value ?? 0;
    const reader = await WsProbe.open(bounded.ws);
    const slow = await WsProbe.open(bounded.ws);
    try {
      await eventually(() => bounded.proxy.healthReport().wsClients === 2, 'both clients connected');
      slow.socket.pause(); // reads nothing from now on
      // 100 invalid calls a message: 100 error objects (about 7 KB) answered for 200 bytes sent.
      const cheap = JSON.stringify(new Array<number>(100).fill(1));
      let sent = 0;
      let answered = 0;
      while ((await slowClosed()) === 0) {
        if (sent >= 20_000) throw new Error(`the non-reading client was never disconnected after ${sent} messages`);
        for (let i = 0; i < 100; i++) slow.socket.send(cheap);
        sent += 100;
        // The reading client is answered meanwhile.
        const r = await reader.request(call('getSlot', undefined, `r-${sent}`));
        if (typeof r.result === 'number') answered++;
      }
      expect(answered).toBeGreaterThan(0);
      await eventually(() => bounded.proxy.healthReport().wsClients === 1, 'the non-reading client gone from the proxy');
      const after = await reader.request(call('getSlot', undefined, 'after'));
      expect(typeof after.result).toBe('number');
      slow.socket.resume();
      await eventually(() => slow.closed !== null, 'the non-reading client to see its socket closed');
      expect(reader.closed).toBeNull();
    } finally {
      reader.close();
      slow.close();
    }
  }, 60_000);
});
