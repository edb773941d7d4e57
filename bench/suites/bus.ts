/**
 * `bus`: the split deployment's transport, the scanner's PoolUpdatePublisher → NATS JetStream
 * (POOL_UPDATES settings: limits, memory storage, message ids) → the quote service's
 * PoolUpdateConsumer → PoolUpdateHandler → PoolCache, beside bare JetStream in the same run.
 *
 * The server: a fresh `nats-server` (JetStream, one node, free loopback port, temporary store) when
 * the binary is installed, so the figures never touch a developer's running NATS; else
 * `BENCH_NATS_URL` (default nats://127.0.0.1:4222) with uniquely named streams, deleted after.
 * Publisher, consumer and clock share this process; the server runs beside it.
 *
 * Latency (probes one at a time, HDR): start before the publish, end when the message is handled.
 *   ours:     PoolUpdatePublisher.publish(event) → … → the update is in the PoolCache (onHandled)
 *   baseline: js.publish(the same JSON bytes) → a pull consumer's `consume()` hands the message over
 * Sustained rate: events published with up to 1,000 awaiting their acks, until the consumer has
 * handled (and acked) the last; both consumers pull with spec 02's 100 pending acknowledgements.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';

import { connect, type JetStreamClient, type JetStreamManager, type NatsConnection } from 'nats';

import { PoolCache } from '../../engine/cache/index.js';
import { encode as encodeBase58 } from '../../engine/chain/base58.js';
import { BusConnection } from '../../engine/bus/connection.js';
import { PoolUpdateConsumer } from '../../engine/bus/pool-update-consumer.js';
import { PoolUpdatePublisher } from '../../engine/bus/pool-update-publisher.js';
import { POOL_UPDATES_MAX_ACK_PENDING, poolUpdatesConsumerSpec, poolUpdatesStreamSpec, poolUpdateSubject } from '../../engine/bus/pool-updates.js';
import { ensureConsumer, ensureStream } from '../../engine/bus/stream-setup.js';
import { NATS_SERVER_MISSING, NatsServer } from '../../engine/bus/testing/cluster.js';
import { uniqueName, uniqueSubjectRoot } from '../../engine/bus/testing/local-nats.js';
import { createQuoteMetrics } from '../../engine/obs/quote-metrics.js';
import { PoolDirectory } from '../../engine/quote/pool-directory.js';
import { PoolUpdateHandler } from '../../engine/quote/pool-update-handler.js';
import type { PoolStateUpdateEvent } from '../../engine/scanner/pool-state-event.js';
import type { Figure, Suite } from '../harness.js';
import { LatencyRecorder } from '../latency.js';

const PROBES = Number(process.env.BENCH_BUS_PROBES ?? 2_000);
const SUSTAINED = Number(process.env.BENCH_BUS_MESSAGES ?? 50_000);
const IN_FLIGHT = 1_000;
const POOLS = 1_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Pool {
  address: string;
  tokenA: string;
  tokenB: string;
}

function makePools(): Pool[] {
  const key = (): string => encodeBase58(randomBytes(32));
  return Array.from({ length: POOLS }, () => ({ address: key(), tokenA: key(), tokenB: key() }));
}

/** A PoolStateUpdateEvent as the scanner publishes it; `slot` grows so the slot rule stores every one. */
function eventOf(pool: Pool, slot: number): PoolStateUpdateEvent {
  return {
    eventId: randomUUID(),
    timestamp: Date.now(),
    source: 'blockstream',
    latency: 1,
    pool: { address: pool.address, dex: 'dexa_amm', tokenA: pool.tokenA, tokenB: pool.tokenB },
    state: { slot: String(slot), reserveA: String(1_000_000_000 + slot), reserveB: '2000000000', feeNumerator: '25', feeDenominator: '10000' },
    transaction: { signature: encodeBase58(randomBytes(64)), confirmed: false },
  };
}

export const busSuite: Suite = {
  name: 'bus',
  description: 'PoolStateUpdateEvent publish → PoolCache through NATS JetStream, beside a bare JetStream publish → consume',
  async run(): Promise<Figure[]> {
    const server = NATS_SERVER_MISSING === undefined ? await NatsServer.start() : undefined;
    const url = server?.url ?? process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';
    const admin = await connect({ servers: url });
    const jsm = await admin.jetstreamManager();
    const streams: string[] = [];
    try {
      const pools = makePools();
      const bare = await measureBare(admin, jsm, pools, streams);
      const ours = await measureOurs(url, jsm, pools, streams);
      const serverNote = server === undefined ? `NATS at ${url}` : 'a fresh nats-server (JetStream, one node) on loopback';
      const size = new TextEncoder().encode(JSON.stringify(eventOf(pools[0]!, 1))).length;
      return [
        {
          name: 'event publish → stored in PoolCache, p95 (PoolUpdatePublisher → JetStream → PoolUpdateConsumer → cache)',
          unit: 'ms',
          value: ours.latency.percentileUs(95) / 1000,
          higherIsBetter: false,
          baseline: { name: 'bare JetStream publish → pull consumer, p95', value: bare.latency.percentileUs(95) / 1000 },
          ...percentiles(ours.latency),
          goal: 'p95 < 20 ms',
          goalMet: ours.latency.percentileUs(95) / 1000 < 20,
          note: `${PROBES} probes one at a time, ${size}-byte events over ${POOLS} pools, memory stream; bare p50 ${ms(bare.latency, 50)} / p95 ${ms(bare.latency, 95)} / p99 ${ms(bare.latency, 99)} ms, ours p50 ${ms(ours.latency, 50)} / p95 ${ms(ours.latency, 95)} / p99 ${ms(ours.latency, 99)} ms; ${serverNote}`,
        },
        {
          name: 'sustained pool updates/s, one quote service (publisher → JetStream → consumer → cache)',
          unit: 'msg/s',
          value: ours.rate,
          higherIsBetter: true,
          baseline: { name: 'bare JetStream publish → pull consumer, msg/s', value: bare.rate },
          goal: '≥ 20,000 pool updates/s',
          goalMet: ours.rate >= 20_000,
          note: `${SUSTAINED} messages, up to ${IN_FLIGHT} publishes awaiting their acks, consumers with ${POOL_UPDATES_MAX_ACK_PENDING} pending acks (spec 02); ${ours.stored} stored in the cache; ${serverNote}`,
        },
      ];
    } finally {
      for (const s of streams) await jsm.streams.delete(s).catch(() => false);
      await admin.close();
      await server?.close();
    }
  },
};

function ms(r: LatencyRecorder, p: number): string {
  return (r.percentileUs(p) / 1000).toFixed(2);
}

function percentiles(r: LatencyRecorder): Pick<Figure, 'p50Us' | 'p99Us' | 'p999Us'> {
  const s = r.summary();
  return { p50Us: s.p50Us, p99Us: s.p99Us, p999Us: s.p999Us };
}

/** Publishes `count` messages with at most IN_FLIGHT awaiting their ack. */
async function pumped(count: number, send: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let i = next++; i < count; i = next++) await send(i);
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
}

async function measureBare(nc: NatsConnection, jsm: JetStreamManager, pools: Pool[], streams: string[]): Promise<{ latency: LatencyRecorder; rate: number }> {
  const stream = uniqueName('BENCH_BARE');
  const root = uniqueSubjectRoot();
  streams.push(stream);
  await ensureStream(jsm, poolUpdatesStreamSpec({ streamName: stream, subjectRoot: root }));
  await ensureConsumer(jsm, poolUpdatesConsumerSpec({ streamName: stream, subjectRoot: root, consumerName: 'bench' }));
  const js: JetStreamClient = nc.jetstream();
  const messages = await (await js.consumers.get(stream, 'bench')).consume({ max_messages: POOL_UPDATES_MAX_ACK_PENDING });
  let received = 0;
  let onReceived: (() => void) | undefined;
  const loop = (async () => {
    for await (const m of messages) {
      m.ack();
      received++;
      onReceived?.();
    }
  })();
  const enc = new TextEncoder();
  const payloads = pools.map((p, i) => ({ subject: poolUpdateSubject('dexa_amm', p.address, root), data: enc.encode(JSON.stringify(eventOf(p, i + 1))) }));

  const latency = new LatencyRecorder();
  for (let i = 0; i < PROBES + 200; i++) {
    const { subject, data } = payloads[i % payloads.length]!;
    const target = received + 1;
    const started = performance.now();
    const got = new Promise<void>((resolve) => {
      onReceived = () => {
        if (received >= target) resolve();
      };
    });
    await js.publish(subject, data, { msgID: randomUUID() });
    await got;
    if (i >= 200) latency.recordNs((performance.now() - started) * 1e6); // the first 200 warm up
  }
  onReceived = undefined;

  const base = received;
  const done = new Promise<void>((resolve) => {
    onReceived = () => {
      if (received - base >= SUSTAINED) resolve();
    };
  });
  const started = performance.now();
  await pumped(SUSTAINED, (i) => {
    const { subject, data } = payloads[i % payloads.length]!;
    return js.publish(subject, data, { msgID: randomUUID() });
  });
  await done;
  const rate = SUSTAINED / ((performance.now() - started) / 1000);
  await messages.close();
  await loop;
  return { latency, rate };
}

async function measureOurs(url: string, jsm: JetStreamManager, pools: Pool[], streams: string[]): Promise<{ latency: LatencyRecorder; rate: number; stored: number }> {
  const stream = uniqueName('BENCH_POOL_UPDATES');
  const root = uniqueSubjectRoot();
  streams.push(stream);
  const pubBus = BusConnection.open({ servers: [url], name: 'bench-scanner' });
  const subBus = BusConnection.open({ servers: [url], name: 'bench-quote-service' });
  await pubBus.ready();
  await subBus.ready();
  await ensureStream(jsm, poolUpdatesStreamSpec({ streamName: stream, subjectRoot: root }));
  const publisher = new PoolUpdatePublisher({ bus: pubBus, subjectRoot: root, streamName: stream, maxInFlight: IN_FLIGHT + 24 });
  const cache = new PoolCache();
  const handler = new PoolUpdateHandler({ cache, directory: new PoolDirectory(), metrics: createQuoteMetrics() });
  let handled = 0;
  let stored = 0;
  let onHandled: (() => void) | undefined;
  const consumer = new PoolUpdateConsumer({
    bus: subBus,
    handler,
    streamName: stream,
    subjectRoot: root,
    consumerName: 'bench',
    onHandled: (outcome) => {
      handled++;
      if (outcome === 'inserted' || outcome === 'replaced') stored++;
      onHandled?.();
    },
  });
  consumer.start();
  while (!consumer.consuming) await sleep(10);

  let slot = 1;
  const latency = new LatencyRecorder();
  try {
    for (let i = 0; i < PROBES + 200; i++) {
      const event = eventOf(pools[i % pools.length]!, slot++);
      const target = handled + 1;
      const started = performance.now();
      const got = new Promise<void>((resolve) => {
        onHandled = () => {
          if (handled >= target) resolve();
        };
      });
      await publisher.publish(event);
      await got;
      if (i >= 200) latency.recordNs((performance.now() - started) * 1e6);
    }
    onHandled = undefined;
    // Events built beforehand: the figure is the transport's, not the event builder's.
    const events = Array.from({ length: SUSTAINED }, (_, i) => eventOf(pools[i % pools.length]!, slot++));
    const base = handled;
    const storedBefore = stored;
    const done = new Promise<void>((resolve) => {
      onHandled = () => {
        if (handled - base >= SUSTAINED) resolve();
      };
    });
    const started = performance.now();
    await pumped(SUSTAINED, (i) => publisher.publish(events[i]!));
    await done;
    const rate = SUSTAINED / ((performance.now() - started) / 1000);
    return { latency, rate, stored: stored - storedBefore };
  } finally {
    await consumer.close();
    await pubBus.close();
    await subBus.close();
  }
}
