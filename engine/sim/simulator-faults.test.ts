import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { createSolanaRpc } from '@solana/kit';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { decodeEntryBatch } from '../chain/transaction-view.js';
import { buildTransaction } from '../chain/transaction-builder.js';
import { loadConfig } from '../config/loader.js';
import { ErrorCode, isTpError } from '../errors.js';
import { createLogger } from '../obs/logger.js';
import { protoDir } from '../proto.js';
import { systemTransfer } from './flow.js';
import { USDC_MINT, WSOL_MINT } from './known-accounts.js';
import { simSchema } from './sim-config.js';
import { createSimulator, type SimEndpoints, type Simulator } from './simulator.js';

/**
 * Every fault of the simulator, set through its admin interface while it runs, seen taking effect
 * by the independent clients a user would point at it: grpc-js with the ShredStream proto, the
 * Solana RPC client and a raw WebSocket, plain HTTP for the quote API and the block engine.
 */

let sim: Simulator;
let endpoints: SimEndpoints;

beforeAll(async () => {
  const config = loadConfig(simSchema, {
    env: {},
    flags: { seed: '11', 'rpc-port': '0', 'ws-port': '0', 'stream-port': '0', 'geyser-port': '0', 'http-port': '0', 'tx-rate': '200', tokens: '2', 'pools-per-kind': '1' },
  }).values;
  sim = createSimulator(config, { manual: true, logger: createLogger({ name: 'sim-faults-test', level: 'silent' }) });
  endpoints = await sim.start();
});

afterAll(async () => {
  await sim.close();
});

afterEach(async () => {
  const res = await fetch(`${endpoints.http}/admin/faults`, { method: 'DELETE' });
  expect(res.status).toBe(200);
});

async function setFaults(body: unknown): Promise<void> {
  const res = await fetch(`${endpoints.http}/admin/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
}

async function trigger(action: 'stream.disconnect' | 'ws.drop'): Promise<void> {
  const res = await fetch(`${endpoints.http}/admin/faults/actions/${action}`, { method: 'POST' });
  expect(res.status).toBe(200);
}

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

interface StreamClient {
  messages: { slot: string; entries: Buffer }[];
  status: Promise<grpc.StatusObject>;
  stop(): void;
}

async function subscribe(): Promise<StreamClient> {
  const definition = protoLoader.loadSync(join(protoDir(), 'shredstream.proto'), { includeDirs: [protoDir()], keepCase: true, longs: String, defaults: true });
  const Client = (grpc.loadPackageDefinition(definition)['shredstream'] as grpc.GrpcObject)['ShredstreamProxy'] as grpc.ServiceClientConstructor;
  const client = new Client(endpoints.stream, grpc.credentials.createInsecure());
  const call = client['SubscribeEntries']!({}) as grpc.ClientReadableStream<{ slot: string; entries: Buffer }>;
  const messages: StreamClient['messages'] = [];
  call.on('data', (m: { slot: string; entries: Buffer }) => messages.push(m));
  call.on('error', () => {});
  const status = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
  const before = sim.servers.stream.stats().subscribersTotal;
  await until(() => sim.servers.stream.stats().subscribersTotal > before);
  return { messages, status, stop: () => (call.cancel(), client.close()) };
}

function parseError(m: { slot: string; entries: Buffer }): string | undefined {
  try {
    decodeEntryBatch(new Uint8Array(m.entries), BigInt(m.slot));
    return undefined;
  } catch (err) {
    return isTpError(err, ErrorCode.EntryMalformed) ? err.code : String(err);
  }
}

describe('simulator faults, seen by real clients', () => {
  it('stalls the entry stream, then resumes it', async () => {
    const client = await subscribe();
    await setFaults({ stream: { stall: true } });
    sim.chain.advanceSlot();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(client.messages).toHaveLength(0);
    await setFaults({ stream: { stall: false } });
    const slot = sim.chain.advanceSlot();
    await until(() => client.messages.some((m) => m.slot === String(slot)));
    expect(client.messages.every((m) => parseError(m) === undefined)).toBe(true);
    client.stop();
  });

  it('sends garbage and truncated entry payloads that the parser rejects with a typed error', async () => {
    const client = await subscribe();
    await setFaults({ stream: { garbageRate: 1 } });
    sim.chain.advanceSlot();
    await until(() => client.messages.length > 0);
    const garbage = client.messages.splice(0);
    expect(garbage.map(parseError)).toEqual(garbage.map(() => ErrorCode.EntryMalformed));

    await setFaults({ stream: { garbageRate: 0, truncateRate: 1 } });
    sim.chain.advanceSlot();
    await until(() => client.messages.length > 0);
    const truncated = client.messages.splice(0);
    expect(truncated.map(parseError)).toEqual(truncated.map(() => ErrorCode.EntryMalformed));
    client.stop();
  });

  it('disconnects stream subscribers with UNAVAILABLE', async () => {
    const client = await subscribe();
    await trigger('stream.disconnect');
    expect((await client.status).code).toBe(grpc.status.UNAVAILABLE);
    client.stop();
  });

  it('fails and delays JSON-RPC methods one by one', async () => {
    const rpc = createSolanaRpc(endpoints.rpc);
    await setFaults({ rpc: { getLatestBlockhash: { errorRate: 1, errorCode: -32005, errorMessage: 'Node is behind' } } });
    await expect(rpc.getLatestBlockhash().send()).rejects.toThrow();
    expect(await rpc.getSlot({ commitment: 'processed' }).send()).toBe(sim.chain.slot()); // other methods unaffected

    await setFaults({ rpc: { getLatestBlockhash: null, getSlot: { latencyMs: 150 } } });
    const started = performance.now();
    await rpc.getSlot().send();
    expect(performance.now() - started).toBeGreaterThanOrEqual(140); // a lower bound: the injected delay happened
  });

  it('drops every WebSocket', async () => {
    const url = endpoints.ws;
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const subscribed = new Promise((resolve) => socket.once('message', resolve));
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'slotSubscribe' }));
    await subscribed;
    const closed = new Promise<number>((resolve) => socket.once('close', (code: number) => resolve(code)));
    await trigger('ws.drop');
    expect(await closed).toBe(1006); // abnormal closure: no close frame, as when a node drops the connection
  });

  it('fails and slows the quote API', async () => {
    const url = `${endpoints.http}/quote?inputMint=${WSOL_MINT}&outputMint=${USDC_MINT}&amount=1000000000`;
    await setFaults({ quoteApi: { failRate: 1, failStatus: 429 } });
    const limited = await fetch(url);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).not.toBeNull();

    await setFaults({ quoteApi: { failRate: 0, latencyMs: 150 } });
    const started = performance.now();
    const slow = await fetch(url);
    expect(slow.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('rejects bundles at the block engine, and lands them again once cleared', async () => {
    const from = sim.chain.genesis.actors.traders[0]!;
    const to = sim.chain.genesis.actors.wallets[0]!;
    const bundle = (lamports: bigint): string[] => [
      Buffer.from(
        buildTransaction({ payer: from.keypair, instructions: [systemTransfer(from.keypair.address, to, lamports)], recentBlockhash: sim.chain.latestBlockhash('processed').blockhash }),
      ).toString('base64'),
    ];
    const send = (txs: string[]): Promise<{ result?: string; error?: { code: number; message: string } }> =>
      fetch(`${endpoints.http}/api/v1/bundles`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sendBundle', params: [txs, { encoding: 'base64' }] }),
      }).then((r) => r.json() as Promise<{ result?: string; error?: { code: number; message: string } }>);

    await setFaults({ rejectBundles: true });
    const rejected = await send(bundle(5_000n));
    expect(rejected.error).toBeDefined();
    expect(rejected.result).toBeUndefined();

    await fetch(`${endpoints.http}/admin/faults`, { method: 'DELETE' });
    const accepted = await send(bundle(6_000n));
    expect(accepted.result).toMatch(/^[0-9a-f]{64}$/);
    sim.chain.advanceSlot();
    expect(sim.chain.bundleStatus(accepted.result!)).toMatchObject({ err: null });
  });
});
