/**
 * TLS on the RPC proxy's port (tls.certFile / tls.keyFile; uWebSockets.js SSLApp) over real
 * sockets with a certificate openssl makes for the test: POST /rpc over HTTPS and /rpc/ws over WSS
 * for a client that trusts the certificate, plain HTTP refused, and a missing or mismatched key
 * refused at start, naming the setting.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';

import { makeSelfSignedCert, OPENSSL, type SelfSignedCert } from '../config/testing/self-signed-cert.js';
import { ErrorCode, TpError } from '../errors.js';
import type { RpcNode, Simulator } from '../sim/index.js';
import { createRpcProxy, type RpcProxy } from './rpc-proxy.js';
import { defaultRpcProxyConfig } from './rpc-proxy-config.js';
import { addNodes, call, silent, startProxy, startSim } from './testing.js';

const dir = mkdtempSync(join(tmpdir(), 'tp-rpc-proxy-tls-'));
let cert: SelfSignedCert;
let sim: Simulator | undefined;
let nodes: RpcNode[] = [];
let proxy: RpcProxy | undefined;

function httpsPost(port: number, body: unknown, ca: string | undefined): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/rpc', method: 'POST', servername: 'localhost', headers: { 'content-type': 'application/json' }, ...(ca === undefined ? {} : { ca }) }, (res) => {
      let text = '';
      res.on('data', (c) => (text += String(c)));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

beforeAll(async () => {
  if (!OPENSSL) return;
  cert = makeSelfSignedCert(dir, 'proxy');
  sim = await startSim(41);
  nodes = await addNodes(sim, [{}]);
  proxy = (await startProxy(nodes, { 'tls.certFile': cert.certFile, 'tls.keyFile': cert.keyFile })).proxy;
});

afterAll(async () => {
  await proxy?.close();
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!OPENSSL)('the RPC proxy with tls.certFile and tls.keyFile', () => {
  it('answers POST /rpc over HTTPS for a client that trusts the certificate', async () => {
    const answer = await httpsPost(proxy!.port, call('getSlot'), cert.cert);
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ jsonrpc: '2.0', id: 1, result: expect.any(Number) });
  });

  it('refuses plain HTTP and clients that do not trust the certificate', async () => {
    await expect(fetch(`http://127.0.0.1:${proxy!.port}/rpc`, { method: 'POST', body: JSON.stringify(call('getSlot')) })).rejects.toThrow();
    await expect(httpsPost(proxy!.port, call('getSlot'), undefined)).rejects.toThrow(/self[- ]signed|certificate/i);
  });

  it('serves /rpc/ws over WSS: a subscription is answered', async () => {
    const socket = new WebSocket(`wss://localhost:${proxy!.port}/rpc/ws`, { ca: cert.cert });
    try {
      const reply = new Promise<Record<string, unknown>>((resolve, reject) => {
        socket.once('message', (data) => resolve(JSON.parse(String(data)) as Record<string, unknown>));
        socket.once('error', reject);
      });
      await new Promise((resolve, reject) => {
        socket.once('open', resolve);
        socket.once('error', reject);
      });
      socket.send(JSON.stringify(call('slotSubscribe', undefined, 7)));
      expect(await reply).toMatchObject({ jsonrpc: '2.0', id: 7, result: expect.any(Number) });
    } finally {
      socket.close();
    }
  });

  it('stops at start when the key is missing or is not the certificate\'s, naming tls.keyFile', () => {
    const other = makeSelfSignedCert(dir, 'other');
    for (const keyFile of [join(dir, 'missing-key.pem'), other.keyFile]) {
      const config = defaultRpcProxyConfig({ endpoints: nodes.map((n) => n.rpc), port: 0, 'tls.certFile': cert.certFile, 'tls.keyFile': keyFile });
      let err: unknown;
      try {
        createRpcProxy(config, { logger: silent });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(TpError);
      expect((err as TpError).code).toBe(ErrorCode.ConfigInvalid);
      expect((err as TpError).message).toContain('tls.keyFile');
    }
  });
});
