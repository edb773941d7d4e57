import bs58 from 'bs58';

import type { AccountRecord } from '../../chain-backend.js';
import { FaultInjector } from '../../faults.js';
import { JsonRpcHttpServer } from '../json-rpc-http.js';
import { JsonRpcWsServer } from '../json-rpc-ws.js';
import { MemoryBackend } from '../memory-backend.js';

/** Test support: both servers on port 0 over one MemoryBackend and one FaultInjector. */

export interface TestServers {
  backend: MemoryBackend;
  faults: FaultInjector;
  http: JsonRpcHttpServer;
  ws: JsonRpcWsServer;
  httpUrl: string;
  wsUrl: string;
  close(): Promise<void>;
}

export async function startTestServers(backend = new MemoryBackend()): Promise<TestServers> {
  const faults = new FaultInjector(7);
  const http = new JsonRpcHttpServer({ backend, faults, port: 0 });
  const ws = new JsonRpcWsServer({ backend, faults, port: 0 });
  const [h, w] = await Promise.all([http.start(), ws.start()]);
  return {
    backend,
    faults,
    http,
    ws,
    httpUrl: h.url,
    wsUrl: w.url,
    close: async () => {
      await Promise.all([http.close(), ws.close()]);
    },
  };
}

/** A valid base58 address made of 32 copies of `byte`. */
export function address(byte: number): string {
  return bs58.encode(new Uint8Array(32).fill(byte));
}

export function account(data: Uint8Array, overrides: Partial<AccountRecord> = {}): AccountRecord {
  return {
    lamports: 1_000_000n,
    owner: address(9),
    data,
    executable: false,
    rentEpoch: 18_446_744_073_709_551_615n,
    ...overrides,
  };
}

export interface RawReply {
  status: number;
  text: string;
  contentType: string | null;
}

/** POSTs raw text to the HTTP server. */
export async function post(url: string, body: string, contentType = 'application/json'): Promise<RawReply> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': contentType }, body });
  return { status: res.status, text: await res.text(), contentType: res.headers.get('content-type') };
}

/** One JSON-RPC call; the parsed response object. */
export async function call(url: string, method: string, params?: unknown, id: unknown = 1): Promise<any> {
  const body = JSON.stringify(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
  const reply = await post(url, body);
  return JSON.parse(reply.text);
}
