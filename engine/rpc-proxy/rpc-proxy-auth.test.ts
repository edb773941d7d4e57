import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';

import type { RpcNode, Simulator } from '../sim/index.js';
import { loadRpcProxyConfig } from './rpc-proxy-config.js';
import type { RpcProxy } from './rpc-proxy.js';
import { WsProbe, addNodes, call, startProxy, startSim } from './testing.js';

/**
 * Who may call the proxy (issue 26 item 3): off loopback it refuses to run open; with auth on,
 * POST /rpc and /rpc/ws take a JWT or an operator's API key and nothing else.
 */
const SECRET = 'an-rpc-proxy-test-secret-of-32-bytes!!';
let sim: Simulator;
let nodes: RpcNode[];
let proxy: RpcProxy;
let url: string;
let ws: string;

beforeAll(async () => {
  sim = await startSim(61);
  nodes = await addNodes(sim, [{}]);
  ({ proxy, url, ws } = await startProxy(nodes, { 'auth.mode': 'on', 'auth.apiKeys': ['desk-key-1'], 'auth.jwtSecret': SECRET }));
});

afterAll(async () => {
  await proxy?.close();
  for (const n of nodes ?? []) await sim.rpcNodes.remove(n.id);
  await sim?.close();
});

async function post(headers: Record<string, string> = {}, query = ''): Promise<{ status: number; body: { result?: unknown; error?: { message: string } } }> {
  const res = await fetch(`${url}/rpc${query}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(call('getSlot', [])) });
  return { status: res.status, body: (await res.json()) as { result?: unknown; error?: { message: string } } };
}

async function jwt(): Promise<string> {
  return new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('executor-1').setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode(SECRET));
}

describe('RPC proxy callers', () => {
  it('refuses to start off loopback with nobody to recognise, naming the settings; runs open only when told', () => {
    expect(() => loadRpcProxyConfig({ env: { RPC_PROXY_HOST: '0.0.0.0' } })).toThrow(/RPC_PROXY_API_KEYS \(auth.apiKeys\), TIDEPOOL_JWT_SECRET or TIDEPOOL_JWT_PUBLIC_KEY_FILE, or TIDEPOOL_AUTH=off/);
    expect(loadRpcProxyConfig({ env: { RPC_PROXY_HOST: '0.0.0.0', TIDEPOOL_AUTH: 'off' } }).values.host).toBe('0.0.0.0');
    expect(loadRpcProxyConfig({ env: { RPC_PROXY_HOST: '0.0.0.0', RPC_PROXY_API_KEYS: 'k1,k2' } }).values['auth.apiKeys']).toEqual(['k1', 'k2']);
    expect(loadRpcProxyConfig({ env: {} }).values['auth.mode']).toBe('auto');
  });

  it('answers POST /rpc for an API key (header or query) or a JWT, and 401 for anyone else', async () => {
    const anonymous = await post();
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error?.message).toContain('unauthenticated');
    expect((await post({ 'x-api-key': 'wrong' })).status).toBe(401);
    expect((await post({ authorization: 'Bearer not-a-jwt' })).status).toBe(401);

    const byKey = await post({ 'x-api-key': 'desk-key-1' });
    expect(byKey.status).toBe(200);
    expect(typeof byKey.body.result).toBe('number');
    expect((await post({}, '?api-key=desk-key-1')).status).toBe(200);
    expect((await post({ authorization: `Bearer ${await jwt()}` })).status).toBe(200);
  });

  it('refuses the WebSocket upgrade without credentials and takes one with them', async () => {
    const refused = new WebSocket(ws);
    const status = await new Promise<number>((resolve) => {
      refused.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      refused.on('open', () => resolve(101));
      refused.on('error', () => undefined);
    });
    expect(status).toBe(401);
    refused.terminate();

    const c = await WsProbe.open(`${ws}?api-key=desk-key-1`);
    try {
      const sub = await c.request(call('slotSubscribe', [], 1));
      expect(typeof sub.result).toBe('number');
    } finally {
      c.close();
    }
  });
});
