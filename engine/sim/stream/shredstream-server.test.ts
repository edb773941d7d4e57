import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterEach, describe, expect, it } from 'vitest';

import { createLogger } from '../../obs/logger.js';
import type { ChainBackend, EntryBatch } from '../chain-backend.js';
import { FaultInjector } from '../faults.js';
import { MemoryBackend } from '../rpc/memory-backend.js';
import { ShredstreamServer, type ShredstreamServerOptions } from './shredstream-server.js';

// A third party's client: its own proto-loader load of proto/shredstream.proto, u64 as strings.
const PROTO_DIR = join(dirname(fileURLToPath(import.meta.url)), '../../../proto');
const definition = protoLoader.loadSync(join(PROTO_DIR, 'shredstream.proto'), {
  includeDirs: [PROTO_DIR],
  keepCase: true,
  longs: String,
  defaults: true,
});
const shredstream = grpc.loadPackageDefinition(definition)['shredstream'] as grpc.GrpcObject;
const ProxyClient = shredstream['ShredstreamProxy'] as grpc.ServiceClientConstructor;
const HeartbeatClient = shredstream['Shredstream'] as grpc.ServiceClientConstructor;

interface EntryMessage {
  slot: string;
  entries: Buffer;
}

/** The chain side of the test: batches are pushed by hand. */
class EntriesSource implements Pick<ChainBackend, 'onEntries'> {
  private readonly listeners = new Set<(batch: EntryBatch) => void>();
  onEntries(listener: (batch: EntryBatch) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  emit(slot: bigint, entries: Uint8Array): void {
    for (const l of this.listeners) l({ slot, entries });
  }
  get listenerCount(): number {
    return this.listeners.size;
  }
}

/** Messages of one SubscribeEntries call, awaited one at a time. */
class Subscription {
  readonly messages: EntryMessage[] = [];
  readonly status: Promise<grpc.StatusObject>;
  private waiter: (() => void) | undefined;

  constructor(readonly call: grpc.ClientReadableStream<EntryMessage>) {
    call.on('data', (m: EntryMessage) => {
      this.messages.push(m);
      this.waiter?.();
    });
    this.status = new Promise((resolve) => call.on('status', resolve));
    call.on('error', () => {});
  }

  async next(timeoutMs = 10_000): Promise<EntryMessage> {
    const deadline = Date.now() + timeoutMs;
    while (this.messages.length === 0) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no Entry message arrived');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.waiter = undefined;
    }
    return this.messages.shift()!;
  }
}

const servers: ShredstreamServer[] = [];
const clients: grpc.Client[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function startServer(options: Partial<ShredstreamServerOptions> = {}) {
  const source = new EntriesSource();
  const faults = options.faults ?? new FaultInjector(7);
  const server = new ShredstreamServer({
    backend: source as Pick<ChainBackend, 'onEntries'>,
    faults,
    port: 0,
    logger: createLogger({ level: 'silent' }),
    shutdownTimeoutMs: 500,
    ...options,
  });
  servers.push(server);
  const port = await server.start();
  const proxy = new ProxyClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const heartbeat = new HeartbeatClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  clients.push(proxy, heartbeat);
  return { server, source, faults, proxy, heartbeat, port };
}

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function subscribe(proxy: grpc.Client, server: ShredstreamServer): Promise<Subscription> {
  const before = server.stats().subscribers;
  const sub = new Subscription((proxy as unknown as { SubscribeEntries(req: object): grpc.ClientReadableStream<EntryMessage> }).SubscribeEntries({}));
  await until(() => server.stats().subscribers > before);
  return sub;
}

function sendHeartbeat(client: grpc.Client, request: object): Promise<{ ttl_ms: number }> {
  return new Promise((resolve, reject) => {
    (client as unknown as { SendHeartbeat(r: object, cb: (e: grpc.ServiceError | null, v: { ttl_ms: number }) => void): void }).SendHeartbeat(
      request,
      (err, value) => (err ? reject(err) : resolve(value)),
    );
  });
}

function bytes(length: number, seed = 1): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) out[i] = (i * 31 + seed) & 0xff;
  return out;
}

describe('SubscribeEntries', () => {
  it('streams each batch to a real client with its slot and entries bytes unchanged', async () => {
    const { server, source, proxy } = await startServer();
    const sub = await subscribe(proxy, server);
    const entries = bytes(1500);
    source.emit(312_456_789n, entries);
    const m = await sub.next();
    expect(m.slot).toBe('312456789');
    expect(Buffer.compare(m.entries, entries)).toBe(0);
    expect(server.stats()).toMatchObject({ subscribers: 1, batchesReceived: 1, batchesSent: 1, batchesDropped: 0 });
  });

  it('keeps u64 slots above 2^53 exact', async () => {
    const { server, source, proxy } = await startServer();
    const sub = await subscribe(proxy, server);
    source.emit(2n ** 53n + 1n, bytes(8));
    source.emit(18_446_744_073_709_551_615n, bytes(9));
    expect((await sub.next()).slot).toBe('9007199254740993');
    expect((await sub.next()).slot).toBe('18446744073709551615');
  });

  it('sends every batch to every subscriber', async () => {
    const { server, source, proxy } = await startServer();
    const a = await subscribe(proxy, server);
    const b = await subscribe(proxy, server);
    source.emit(5n, bytes(100, 1));
    source.emit(6n, bytes(200, 2));
    for (const sub of [a, b]) {
      expect((await sub.next()).slot).toBe('5');
      expect((await sub.next()).entries.length).toBe(200);
    }
    expect(server.stats().batchesSent).toBe(4);
  });

  it('forgets a subscriber that cancels', async () => {
    const { server, proxy } = await startServer();
    const sub = await subscribe(proxy, server);
    sub.call.cancel();
    await until(() => server.stats().subscribers === 0);
  });

  it('ends open streams with UNAVAILABLE on close and stops listening to the chain', async () => {
    const { server, source, proxy } = await startServer();
    const sub = await subscribe(proxy, server);
    await server.close();
    expect((await sub.status).code).toBe(grpc.status.UNAVAILABLE);
    expect(source.listenerCount).toBe(0);
  });
});

describe('stream faults', () => {
  it('sends nothing while stalled and streams again once the stall is lifted', async () => {
    const { server, source, proxy, faults } = await startServer();
    const sub = await subscribe(proxy, server);
    faults.stream.stall = true;
    source.emit(10n, bytes(64, 1));
    await sleep(150);
    expect(sub.messages).toHaveLength(0);
    expect(server.stats().batchesStalled).toBe(1);
    faults.stream.stall = false;
    source.emit(11n, bytes(64, 2));
    expect((await sub.next()).slot).toBe('11');
  });

  it('replaces the entries with random bytes of the same length at garbageRate 1', async () => {
    const { server, source, proxy, faults } = await startServer();
    const sub = await subscribe(proxy, server);
    faults.stream.garbageRate = 1;
    const entries = bytes(4096);
    source.emit(12n, entries);
    const m = await sub.next();
    expect(m.slot).toBe('12');
    expect(m.entries.length).toBe(entries.length);
    expect(Buffer.compare(m.entries, entries)).not.toBe(0);
    expect(server.stats().garbageBatches).toBe(1);
  });

  it('sends a strict prefix of the entries at truncateRate 1', async () => {
    const { server, source, proxy, faults } = await startServer();
    const sub = await subscribe(proxy, server);
    faults.stream.truncateRate = 1;
    const entries = bytes(4096);
    for (let i = 0; i < 5; i++) source.emit(13n, entries);
    for (let i = 0; i < 5; i++) {
      const m = await sub.next();
      expect(m.entries.length).toBeGreaterThan(0);
      expect(m.entries.length).toBeLessThan(entries.length);
      expect(Buffer.compare(m.entries, entries.subarray(0, m.entries.length))).toBe(0);
    }
    expect(server.stats().truncatedBatches).toBe(5);
  });

  it('leaves batches intact at rates 0', async () => {
    const { server, source, proxy } = await startServer();
    const sub = await subscribe(proxy, server);
    const entries = bytes(777);
    source.emit(14n, entries);
    expect(Buffer.compare((await sub.next()).entries, entries)).toBe(0);
  });

  it('ends every stream with UNAVAILABLE on stream.disconnect, and the client can resubscribe', async () => {
    const { server, source, proxy, faults } = await startServer();
    const a = await subscribe(proxy, server);
    const b = await subscribe(proxy, server);
    faults.trigger('stream.disconnect');
    expect((await a.status).code).toBe(grpc.status.UNAVAILABLE);
    expect((await b.status).code).toBe(grpc.status.UNAVAILABLE);
    expect(server.stats()).toMatchObject({ subscribers: 0, disconnects: 2 });

    const again = await subscribe(proxy, server);
    source.emit(15n, bytes(32));
    expect((await again.next()).slot).toBe('15');
  });
});

describe('slow subscribers', () => {
  it('drops batches for a subscriber that never reads instead of queueing them', async () => {
    const maxQueued = 1024 * 1024;
    const { server, source, proxy } = await startServer({ maxQueuedBytesPerSubscriber: maxQueued });
    // No 'data' listener: the client stream stays paused and HTTP/2 flow control stops the server.
    const call = (proxy as unknown as { SubscribeEntries(req: object): grpc.ClientReadableStream<EntryMessage> }).SubscribeEntries({});
    call.on('error', () => {});
    await until(() => server.stats().subscribers === 1);

    const gc = exposeGc();
    gc();
    const before = process.memoryUsage();
    const entries = bytes(256 * 1024);
    const batches = 400; // 100 MiB offered
    for (let i = 0; i < batches; i++) {
      source.emit(BigInt(100 + i), entries);
      if (i % 10 === 9) await sleep(1);
    }
    await until(() => server.stats().batchesSent + server.stats().batchesDropped === batches);

    const stats = server.stats();
    expect(stats.batchesDropped).toBeGreaterThan(batches / 2);
    expect(stats.maxQueuedBytes).toBeLessThanOrEqual(maxQueued + entries.length + 16);
    // What the server keeps stays far below what was offered. Freed array buffers are returned by
    // V8's sweeper thread after the collection, later under load: wait for it, a collection per try
    // (memory the server really kept would never come back, and the wait would fail).
    const grown = (): number => {
      gc();
      const after = process.memoryUsage();
      return after.heapUsed + after.arrayBuffers - (before.heapUsed + before.arrayBuffers);
    };
    await until(() => grown() < 32 * 1024 * 1024);
    call.cancel();
  });

  it('delivers a burst larger than grpc-js\' high-water mark to a reading subscriber without drops', async () => {
    const { server, source, proxy } = await startServer();
    const sub = await subscribe(proxy, server);
    for (let i = 0; i < 200; i++) source.emit(BigInt(i + 1), bytes(4096, i)); // one slot's pieces at once, and more
    await until(() => sub.messages.length === 200);
    expect(sub.messages.map((m) => m.slot)).toEqual(Array.from({ length: 200 }, (_, i) => String(i + 1)));
    expect(server.stats().batchesDropped).toBe(0);
  });

  it('delivers again to a lagging subscriber once it reads and the stream drains', async () => {
    const { server, source, proxy } = await startServer({ maxQueuedBytesPerSubscriber: 256 * 1024 });
    const call = (proxy as unknown as { SubscribeEntries(req: object): grpc.ClientReadableStream<EntryMessage> }).SubscribeEntries({});
    call.on('error', () => {});
    await until(() => server.stats().subscribers === 1);
    const entries = bytes(64 * 1024);
    for (let i = 0; i < 200; i++) {
      source.emit(BigInt(i + 1), entries);
      if (i % 10 === 9) await sleep(1);
    }
    expect(server.stats().batchesDropped).toBeGreaterThan(0);

    const sub = new Subscription(call); // attaching 'data' resumes reading
    await until(() => server.stats().queuedBytes === 0);
    sub.messages.length = 0;
    source.emit(9_999n, entries);
    // Batches already on their way (in HTTP/2 windows) may still arrive first; the new one must follow.
    let slot = '';
    while (slot !== '9999') slot = (await sub.next()).slot;
    expect(slot).toBe('9999');
  });

  it('closes within its timeout while a subscriber never reads', async () => {
    const { server, source, proxy } = await startServer({ shutdownTimeoutMs: 300 });
    const call = (proxy as unknown as { SubscribeEntries(req: object): grpc.ClientReadableStream<EntryMessage> }).SubscribeEntries({});
    call.on('error', () => {});
    await until(() => server.stats().subscribers === 1);
    for (let i = 0; i < 100; i++) source.emit(1n, bytes(128 * 1024));
    await sleep(20);
    const started = Date.now();
    await server.close();
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('over the memory chain backend', () => {
  it("streams the backend's entry batches", async () => {
    const backend = new MemoryBackend();
    const { server, proxy } = await startServer({ backend });
    const sub = await subscribe(proxy, server);
    backend.emitEntries({ slot: 101n, entries: bytes(300) });
    const m = await sub.next();
    expect(m.slot).toBe('101');
    expect(Buffer.compare(m.entries, bytes(300))).toBe(0);
  });
});

describe('SendHeartbeat', () => {
  it('answers ttl_ms and records the last heartbeat per destination', async () => {
    const { server, heartbeat } = await startServer({ heartbeatTtlMs: 1234 });
    const res = await sendHeartbeat(heartbeat, { socket: { ip: '127.0.0.1', port: 20000 }, regions: ['amsterdam', 'ny'] });
    expect(res.ttl_ms).toBe(1234);
    await sendHeartbeat(heartbeat, { socket: { ip: '127.0.0.1', port: 20000 }, regions: ['tokyo'] });
    const records = server.heartbeats();
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ ip: '127.0.0.1', port: 20000, regions: ['tokyo'], count: 2 });
    expect(server.stats().heartbeats).toBe(2);
  });

  it('answers the default ttl_ms of 5000', async () => {
    const { heartbeat } = await startServer();
    const res = await sendHeartbeat(heartbeat, { socket: { ip: '127.0.0.1', port: 8001 }, regions: [] });
    expect(res.ttl_ms).toBe(5000);
  });

  it.each([
    [{ regions: ['ny'] }, 'socket'],
    [{ socket: { ip: 'not-an-ip', port: 8001 } }, 'socket.ip'],
    [{ socket: { ip: '10.1.2.3', port: 8001 } }, "caller's IP"],
    [{ socket: { ip: '127.0.0.1', port: 0 } }, 'socket.port'],
    [{ socket: { ip: '127.0.0.1', port: 70000 } }, 'socket.port'],
    [{ socket: { ip: '127.0.0.1', port: 8001 }, regions: ['ny', 'tokyo', 'amsterdam'] }, 'regions'],
  ])('rejects %j with INVALID_ARGUMENT naming the field', async (request, field) => {
    const { server, heartbeat } = await startServer();
    const err = (await sendHeartbeat(heartbeat, request).catch((e: unknown) => e)) as grpc.ServiceError;
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toContain(field);
    expect(server.stats().heartbeatsRejected).toBe(1);
    expect(server.heartbeats()).toHaveLength(0);
  });
});

/** global.gc without --expose-gc on the command line. */
function exposeGc(): () => void {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (existing) return existing;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}
