import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ChainClient } from './chain-client.js';
import { isRpcFailure, type RpcFailure } from './rpc-errors.js';
import { RpcClient } from './rpc-client.js';

/**
 * Every chain client over real sockets (issue 24 item 4): several endpoints with failover (a dead
 * first endpoint: nothing listens on its port), credentialed URLs (user info sent as Basic auth,
 * `?api-key=` kept in the request) never printed in errors.
 */

interface Seen {
  authorization: string | undefined;
  url: string | undefined;
  method: string;
}

let live: Server;
let liveUrl: string;
let deadUrl: string;
const seen: Seen[] = [];

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

beforeAll(async () => {
  live = createServer((req, res) => {
    void body(req).then((text) => {
      const call = JSON.parse(text) as { id: number; method: string };
      seen.push({ authorization: req.headers.authorization, url: req.url, method: call.method });
      const result = call.method === 'getBlockHeight' ? 4242 : call.method === 'getEpochInfo' ? { epoch: 7, slotIndex: 1, slotsInEpoch: 432000, absoluteSlot: 9, blockHeight: 8 } : { context: { slot: 9 }, value: [null] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result }));
    });
  });
  liveUrl = `http://trader:s3cret-pass@127.0.0.1:${await listen(live)}/rpc?api-key=KEY-0123456789abcdef`;
  // A port nothing listens on: bound, then closed.
  const gone = createServer();
  const port = await listen(gone);
  await new Promise<void>((r) => gone.close(() => r()));
  deadUrl = `http://nobody:dead-pass@127.0.0.1:${port}/?api-key=DEADKEY-0123456789abcdef`;
});

afterAll(async () => {
  await new Promise<void>((r) => live.close(() => r()));
});

function expectNoSecret(text: string): void {
  for (const secret of ['s3cret-pass', 'KEY-0123456789abcdef', 'dead-pass', 'DEADKEY-0123456789abcdef']) expect(text).not.toContain(secret);
}

describe('chain clients with several endpoints', () => {
  it('ChainClient: a dead first endpoint fails over to the next; credentials go as Basic auth, the query key is kept', async () => {
    const client = new ChainClient({ endpoints: [deadUrl, liveUrl], timeoutMs: 2_000 });
    try {
      const before = seen.length;
      expect(await client.getBlockHeight()).toBe(4242n);
      const call = seen[before]!;
      expect(call.method).toBe('getBlockHeight');
      expect(call.authorization).toBe(`Basic ${Buffer.from('trader:s3cret-pass').toString('base64')}`);
      expect(call.url).toBe('/rpc?api-key=KEY-0123456789abcdef');
      // the endpoint that answered is kept: the next call goes there first
      expect(await client.getBlockHeight()).toBe(4242n);
      expect(seen.length).toBe(before + 2);
      expectNoSecret(client.url);
    } finally {
      await client.close();
    }
  });

  it('ChainClient: when no endpoint answers, the failure names them masked, never with their secrets', async () => {
    const client = new ChainClient({ endpoints: [deadUrl], timeoutMs: 2_000 });
    try {
      const err = await client.getBlockHeight().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isRpcFailure(err, 'network')).toBe(true);
      const failure = err as RpcFailure;
      expectNoSecret(`${failure.message} ${failure.context.endpoint} ${JSON.stringify(failure)}`);
      expect(failure.context.endpoint).toContain('127.0.0.1');
    } finally {
      await client.close();
    }
  });

  it('RpcClient (account reads): a dead endpoint in the rotation fails over; its errors are masked too', async () => {
    const client = new RpcClient({ endpoints: [deadUrl, liveUrl], timeoutMs: 2_000 });
    try {
      // both turns of the round robin answer, the dead endpoint's through the live one
      for (let i = 0; i < 2; i++) expect((await client.getMultipleAccounts(['11111111111111111111111111111111'])).accounts).toEqual([null]);
      expect(seen.at(-1)!.authorization).toBe(`Basic ${Buffer.from('trader:s3cret-pass').toString('base64')}`);
    } finally {
      await client.close();
    }
    const dead = new RpcClient({ endpoints: [deadUrl], timeoutMs: 2_000 });
    try {
      const err = (await dead.getEpochInfo().catch((e: unknown) => e)) as RpcFailure;
      expect(isRpcFailure(err, 'network')).toBe(true);
      expectNoSecret(`${err.message} ${err.context.endpoint}`);
    } finally {
      await dead.close();
    }
  });

  it('a rate-limited endpoint (HTTP 429 with a JSON-RPC error, as providers answer) fails over, for every client', async () => {
    let limited = 0;
    const provider = createServer((req, res) => {
      void body(req).then((text) => {
        limited++;
        const call = JSON.parse(text) as { id: number };
        res.writeHead(429, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: call.id, error: { code: 429, message: 'Too many requests' } }));
      });
    });
    const limitedUrl = `http://127.0.0.1:${await listen(provider)}/`;
    const chain = new ChainClient({ endpoints: [limitedUrl, liveUrl], timeoutMs: 2_000 });
    const reader = new RpcClient({ endpoints: [limitedUrl, liveUrl], timeoutMs: 2_000 });
    try {
      expect(await chain.getBlockHeight()).toBe(4242n);
      for (let i = 0; i < 2; i++) expect((await reader.getMultipleAccounts(['11111111111111111111111111111111'])).accounts).toEqual([null]);
      expect(limited).toBe(2); // the chain client once, the reader's turn at the limited endpoint once
      // alone, the refusal is the node's error, with the status it came with
      const alone = new ChainClient({ endpoints: [limitedUrl], timeoutMs: 2_000 });
      const err = (await alone.getBlockHeight().catch((e: unknown) => e)) as RpcFailure;
      await alone.close();
      expect(isRpcFailure(err, 'rpc')).toBe(true);
      expect(err.context.httpStatus).toBe(429);
    } finally {
      await chain.close();
      await reader.close();
      await new Promise<void>((r) => provider.close(() => r()));
    }
  });

  it('RpcClient spreads its reads over every endpoint in turn', async () => {
    const other: string[] = [];
    const second = createServer((req, res) => {
      void body(req).then((text) => {
        const call = JSON.parse(text) as { id: number; method: string };
        other.push(call.method);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: { context: { slot: 9 }, value: [null] } }));
      });
    });
    const secondUrl = `http://127.0.0.1:${await listen(second)}/`;
    const reader = new RpcClient({ endpoints: [liveUrl, secondUrl], timeoutMs: 2_000 });
    try {
      const before = seen.length;
      for (let i = 0; i < 6; i++) await reader.getMultipleAccounts(['11111111111111111111111111111111']);
      expect(seen.length - before).toBe(3);
      expect(other).toHaveLength(3);
      expect(reader.requests).toBe(6);
    } finally {
      await reader.close();
      await new Promise<void>((r) => second.close(() => r()));
    }
  });
});

