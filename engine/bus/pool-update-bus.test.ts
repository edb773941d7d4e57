/**
 * The POOL_UPDATES path over a real NATS: the scanner's PoolUpdatePublisher on one side, the quote
 * service's PoolUpdateConsumer and PoolUpdateHandler on the other. Every test has its own stream,
 * subjects and durable (random suffixes) and deletes its stream after.
 */
import { randomBytes, randomUUID } from 'node:crypto';

import type { Counter, Gauge } from 'prom-client';
import type { NatsConnection } from 'nats';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { PoolCache } from '../cache/index.js';
import { encode as encodeBase58 } from '../chain/base58.js';
import { isTpError } from '../errors.js';
import { createQuoteMetrics, type QuoteMetrics } from '../obs/quote-metrics.js';
import { PoolDirectory } from '../quote/pool-directory.js';
import { PoolUpdateHandler } from '../quote/pool-update-handler.js';
import type { PoolStateUpdateEvent } from '../scanner/pool-state-event.js';
import { BusConnection } from './connection.js';
import { PoolUpdateConsumer } from './pool-update-consumer.js';
import { PoolUpdatePublisher } from './pool-update-publisher.js';
import { poolUpdatesFilter, poolUpdatesStreamSpec, poolUpdateSubject } from './pool-updates.js';
import { ensureStream } from './stream-setup.js';
import { LOCAL_NATS_URL, connectLocal, deadPort, deleteStreams, uniqueName, uniqueSubjectRoot, waitFor } from './testing/local-nats.js';

const pubkey = (): string => encodeBase58(randomBytes(32));

function event(address: string, slot: bigint, reserveA: bigint, tokens: [string, string], eventId: string = randomUUID()): PoolStateUpdateEvent {
  return {
    eventId,
    timestamp: Date.now(),
    source: 'blockstream',
    latency: 1,
    pool: { address, dex: 'dexa_amm', tokenA: tokens[0], tokenB: tokens[1] },
    state: { slot: slot.toString(), reserveA: reserveA.toString(), reserveB: '1000000', feeNumerator: '25', feeDenominator: '10000' },
    transaction: { signature: encodeBase58(randomBytes(64)), confirmed: false },
  };
}

async function value(metric: Counter | Gauge): Promise<number> {
  return (await metric.get()).values[0]?.value ?? 0;
}

interface Side {
  cache: PoolCache;
  metrics: QuoteMetrics;
  handler: PoolUpdateHandler;
  consumer: PoolUpdateConsumer;
  bus: BusConnection;
}

describe('pool state updates over NATS JetStream', () => {
  let admin: NatsConnection;
  const streams: string[] = [];
  const closers: (() => Promise<void>)[] = [];
  let stream: string;
  let root: string;

  beforeAll(async () => {
    admin = await connectLocal();
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await deleteStreams(admin, streams.splice(0));
  });
  afterAll(async () => {
    await admin.close();
  });

  function names(): void {
    stream = uniqueName('POOL_UPDATES');
    root = uniqueSubjectRoot();
    streams.push(stream);
  }

  function busTo(servers = [LOCAL_NATS_URL]): BusConnection {
    const bus = BusConnection.open({ servers, name: 'tidepool-test', connectTimeoutMs: 500 });
    closers.push(() => bus.close());
    return bus;
  }

  async function publisher(options: { maxInFlight?: number; retries?: number; timeoutMs?: number } = {}): Promise<PoolUpdatePublisher> {
    const bus = busTo();
    await bus.ready();
    await ensureStream((await bus.jetstreamManager())!, poolUpdatesStreamSpec({ streamName: stream, subjectRoot: root }));
    return new PoolUpdatePublisher({ bus, subjectRoot: root, streamName: stream, ...options });
  }

  function quoteSide(consumerName: string, cache = new PoolCache(), seedOnStart = false): Side {
    const metrics = createQuoteMetrics();
    const handler = new PoolUpdateHandler({ cache, directory: new PoolDirectory(), metrics });
    const bus = busTo();
    const consumer = new PoolUpdateConsumer({ bus, handler, streamName: stream, subjectRoot: root, consumerName, lagIntervalMs: 50, seedOnStart });
    closers.push(() => consumer.close());
    consumer.start();
    return { cache, metrics, handler, consumer, bus };
  }

  it('round trip: published events land in the cache under the slot rule, then are acked', async () => {
    names();
    const pub = await publisher();
    const q = quoteSide('quote-service');
    const tokens: [string, string] = [pubkey(), pubkey()];
    const pool = pubkey();
    await pub.publish(event(pool, 100n, 5000n, tokens));
    await pub.publish(event(pool, 102n, 7000n, tokens));
    await pub.publish(event(pool, 101n, 6000n, tokens)); // older than the held slot: ignored
    await waitFor(() => q.consumer.stats.acked === 3, 10_000, 'three acks');
    expect(q.cache.get(pool)?.slot).toBe(102n);
    expect(q.cache.get(pool)?.reserveA).toBe(7000n);
    expect(await value(q.metrics.poolUpdatesReceived)).toBe(3);
    const info = await (await admin.jetstreamManager()).consumers.info(stream, 'quote-service');
    await waitFor(async () => (await (await admin.jetstreamManager()).consumers.info(stream, 'quote-service')).num_ack_pending === 0, 10_000, 'acks');
    expect(info.config.filter_subject).toBe(poolUpdatesFilter(root));
    expect(info.config.max_ack_pending).toBe(100);
    await waitFor(() => q.consumer.stats.lastLag === 0, 10_000, 'lag reported');
    expect(await value(q.metrics.busConsumerLagMessages)).toBe(0);
  });

  it('handles and acknowledges the messages of one delivery in one synchronous run', async () => {
    names();
    const pub = await publisher();
    const tokens: [string, string] = [pubkey(), pubkey()];
    // Waiting in the stream before the consumer starts: its first pull brings them in a burst.
    await Promise.all(Array.from({ length: 50 }, () => pub.publish(event(pubkey(), 1n, 1n, tokens))));
    const metrics = createQuoteMetrics();
    const handler = new PoolUpdateHandler({ cache: new PoolCache(), directory: new PoolDirectory(), metrics });
    // Between two messages handled in one synchronous run, a microtask queued by the first has not
    // run yet; an async iterator would run it at the await before each next message.
    let sameRun = 0;
    let turnEnded = true;
    const consumer = new PoolUpdateConsumer({
      bus: busTo(),
      handler,
      streamName: stream,
      subjectRoot: root,
      consumerName: 'quote-service',
      onHandled: () => {
        if (!turnEnded) sameRun++;
        turnEnded = false;
        queueMicrotask(() => {
          turnEnded = true;
        });
      },
    });
    closers.push(() => consumer.close());
    consumer.start();
    await waitFor(() => consumer.stats.acked === 50, 10_000, 'fifty acks');
    expect(sameRun).toBeGreaterThan(0);
    await waitFor(async () => (await (await admin.jetstreamManager()).consumers.info(stream, 'quote-service')).num_ack_pending === 0, 10_000, 'acks');
  });

  it('stores an event published twice with the same message id only once', async () => {
    names();
    const pub = await publisher();
    const e = event(pubkey(), 10n, 1n, [pubkey(), pubkey()]);
    await pub.publish(e);
    await pub.publish(e);
    expect(pub.stats).toMatchObject({ published: 1, duplicates: 1, failed: 0 });
    const info = await (await admin.jetstreamManager()).streams.info(stream);
    expect(info.state.messages).toBe(1);
  });

  it('counts and acknowledges an unparsable message, which is not redelivered', async () => {
    names();
    await publisher();
    const q = quoteSide('quote-service');
    await waitFor(() => q.consumer.consuming, 10_000, 'consumer');
    const js = admin.jetstream();
    await js.publish(poolUpdateSubject('dexa_amm', pubkey(), root), new TextEncoder().encode('{not json'));
    await js.publish(poolUpdateSubject('dexa_amm', pubkey(), root), new TextEncoder().encode(JSON.stringify({ pool: { dex: 'nope' }, state: {} })));
    await waitFor(() => q.consumer.stats.acked === 2, 10_000, 'two acks');
    expect(await value(q.metrics.busParseErrors)).toBe(2);
    const jsm = await admin.jetstreamManager();
    await waitFor(async () => {
      const info = await jsm.consumers.info(stream, 'quote-service');
      return info.num_ack_pending === 0 && info.num_pending === 0 && info.ack_floor.stream_seq === 2;
    }, 10_000, 'ack floor at 2');
    expect(q.consumer.stats.received).toBe(2);
  });

  it('bus down: publishes are refused (counted by the scanner as publish errors), nothing blocks', async () => {
    names();
    const bus = busTo([`nats://127.0.0.1:${await deadPort()}`]);
    const pub = new PoolUpdatePublisher({ bus, subjectRoot: root });
    const err = await pub.publish(event(pubkey(), 1n, 1n, [pubkey(), pubkey()])).catch((e: unknown) => e);
    expect(isTpError(err, 'TP_ERR_BUS_PUBLISH')).toBe(true);
    expect(pub.stats).toMatchObject({ failed: 1, inFlight: 0 });
  });

  it('refuses publishes past the in-flight cap', async () => {
    names();
    const pub = await publisher({ maxInFlight: 2 });
    const tokens: [string, string] = [pubkey(), pubkey()];
    const first = [pub.publish(event(pubkey(), 1n, 1n, tokens)), pub.publish(event(pubkey(), 1n, 1n, tokens))];
    const third = await pub.publish(event(pubkey(), 1n, 1n, tokens)).catch((e: unknown) => e);
    expect(isTpError(third, 'TP_ERR_BUS_PUBLISH')).toBe(true);
    await Promise.all(first);
    expect(pub.stats).toMatchObject({ published: 2, failed: 1, inFlight: 0 });
  });

  it('fails after the bounded retries when no stream takes the subject', async () => {
    names();
    const bus = busTo();
    await bus.ready();
    const pub = new PoolUpdatePublisher({ bus, subjectRoot: uniqueSubjectRoot(), retries: 2, timeoutMs: 500 });
    const err = await pub.publish(event(pubkey(), 1n, 1n, [pubkey(), pubkey()])).catch((e: unknown) => e);
    expect(isTpError(err, 'TP_ERR_BUS_PUBLISH')).toBe(true);
    expect(pub.stats.failed).toBe(1);
  });

  it('a restarted quote service resumes from its durable: nothing acknowledged is redelivered, nothing is lost', async () => {
    names();
    const pub = await publisher();
    const tokens: [string, string] = [pubkey(), pubkey()];
    const first = quoteSide('quote-service');
    for (let i = 0; i < 5; i++) await pub.publish(event(pubkey(), 1n, 1n, tokens));
    await waitFor(() => first.consumer.stats.acked === 5, 10_000, 'five acks');
    await first.consumer.close();
    await first.bus.close();
    // Published while no quote service runs.
    const later = [pubkey(), pubkey(), pubkey()];
    for (const pool of later) await pub.publish(event(pool, 2n, 2n, tokens));
    const second = quoteSide('quote-service');
    await waitFor(() => second.consumer.stats.acked === 3, 10_000, 'three acks after restart');
    for (const pool of later) expect(second.cache.get(pool)?.slot).toBe(2n);
    expect(second.cache.size).toBe(3);
    await new Promise((r) => setTimeout(r, 200));
    expect(second.consumer.stats.received).toBe(3);
  });

  it('a restarted quote service seeded from the stream starts with every pool it holds, at the newest slot', async () => {
    names();
    const pub = await publisher();
    const tokens: [string, string] = [pubkey(), pubkey()];
    const pools = [pubkey(), pubkey(), pubkey()];
    const first = quoteSide('quote-service');
    for (const [i, pool] of pools.entries()) {
      await pub.publish(event(pool, 5n, BigInt(i), tokens));
      await pub.publish(event(pool, 9n, BigInt(100 + i), tokens));
    }
    await waitFor(() => first.consumer.stats.acked === 6, 10_000, 'six acks');
    await first.consumer.close();
    await first.bus.close();
    const second = quoteSide('quote-service', new PoolCache(), true);
    await waitFor(() => second.cache.size === 3, 10_000, 'three pools seeded');
    for (const [i, pool] of pools.entries()) {
      expect(second.cache.get(pool)?.slot).toBe(9n);
      expect(second.cache.get(pool)?.reserveA).toBe(BigInt(100 + i));
    }
    expect(second.consumer.stats.seeded).toBe(3);
    await waitFor(() => second.consumer.consuming, 10_000, 'durable consuming');
    expect(second.consumer.stats.received).toBe(0);
  });

  it('seeds nothing from an empty stream and goes on to the durable', async () => {
    names();
    const pub = await publisher();
    const q = quoteSide('quote-service', new PoolCache(), true);
    await waitFor(() => q.consumer.consuming, 10_000, 'durable consuming');
    const pool = pubkey();
    await pub.publish(event(pool, 1n, 1n, [pubkey(), pubkey()]));
    await waitFor(() => q.cache.get(pool) !== undefined, 10_000, 'update delivered');
    expect(q.consumer.stats.seeded).toBe(0);
  });

  it('two scanners (different event ids for the same transactions) and two quote services converge', async () => {
    names();
    const regionA = await publisher();
    const regionB = await publisher();
    const tokens: [string, string] = [pubkey(), pubkey()];
    const pools = [pubkey(), pubkey(), pubkey()];
    // Each region sees the same transactions in its own order and names its events itself.
    const updates = pools.flatMap((pool, p) => [1n, 2n, 3n, 4n].map((slot) => ({ pool, slot, reserveA: BigInt(p * 1000) + slot })));
    const shuffled = [...updates].reverse();
    const q1 = quoteSide('quote-service-1');
    const q2 = quoteSide('quote-service-2');
    await Promise.all([
      (async () => {
        for (const u of updates) await regionA.publish(event(u.pool, u.slot, u.reserveA, tokens));
      })(),
      (async () => {
        for (const u of shuffled) await regionB.publish(event(u.pool, u.slot, u.reserveA, tokens));
      })(),
    ]);
    const total = updates.length * 2;
    await waitFor(() => q1.consumer.stats.acked === total && q2.consumer.stats.acked === total, 10_000, 'every event in both quote services');
    for (const [p, pool] of pools.entries()) {
      for (const q of [q1, q2]) {
        expect(q.cache.get(pool)?.slot).toBe(4n);
        expect(q.cache.get(pool)?.reserveA).toBe(BigInt(p * 1000) + 4n);
      }
    }
  });
});
