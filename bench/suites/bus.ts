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
 * The baseline is the stock nats.js usage (JetStreamClient.publish per message, the consume()
 * iterator, pre-encoded payloads, nothing done per message); ours encodes each event, pipelines
 * the publishes on one ack inbox, and parses, checks and stores each update on a consume callback.
 * The rate is measured in ROUNDS rounds, baseline and ours alternating, and each side's median is
 * reported, so that a neighbour's load on a shared machine hits both sides alike.
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
const SUSTAINED = Number(process.env.BENCH_BUS_MESSAGES ?? 30_000);
const ROUNDS = Number(process.env.BENCH_BUS_ROUNDS ?? 3);
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
    const sides: Side[] = [];
    try {
      const pools = makePools();
      const bare = await bareSide(admin, jsm, pools, streams);
      sides.push(bare);
      const ours = await ourSide(url, jsm, pools, streams);
      sides.push(ours);
      const bareLatency = await probe(bare);
      const ourLatency = await probe(ours);
      const bareRates: number[] = [];
      const ourRates: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        bareRates.push(await sustained(bare));
        ourRates.push(await sustained(ours));
      }
      const bareRate = median(bareRates);
      const ourRate = median(ourRates);
      const serverNote = server === undefined ? `NATS at ${url}` : 'a fresh nats-server (JetStream, one node) on loopback';
      const size = new TextEncoder().encode(JSON.stringify(eventOf(pools[0]!, 1))).length;
      const rates = (r: number[]): string => r.map((x) => Math.round(x).toLocaleString('en-US')).join(' / ');
      return [
        {
          name: 'event publish → stored in PoolCache, p95 (PoolUpdatePublisher → JetStream → PoolUpdateConsumer → cache)',
          unit: 'ms',
          value: ourLatency.percentileUs(95) / 1000,
          higherIsBetter: false,
          baseline: { name: 'bare JetStream publish → pull consumer, p95', value: bareLatency.percentileUs(95) / 1000 },
          ...percentiles(ourLatency),
          goal: 'p95 < 20 ms',
          goalMet: ourLatency.percentileUs(95) / 1000 < 20,
          note: `${PROBES} probes one at a time, ${size}-byte events over ${POOLS} pools, memory stream; bare p50 ${ms(bareLatency, 50)} / p95 ${ms(bareLatency, 95)} / p99 ${ms(bareLatency, 99)} ms, ours p50 ${ms(ourLatency, 50)} / p95 ${ms(ourLatency, 95)} / p99 ${ms(ourLatency, 99)} ms; ${serverNote}`,
        },
        {
          name: 'sustained pool updates/s, one quote service (publisher → JetStream → consumer → cache)',
          unit: 'msg/s',
          value: ourRate,
          higherIsBetter: true,
          baseline: { name: 'bare JetStream publish → pull consumer, msg/s', value: bareRate },
          goal: '≥ 20,000 pool updates/s; ≥ 0.9× bare JetStream',
          goalMet: ourRate >= 20_000 && ourRate >= 0.9 * bareRate,
          note: `median of ${ROUNDS} alternating rounds of ${SUSTAINED} messages (bare ${rates(bareRates)}; ours ${rates(ourRates)} msg/s), up to ${IN_FLIGHT} publishes awaiting their acks, consumers with ${POOL_UPDATES_MAX_ACK_PENDING} pending acks (spec 02); ${ours.stored} stored in the cache over all rounds; baseline: JetStreamClient.publish + consume() iterator, pre-encoded payloads; ${serverNote}`,
        },
      ];
    } finally {
      for (const side of sides.reverse()) await side.close().catch(() => undefined);
      for (const s of streams) await jsm.streams.delete(s).catch(() => false);
      await admin.close();
      await server?.close();
    }
  },
};

function ms(r: LatencyRecorder, p: number): string {
  return (r.percentileUs(p) / 1000).toFixed(2);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function percentiles(r: LatencyRecorder): Pick<Figure, 'p50Us' | 'p99Us' | 'p999Us'> {
  const s = r.summary();
  return { p50Us: s.p50Us, p99Us: s.p99Us, p999Us: s.p999Us };
}

/** One side of the comparison: its publisher and its consumer, set up once. */
interface Side {
  /** Messages handled by its consumer so far. */
  handled: number;
  /** Called after each handled message. */
  onHandled: (() => void) | undefined;
  /** Publishes the i-th message of a run (a probe or a sustained one). */
  send(i: number): Promise<unknown>;
  /** Prepares `count` messages for a sustained run (built beforehand: the figure is the transport's). */
  prepare(count: number): void;
  close(): Promise<void>;
  stored: number;
}

/** Probes one at a time, after 200 of warm-up. */
async function probe(side: Side): Promise<LatencyRecorder> {
  const latency = new LatencyRecorder();
  side.prepare(PROBES + 200);
  for (let i = 0; i < PROBES + 200; i++) {
    const target = side.handled + 1;
    const started = performance.now();
    const got = new Promise<void>((resolve) => {
      side.onHandled = () => {
        if (side.handled >= target) resolve();
      };
    });
    await side.send(i);
    await got;
    if (i >= 200) latency.recordNs((performance.now() - started) * 1e6);
  }
  side.onHandled = undefined;
  return latency;
}

/** SUSTAINED messages with at most IN_FLIGHT awaiting their ack, until the last is handled: msg/s. */
async function sustained(side: Side): Promise<number> {
  side.prepare(SUSTAINED);
  const base = side.handled;
  const done = new Promise<void>((resolve) => {
    side.onHandled = () => {
      if (side.handled - base >= SUSTAINED) resolve();
    };
  });
  const started = performance.now();
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let i = next++; i < SUSTAINED; i = next++) await side.send(i);
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  await done;
  side.onHandled = undefined;
  return SUSTAINED / ((performance.now() - started) / 1000);
}

async function bareSide(nc: NatsConnection, jsm: JetStreamManager, pools: Pool[], streams: string[]): Promise<Side> {
  const stream = uniqueName('BENCH_BARE');
  const root = uniqueSubjectRoot();
  streams.push(stream);
  await ensureStream(jsm, poolUpdatesStreamSpec({ streamName: stream, subjectRoot: root }));
  await ensureConsumer(jsm, poolUpdatesConsumerSpec({ streamName: stream, subjectRoot: root, consumerName: 'bench' }));
  const js: JetStreamClient = nc.jetstream();
  const messages = await (await js.consumers.get(stream, 'bench')).consume({ max_messages: POOL_UPDATES_MAX_ACK_PENDING });
  const enc = new TextEncoder();
  const payloads = pools.map((p, i) => ({ subject: poolUpdateSubject('dexa_amm', p.address, root), data: enc.encode(JSON.stringify(eventOf(p, i + 1))) }));
  const side: Side = {
    handled: 0,
    onHandled: undefined,
    stored: 0,
    prepare: () => undefined,
    send(i) {
      const { subject, data } = payloads[i % payloads.length]!;
      return js.publish(subject, data, { msgID: randomUUID() });
    },
    async close() {
      await messages.close();
      await loop;
    },
  };
  const loop = (async () => {
    for await (const m of messages) {
      m.ack();
      side.handled++;
      side.onHandled?.();
    }
  })();
  return side;
}

async function ourSide(url: string, jsm: JetStreamManager, pools: Pool[], streams: string[]): Promise<Side> {
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
  let slot = 1;
  let events: PoolStateUpdateEvent[] = [];
  const side: Side = {
    handled: 0,
    onHandled: undefined,
    stored: 0,
    prepare(count) {
      // `slot` grows across runs, so the slot rule stores every one.
      events = Array.from({ length: count }, (_, i) => eventOf(pools[i % pools.length]!, slot++));
    },
    send: (i) => publisher.publish(events[i]!),
    async close() {
      await consumer.close();
      await pubBus.close();
      await subBus.close();
    },
  };
  const consumer = new PoolUpdateConsumer({
    bus: subBus,
    handler,
    streamName: stream,
    subjectRoot: root,
    consumerName: 'bench',
    onHandled: (outcome) => {
      side.handled++;
      if (outcome === 'inserted' || outcome === 'replaced') side.stored++;
      side.onHandled?.();
    },
  });
  consumer.start();
  while (!consumer.consuming) await sleep(10);
  return side;
}
