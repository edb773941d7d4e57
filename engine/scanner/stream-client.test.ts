import { randomBytes } from 'node:crypto';

import { afterEach, describe, expect, it } from 'vitest';

import { createLogger, type Logger } from '../obs/logger.js';
import { FaultInjector } from '../sim/faults.js';
import { MemoryBackend } from '../sim/rpc/memory-backend.js';
import { ShredstreamServer, type ShredstreamServerOptions } from '../sim/stream/shredstream-server.js';
import { Backoff, Jitter } from '../common/index.js';
import { BlockStreamClient, DISCONNECTED_ALERT, type BlockStreamClientOptions, type StreamEntry } from './stream-client.js';

const quiet = createLogger({ level: 'silent' });
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A logger whose JSON lines land in `lines`. */
function captureLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    level: 'debug',
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  return { logger, lines };
}

async function waitFor(what: string, predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function startServer(
  options: Partial<ShredstreamServerOptions> = {},
): Promise<{ server: ShredstreamServer; backend: MemoryBackend; port: number }> {
  const backend = new MemoryBackend();
  const server = new ShredstreamServer({ backend, port: 0, logger: quiet, shutdownTimeoutMs: 200, ...options });
  const port = await server.start();
  cleanups.push(() => server.close());
  return { server, backend, port };
}

/** A port nothing listens on (bound, then released). */
async function freePort(): Promise<number> {
  const server = new ShredstreamServer({ backend: new MemoryBackend(), port: 0, logger: quiet });
  const port = await server.start();
  await server.close();
  return port;
}

function startClient(
  port: number,
  options: Partial<BlockStreamClientOptions> = {},
): { client: BlockStreamClient; received: StreamEntry[]; states: boolean[] } {
  const received: StreamEntry[] = [];
  const states: boolean[] = [];
  const client = new BlockStreamClient({
    host: '127.0.0.1',
    port,
    onEntry: (entry) => received.push(entry),
    backoff: { baseMs: 10, capMs: 50 },
    logger: quiet,
    ...options,
  });
  client.on('connected', (connected) => states.push(connected));
  client.start();
  cleanups.push(() => client.close());
  return { client, received, states };
}

describe('BlockStreamClient', () => {
  it('receives every batch unchanged with its exact u64 slot', async () => {
    const { backend, port } = await startServer();
    const { client, received } = startClient(port);
    await waitFor('connected', () => client.connected);
    const batches = [
      { slot: 101n, entries: randomBytes(300) },
      { slot: 2n ** 53n + 1n, entries: randomBytes(70_000) },
      { slot: 2n ** 64n - 1n, entries: randomBytes(1) },
    ];
    for (const batch of batches) backend.emitEntries(batch);
    await waitFor('3 batches', () => received.length === 3);
    for (const [i, batch] of batches.entries()) {
      expect(received[i]!.slot).toBe(batch.slot);
      expect(Buffer.compare(received[i]!.entries, batch.entries)).toBe(0);
      expect(received[i]!.receivedAt).toBeGreaterThan(0);
    }
    expect(client.stats()).toMatchObject({ connected: true, connections: 1, entriesReceived: 3, connectionErrors: 0 });
  });

  it('reconnects after the stream.disconnect fault', async () => {
    const faults = new FaultInjector();
    const { server, backend, port } = await startServer({ faults });
    const { client, received, states } = startClient(port);
    const errors: number[] = [];
    client.on('connectionError', (status) => errors.push(status.code));
    await waitFor('connected', () => client.connected);
    faults.trigger('stream.disconnect');
    await waitFor('a reconnection', () => states.length >= 3 && client.connected);
    expect(states.slice(0, 3)).toEqual([true, false, true]);
    expect(client.stats().connectionErrors).toBeGreaterThanOrEqual(1);
    expect(errors[0]).toBe(14); // UNAVAILABLE
    expect(server.stats().disconnects).toBe(1);
    await waitFor('the server to see the new subscriber', () => server.stats().subscribers === 1);
    backend.emitEntries({ slot: 7n, entries: Uint8Array.of(1, 2, 3) });
    await waitFor('a batch after the reconnection', () => received.length === 1);
    expect(received[0]!.slot).toBe(7n);
  });

  it('reconnects when the server is closed and started again on the same port', async () => {
    const first = await startServer();
    const { client, received, states } = startClient(first.port);
    await waitFor('connected', () => client.connected);
    await first.server.close();
    await waitFor('disconnected', () => !client.connected);
    // A few attempts fail against the closed port before the server is back.
    await waitFor('failed attempts', () => client.stats().connectionErrors >= 3);
    const second = await startServer({ port: first.port });
    await waitFor('reconnected', () => client.connected);
    expect(states).toEqual([true, false, true]);
    expect(client.stats().connections).toBe(2);
    await waitFor('subscribed again', () => second.server.stats().subscribers === 1);
    second.backend.emitEntries({ slot: 9n, entries: Uint8Array.of(9) });
    await waitFor('a batch from the new server', () => received.length === 1);
  });

  it('passes garbage and truncated entry payloads through unchanged and stays connected', async () => {
    const faults = new FaultInjector(3);
    const { server, backend, port } = await startServer({ faults });
    const { client, received } = startClient(port);
    await waitFor('connected', () => client.connected);
    faults.stream.garbageRate = 1;
    backend.emitEntries({ slot: 11n, entries: new Uint8Array(64).fill(1) });
    faults.stream.garbageRate = 0;
    faults.stream.truncateRate = 1;
    backend.emitEntries({ slot: 12n, entries: new Uint8Array(64).fill(2) });
    await waitFor('2 batches', () => received.length === 2);
    expect(server.stats()).toMatchObject({ garbageBatches: 1, truncatedBatches: 1 });
    // The stream client does not judge the entry bytes: the parser counts them as parsing errors.
    expect(received[0]).toMatchObject({ slot: 11n });
    expect(received[0]!.entries).toHaveLength(64);
    expect(received[1]!.slot).toBe(12n);
    expect(received[1]!.entries.length).toBeLessThan(64);
    expect(client.stats()).toMatchObject({ connected: true, connectionErrors: 0 });
  });

  it('resets the backoff after a stable connection, and keeps growing it after short ones', async () => {
    const run = async (stableAfterMs: number): Promise<unknown[]> => {
      const faults = new FaultInjector();
      const { logger, lines } = captureLogger();
      const { port } = await startServer({ faults });
      const backoff = new Backoff({ baseMs: 5, factor: 2, capMs: 40, jitter: Jitter.None });
      const { client, states } = startClient(port, { backoff, logger, stableAfterMs });
      for (let i = 1; i <= 3; i++) {
        await waitFor(`connection ${i}`, () => client.stats().connections === i && client.connected);
        faults.trigger('stream.disconnect');
        await waitFor(`disconnection ${i}`, () => states.filter((s) => !s).length === i);
      }
      await waitFor('connection 4', () => client.stats().connections === 4);
      return lines.filter((l) => l.msg === 'block stream disconnected; reconnecting').map((l) => l.retryInMs);
    };
    expect(await run(0)).toEqual([5, 5, 5]);
    expect(await run(60_000)).toEqual([5, 10, 20]);
  });

  it('backs off with growing delays up to the cap while the upstream is down', async () => {
    const { logger, lines } = captureLogger();
    const port = await freePort();
    const backoff = new Backoff({ baseMs: 5, factor: 2, capMs: 40, jitter: Jitter.None });
    const { client } = startClient(port, { backoff, logger });
    await waitFor('6 failed attempts', () => client.stats().connectionErrors >= 6);
    const retries = lines.filter((l) => l.msg === 'block stream disconnected; reconnecting').map((l) => l.retryInMs);
    expect(retries.slice(0, 6)).toEqual([5, 10, 20, 40, 40, 40]);
    expect(client.connected).toBe(false);
  });

  it('logs the alert once after the disconnection threshold and the recovery when back', async () => {
    const { logger, lines } = captureLogger();
    const port = await freePort();
    const { client } = startClient(port, { logger, alertAfterMs: 50 });
    const alerts = (): Record<string, unknown>[] => lines.filter((l) => l.alert === DISCONNECTED_ALERT);
    await waitFor('the alert log', () => alerts().length === 1);
    expect(alerts()[0]).toMatchObject({ level: 'error', alert: DISCONNECTED_ALERT, target: `127.0.0.1:${port}` });
    expect(alerts()[0]!.disconnectedForMs).toBeGreaterThanOrEqual(50);
    await startServer({ port });
    await waitFor('reconnected', () => client.connected);
    expect(alerts()).toHaveLength(2);
    expect(alerts()[1]).toMatchObject({ level: 'info', alert: DISCONNECTED_ALERT, resolved: true });
  });

  it('does not alert when the stream comes back within the threshold', async () => {
    const faults = new FaultInjector();
    const { logger, lines } = captureLogger();
    const { port } = await startServer({ faults });
    const { client, states } = startClient(port, { logger, alertAfterMs: 60_000 });
    await waitFor('connected', () => client.connected);
    faults.trigger('stream.disconnect');
    await waitFor('reconnected', () => states.length >= 3 && client.connected);
    expect(lines.filter((l) => l.alert === DISCONNECTED_ALERT)).toHaveLength(0);
  });

  it('sends heartbeats with ip, port and at most two regions every ttl_ms / 3', async () => {
    const { server, port } = await startServer({ heartbeatTtlMs: 90 });
    const { client } = startClient(port, {
      heartbeat: { ip: '127.0.0.1', port: 20_000, regions: ['ny', 'amsterdam', 'tokyo'] },
    });
    const beats: { at: number; ttlMs: number; nextInMs: number }[] = [];
    client.on('heartbeat', (ttlMs, nextInMs) => beats.push({ at: performance.now(), ttlMs, nextInMs }));
    await waitFor('4 heartbeats', () => beats.length >= 4);
    const [record] = server.heartbeats();
    expect(record).toMatchObject({ ip: '127.0.0.1', port: 20_000, regions: ['ny', 'amsterdam'] });
    expect(record!.count).toBeGreaterThanOrEqual(4);
    for (const beat of beats) expect(beat).toMatchObject({ ttlMs: 90, nextInMs: 30 });
    // Lower bound only: a timer never fires before its delay (1 ms of clock rounding allowed).
    for (let i = 1; i < beats.length; i++) expect(beats[i]!.at - beats[i - 1]!.at).toBeGreaterThanOrEqual(29);
    expect(client.stats()).toMatchObject({ lastHeartbeatTtlMs: 90, heartbeatErrors: 0 });
  });

  it('counts and logs failed heartbeats without touching the stream', async () => {
    const { logger, lines } = captureLogger();
    const { server, backend, port } = await startServer();
    // The block engine refuses an ip other than the caller's.
    const { client, received } = startClient(port, {
      logger,
      heartbeat: { ip: '10.1.2.3', port: 20_000, regions: ['ny'], fallbackIntervalMs: 10 },
    });
    await waitFor('3 failed heartbeats', () => client.stats().heartbeatErrors >= 3);
    expect(server.stats().heartbeatsRejected).toBeGreaterThanOrEqual(3);
    expect(lines.some((l) => l.msg === 'heartbeat failed' && l.level === 'warn' && l.code === 3)).toBe(true);
    await waitFor('connected', () => client.connected);
    backend.emitEntries({ slot: 5n, entries: Uint8Array.of(5) });
    await waitFor('a batch', () => received.length === 1);
    expect(client.stats().heartbeatsSent).toBe(0);
  });

  it('keeps the stream when the entry handler throws', async () => {
    const { backend, port } = await startServer();
    let calls = 0;
    const { client } = startClient(port, {
      onEntry: () => {
        calls++;
        throw new Error('boom');
      },
    });
    await waitFor('connected', () => client.connected);
    backend.emitEntries({ slot: 1n, entries: Uint8Array.of(1) });
    backend.emitEntries({ slot: 2n, entries: Uint8Array.of(2) });
    await waitFor('two calls', () => calls === 2);
    expect(client.stats()).toMatchObject({ handlerErrors: 2, connected: true, connectionErrors: 0 });
  });

  it('close() cancels the stream, stops reconnecting and reports disconnected', async () => {
    const { server, port } = await startServer({ heartbeatTtlMs: 30 });
    const { client, states } = startClient(port, { heartbeat: { ip: '127.0.0.1', port: 20_000, regions: ['ny'] } });
    await waitFor('connected', () => client.connected);
    await waitFor('a heartbeat', () => client.stats().heartbeatsSent >= 1);
    await client.close();
    expect(states).toEqual([true, false]);
    await waitFor('the server to drop the subscriber', () => server.stats().subscribers === 0);
    const { heartbeatsSent, connectionErrors } = client.stats();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(client.stats()).toMatchObject({ heartbeatsSent, connectionErrors, connected: false });
    await client.close();
  });
});
