import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BusConnection } from '../bus/connection.js';
import { TEST_STREAM_MAX_BYTES_SCALE, connectLocal, deadPort, deleteStreams, LOCAL_NATS_URL, startPrivateNats, tcpReachable, uniqueName, waitFor } from '../bus/testing/local-nats.js';
import { createLogger } from '../obs/logger.js';
import { messageIdOf, SwapRoutePublisher } from './route-publisher.js';
import { decodeSwapRouteEvent, pairId, routeHash, SWAP_ROUTE_SUBJECT, type SwapRouteEventFields } from './swap-route-event.js';

const run = promisify(execFile);
const SCHEMA = join(fileURLToPath(new URL('../..', import.meta.url)), 'schemas', 'swap-route-event.fbs');
const FLATC = ((): boolean => {
  try {
    execFileSync('flatc', ['--version']);
    return true;
  } catch {
    return false;
  }
})();

const logger = createLogger({ level: 'silent' });
const SOL = 'So11111111111111111111111111111111111111112';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const POOL = '58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2';

function fields(i: number, overrides: Partial<SwapRouteEventFields> = {}): SwapRouteEventFields {
  return {
    inputMint: SOL,
    outputMint: USDC,
    inputAmount: 1_000_000_000n + BigInt(i),
    localOutputAmount: 150_000_000n,
    externalOutputAmount: 150_300_000n,
    bestSource: 'external',
    confidence: 0.75,
    localConfidence: 0.625,
    externalConfidence: 0.75,
    decision: 'Verify',
    slot: 300_000_000n + BigInt(i),
    quotedAtMs: 1_763_800_000_000 + i,
    createdAtMs: 1_763_800_000_500 + i,
    hops: [{ pool: POOL, dex: 'raydium-amm-v4', inputMint: SOL, outputMint: USDC, inAmount: 1_000_000_000n + BigInt(i), outAmount: 150_300_000n, fee: 2_500_000n }],
    ...overrides,
  };
}

/** Every message of the stream, in order. */
async function storedEvents(jsm: JetStreamManager, stream: string): Promise<{ subject: string; data: Uint8Array; msgId: string | undefined }[]> {
  const info = await jsm.streams.info(stream);
  const out = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const m = await jsm.streams.getMessage(stream, { seq });
    out.push({ subject: m.subject, data: m.data, msgId: m.header?.get('Nats-Msg-Id') });
  }
  return out;
}

describe('SwapRoutePublisher on the local bus', () => {
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  const streams: string[] = [];

  beforeAll(async () => {
    nc = await connectLocal();
    jsm = await nc.jetstreamManager();
  });
  afterAll(async () => {
    await deleteStreams(nc, streams);
    await nc?.close();
  });

  function isolated(): { prefix: string; stream: string } {
    const prefix = `${uniqueName('RP')}_`;
    const stream = `${prefix}MARKET_SWAP_ROUTES`;
    streams.push(stream);
    return { prefix, stream };
  }

  it('creates the stream at start with the documented settings, idempotently, keeping its messages', async () => {
    const { prefix, stream } = isolated();
    const first = await SwapRoutePublisher.open({ bus: nc, logger, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE });
    first.publish(fields(1));
    await waitFor(() => first.stats().published === 1, 10_000, 'first ack');
    await first.close(5_000);
    const second = await SwapRoutePublisher.open({ bus: nc, logger, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE });
    await second.close(5_000);
    const { config, state } = await jsm.streams.info(stream);
    expect(config.subjects).toEqual([`${prefix}market.swap_route.>`]);
    expect(config.retention).toBe('limits');
    expect(config.storage).toBe('file');
    expect(config.max_age).toBe(86_400 * 1e9);
    // 5 GiB scaled by the test sets' bus.streamMaxBytesScale (stream-sizes.test.ts checks the 5 GiB default).
    expect(config.max_bytes).toBe(Math.floor(5 * 1024 ** 3 * TEST_STREAM_MAX_BYTES_SCALE));
    expect(config.max_msg_size).toBe(1024 * 1024);
    expect(config.num_replicas).toBe(1);
    expect(state.messages).toBe(1);
  });

  it('publishes events on market.swap_route.optimal that decode back to what was published', async () => {
    const { prefix, stream } = isolated();
    const publisher = await SwapRoutePublisher.open({ bus: nc, logger, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE });
    const sent = [fields(1), fields(2, { bestSource: 'local', decision: 'Execute', confidence: 0.9 }), fields(3)];
    for (const f of sent) publisher.publish(f);
    expect(publisher.stats()).toMatchObject({ enabled: true, connected: true, pending: 3 });
    await waitFor(() => publisher.stats().published === 3, 10_000, 'three acks');
    expect(publisher.stats()).toEqual({ enabled: true, connected: true, published: 3, errors: 0, pending: 0, dropped: 0 });
    await publisher.close(5_000);

    const stored = await storedEvents(jsm, stream);
    expect(stored).toHaveLength(3);
    stored.forEach((m, i) => {
      const want = sent[i]!;
      expect(m.subject).toBe(`${prefix}${SWAP_ROUTE_SUBJECT}`);
      const event = decodeSwapRouteEvent(m.data);
      const { createdAtMs, hops, ...rest } = want;
      expect(event).toMatchObject({ ...rest, createdAtMs, hops, estimatedProfit: 300_000n });
      expect(event.pairId).toBe(pairId(SOL, USDC, want.inputAmount));
      expect(m.msgId).toBe(`${event.pairId}:${routeHash(want.hops)}:${createdAtMs}`);
    });
  });

  it.skipIf(!FLATC)('publishes bytes that flatc reads with the schema (independent reader; skipped without flatc)', async () => {
    const { prefix, stream } = isolated();
    const publisher = await SwapRoutePublisher.open({ bus: nc, logger, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE });
    publisher.publish(fields(7));
    await publisher.close(5_000);
    const [m] = await storedEvents(jsm, stream);
    const dir = await mkdtemp(join(tmpdir(), 'route-publisher-'));
    try {
      await writeFile(join(dir, 'event.bin'), m!.data);
      await run('flatc', ['--json', '--strict-json', '--defaults-json', '--raw-binary', '-o', dir, SCHEMA, '--', join(dir, 'event.bin')]);
      const json = JSON.parse(await readFile(join(dir, 'event.json'), 'utf8')) as Record<string, unknown>;
      expect(json).toMatchObject({
        schema_version: 1,
        pair_id: pairId(SOL, USDC, 1_000_000_007n),
        route_hash: routeHash(fields(7).hops),
        input_mint: SOL,
        output_mint: USDC,
        input_amount: 1_000_000_007,
        local_output_amount: 150_000_000,
        external_output_amount: 150_300_000,
        estimated_profit: 300_000,
        best_source: 'External',
        decision: 'Verify',
        slot: 300_000_007,
        created_at_ms: 1_763_800_000_507,
        hops: [{ pool: POOL, dex: 'raydium-amm-v4', input_mint: SOL, output_mint: USDC, fee: 2_500_000 }],
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('gives a repeated event the same message id, so the stream stores it once', async () => {
    const { prefix, stream } = isolated();
    const publisher = await SwapRoutePublisher.open({ bus: nc, logger, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE });
    publisher.publish(fields(1));
    publisher.publish(fields(1));
    await publisher.close(5_000);
    expect(publisher.stats()).toMatchObject({ published: 2, errors: 0 });
    expect((await jsm.streams.info(stream)).state.messages).toBe(1);
  });

  it('stamps createdAtMs when the caller leaves it out, and the message id carries the same value', async () => {
    const { prefix, stream } = isolated();
    const publisher = await SwapRoutePublisher.open({ bus: nc, logger, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE });
    const before = Date.now();
    const { createdAtMs: _omit, ...withoutTime } = fields(1);
    publisher.publish(withoutTime);
    await publisher.close(5_000);
    const [m] = await storedEvents(jsm, stream);
    const event = decodeSwapRouteEvent(m!.data);
    expect(event.createdAtMs).toBeGreaterThanOrEqual(before);
    expect(m!.msgId).toBe(messageIdOf(m!.data));
    expect(m!.msgId!.endsWith(`:${event.createdAtMs}`)).toBe(true);
  });

  it('drops what exceeds maxPending instead of queueing it, and counts it', async () => {
    const { prefix, stream } = isolated();
    const publisher = await SwapRoutePublisher.open({ bus: nc, logger, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE, maxPending: 2 });
    for (let i = 0; i < 5; i++) publisher.publish(fields(i));
    expect(publisher.stats()).toMatchObject({ pending: 2, dropped: 3 });
    await waitFor(() => publisher.stats().published === 2, 10_000, 'two acks');
    publisher.publish(fields(9));
    await publisher.close(5_000);
    expect(publisher.stats()).toEqual({ enabled: true, connected: true, published: 3, errors: 0, pending: 0, dropped: 3 });
    expect((await jsm.streams.info(stream)).state.messages).toBe(3);
  });

  it('counts an event the encoder refuses as an error without throwing', async () => {
    const { prefix } = isolated();
    const publisher = await SwapRoutePublisher.open({ bus: nc, logger, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE });
    expect(() => publisher.publish(fields(1, { inputAmount: -1n }))).not.toThrow();
    expect(publisher.stats()).toMatchObject({ errors: 1, pending: 0, published: 0 });
    await publisher.close(1_000);
  });

  it('counts publishes the stream refuses (stream deleted under it) as errors', async () => {
    const { prefix, stream } = isolated();
    const publisher = await SwapRoutePublisher.open({ bus: nc, logger, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE, publishTimeoutMs: 1_000 });
    await jsm.streams.delete(stream);
    publisher.publish(fields(1));
    await waitFor(() => publisher.stats().errors === 1, 10_000, 'refused publish counted');
    expect(publisher.stats()).toMatchObject({ published: 0, pending: 0 });
    await publisher.close(1_000);
  });

  it('flushes pending publishes on close: N published then closed at once are all on the stream', async () => {
    const { prefix, stream } = isolated();
    const publisher = await SwapRoutePublisher.open({ bus: LOCAL_NATS_URL, logger, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE });
    await waitFor(async () => publisher.stats().connected && (await jsm.streams.info(stream).then(() => true, () => false)), 10_000, 'connected, stream set up');
    const n = 500;
    for (let i = 0; i < n; i++) publisher.publish(fields(i));
    await publisher.close(30_000);
    expect(publisher.stats()).toMatchObject({ published: n, errors: 0, pending: 0, dropped: 0, connected: false });
    expect((await jsm.streams.info(stream)).state.messages).toBe(n);
  });

  it('drops publishes after close, and a second close is a no-op', async () => {
    const { prefix } = isolated();
    const publisher = await SwapRoutePublisher.open({ bus: nc, logger, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE });
    await publisher.close(1_000);
    publisher.publish(fields(1));
    await publisher.close(1_000);
    expect(publisher.stats()).toMatchObject({ published: 0, dropped: 1, errors: 0 });
    expect(nc.isClosed()).toBe(false); // a connection it was given stays open
  });

  it('leaves a shared BusConnection open on close', async () => {
    const { prefix } = isolated();
    const bus = BusConnection.open({ servers: [LOCAL_NATS_URL], name: 'shared' });
    try {
      const publisher = await SwapRoutePublisher.open({ bus, logger, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE });
      await waitFor(() => publisher.stats().connected, 10_000, 'connected');
      await waitFor(async () => {
        publisher.publish(fields(1));
        return publisher.stats().published > 0;
      }, 10_000, 'a publish through the shared bus');
      await publisher.close(5_000);
      expect(bus.connected).toBe(true);
    } finally {
      await bus.close();
    }
  });
});

describe('SwapRoutePublisher through bus outages', () => {
  it('counts publishes as errors while the server is down, never throws, and resumes after the restart', async () => {
    const nats = await startPrivateNats();
    const prefix = `${uniqueName('RP')}_`;
    const publisher = await SwapRoutePublisher.open({ bus: nats.url, logger, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE, reconnectWaitMs: 100, publishTimeoutMs: 500 });
    try {
      await waitFor(async () => {
        publisher.publish(fields(0, { createdAtMs: Date.now() }));
        return publisher.stats().published > 0;
      }, 10_000, 'first publish');
      await nats.stop();
      await waitFor(() => !publisher.stats().connected, 10_000, 'disconnect seen');
      const before = publisher.stats();
      for (let i = 1; i <= 10; i++) expect(() => publisher.publish(fields(i))).not.toThrow();
      expect(publisher.stats().errors).toBe(before.errors + 10);
      expect(publisher.stats().pending).toBe(before.pending); // nothing queued behind the dead bus

      await nats.restart();
      await waitFor(() => publisher.stats().connected, 15_000, 'reconnected');
      const publishedBefore = publisher.stats().published;
      await waitFor(async () => {
        publisher.publish(fields(100, { createdAtMs: Date.now() }));
        return publisher.stats().published > publishedBefore;
      }, 15_000, 'a publish after the restart');
    } finally {
      await publisher.close(2_000);
      await nats.close();
    }
  });

  it('starts while the bus is down, counts errors, and sets the stream up once the bus appears', async () => {
    const port = await deadPort();
    const prefix = `${uniqueName('RP')}_`;
    const publisher = await SwapRoutePublisher.open({ bus: `nats://127.0.0.1:${port}`, logger, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE, reconnectWaitMs: 100 });
    const server = await spawnNats(port);
    try {
      publisher.publish(fields(1));
      expect(publisher.stats()).toMatchObject({ connected: false, errors: 1 });
      await waitFor(async () => {
        publisher.publish(fields(2, { createdAtMs: Date.now() }));
        return publisher.stats().published > 0;
      }, 20_000, 'publish once the bus is up');
    } finally {
      await publisher.close(2_000);
      await server.kill();
    }
  });

  it.each(['owned URL', 'given NatsConnection'] as const)(
    'sets the stream up again when the bus comes back without it (%s)',
    async (kind) => {
      const port = await deadPort();
      let server = await spawnNats(port);
      const prefix = `${uniqueName('RP')}_`;
      const nc = kind === 'given NatsConnection' ? await connect({ servers: `nats://127.0.0.1:${port}`, maxReconnectAttempts: -1, reconnectTimeWait: 100 }) : undefined;
      const publisher = await SwapRoutePublisher.open({ bus: nc ?? `nats://127.0.0.1:${port}`, logger, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE, reconnectWaitMs: 100, publishTimeoutMs: 500 });
      try {
        await waitFor(async () => {
          publisher.publish(fields(0, { createdAtMs: Date.now() }));
          return publisher.stats().published > 0;
        }, 10_000, 'first publish');
        await server.kill();
        await waitFor(() => !publisher.stats().connected, 10_000, 'disconnect seen');
        server = await spawnNats(port); // a fresh store: the stream is gone
        await waitFor(() => publisher.stats().connected, 15_000, 'reconnected');
        const before = publisher.stats().published;
        await waitFor(async () => {
          publisher.publish(fields(1, { createdAtMs: Date.now() }));
          return publisher.stats().published > before;
        }, 15_000, 'a publish into the re-created stream');
        const check = await connect({ servers: `nats://127.0.0.1:${port}` });
        const info = await (await check.jetstreamManager()).streams.info(`${prefix}MARKET_SWAP_ROUTES`);
        await check.close();
        expect(info.config.storage).toBe('file');
        expect(info.state.messages).toBeGreaterThan(0);
      } finally {
        await publisher.close(2_000);
        await nc?.close();
        await server.kill();
      }
    },
  );

  it('counts the unacknowledged events as errors when close times out on an unresponsive bus', async () => {
    const port = await deadPort();
    const server = await spawnNats(port);
    const prefix = `${uniqueName('RP')}_`;
    const publisher = await SwapRoutePublisher.open({ bus: `nats://127.0.0.1:${port}`, logger, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE, publishTimeoutMs: 60_000 });
    try {
      await waitFor(async () => {
        publisher.publish(fields(0, { createdAtMs: Date.now() }));
        return publisher.stats().published > 0;
      }, 10_000, 'first publish');
      await waitFor(() => publisher.stats().pending === 0, 10_000, 'nothing in flight');
      const { published, errors } = publisher.stats();
      server.pause(); // the socket stays open; nothing answers
      for (let i = 1; i <= 20; i++) publisher.publish(fields(i));
      expect(publisher.stats().pending).toBe(20);
      await publisher.close(300);
      expect(publisher.stats()).toMatchObject({ published, pending: 0, errors: errors + 20 });
    } finally {
      await server.kill();
    }
  });
});

/** A private nats-server that a test can pause (SIGSTOP: connected but silent) and kill. */
async function spawnNats(port: number): Promise<{ pause(): void; kill(): Promise<void> }> {
  const store = mkdtempSync(join(tmpdir(), 'tidepool-nats-'));
  const child: ChildProcess = spawn('nats-server', ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', store], { stdio: 'ignore' });
  await waitFor(() => tcpReachable('127.0.0.1', port), 10_000, `nats-server on ${port}`);
  // A connect that succeeds proves JetStream is ready too (the server answers INFO before it is).
  const probe = await connect({ servers: `nats://127.0.0.1:${port}` });
  await probe.close();
  return {
    pause: () => child.kill('SIGSTOP'),
    async kill() {
      if (child.exitCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGKILL');
        await exited;
      }
      rmSync(store, { recursive: true, force: true });
    },
  };
}
