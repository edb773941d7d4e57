import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterEach, describe, expect, it } from 'vitest';

import { RpcClient } from './rpc-client.js';

/** A JSON-RPC endpoint on port 0 that records the headers of each request and answers getEpochInfo. */
async function recordingEndpoint(): Promise<{ server: Server; port: number; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { absoluteSlot: 7, blockHeight: 7, epoch: 0, slotIndex: 7, slotsInEpoch: 432000, transactionCount: 0 } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port, seen };
}

let server: Server | undefined;
afterEach(async () => {
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = undefined;
});

describe('RpcClient with credentials in the endpoint URL', () => {
  it('sends the user info as HTTP Basic auth (undici would drop it with the origin)', async () => {
    const ep = await recordingEndpoint();
    server = ep.server;
    const client = new RpcClient({ endpoints: [`http://operator:p%40ss@127.0.0.1:${ep.port}/?api-key=K`] });
    try {
      await client.getEpochInfo();
    } finally {
      await client.close();
    }
    expect(ep.seen[0]!.authorization).toBe(`Basic ${Buffer.from('operator:p@ss').toString('base64')}`);
  });

  it('sends no authorization header without user info', async () => {
    const ep = await recordingEndpoint();
    server = ep.server;
    const client = new RpcClient({ endpoints: [`http://127.0.0.1:${ep.port}/`] });
    try {
      await client.getEpochInfo();
    } finally {
      await client.close();
    }
    expect(ep.seen[0]!.authorization).toBeUndefined();
  });
});
