import { connect, headers, type JetStreamManager, type NatsConnection } from 'nats';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ErrorCode, TpError } from '../errors.js';
import { createDeadLetterMetrics, DeadLetterConsumer, DeadLetterHeader, deadLetterStreamSpec, ensureDeadLetterStream } from './dead-letter.js';
import { platformConsumerSpec } from './platform-streams.js';
import { ensureConsumer, ensureStream, NS_PER_SECOND, Retention, Storage } from './stream-setup.js';
import { NATS_SERVER_MISSING, NatsServer } from './testing/cluster.js';
import { TEST_STREAM_MAX_BYTES_SCALE, uniqueName, uniqueSubjectRoot, waitFor } from './testing/local-nats.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

describe.skipIf(NATS_SERVER_MISSING !== undefined)(`dead-letter consumer${NATS_SERVER_MISSING === undefined ? '' : ` (skipped: ${NATS_SERVER_MISSING})`}`, () => {
  let server: NatsServer;
  let nc: NatsConnection;
  let jsm: JetStreamManager;

  beforeAll(async () => {
    server = await NatsServer.start();
    nc = await connect({ servers: server.url });
    jsm = await nc.jetstreamManager();
  });
  afterAll(async () => {
    await nc?.close();
    await server?.close();
  });

  /** A stream, its durable consumer and a dead-letter stream, all named for this test only. */
  async function setup(): Promise<{ stream: string; root: string; prefix: string; cleanup: () => Promise<void> }> {
    const stream = uniqueName('DLT');
    const root = uniqueSubjectRoot();
    const prefix = `${uniqueName('D')}_`;
    await ensureStream(jsm, { name: stream, subjects: [`${root}.>`], retention: Retention.Limits, maxAgeNs: 60 * NS_PER_SECOND, storage: Storage.Memory });
    await ensureConsumer(jsm, platformConsumerSpec(stream, 'worker', `${root}.>`));
    await ensureDeadLetterStream(nc, { replicas: 1, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE });
    const cleanup = async (): Promise<void> => {
      await jsm.streams.delete(stream).catch(() => false);
      await jsm.streams.delete(deadLetterStreamSpec({ replicas: 1, prefix }).name).catch(() => false);
    };
    return { stream, root, prefix, cleanup };
  }

  it('acks good messages once and moves a poison message to the dead-letter subject after max deliveries, with its reason', async () => {
    const { stream, root, prefix, cleanup } = await setup();
    const registry = new Registry();
    const metrics = createDeadLetterMetrics(registry);
    const calls = new Map<string, number>();
    const consumer = await DeadLetterConsumer.start({
      nc,
      stream,
      consumer: 'worker',
      metrics,
      maxDeliver: 3,
      retryDelayMs: 20,
      subjectRoot: `${prefix}dlq`,
      handler: (m) => {
        const body = JSON.parse(dec.decode(m.data)) as { id: string; poison?: boolean };
        calls.set(body.id, (calls.get(body.id) ?? 0) + 1);
        if (body.poison === true) throw new Error('cannot plan: poison payload');
      },
    });
    try {
      const js = nc.jetstream();
      const h = headers();
      h.set('Trace-Id', 'abc');
      for (let i = 0; i < 10; i++) {
        if (i === 4) await js.publish(`${root}.orders.poison`, enc.encode(JSON.stringify({ id: 'poison', poison: true })), { headers: h });
        await js.publish(`${root}.orders.good`, enc.encode(JSON.stringify({ id: `good-${i}` })));
      }
      const dlqStream = `${prefix}DEAD_LETTERS`;
      await waitFor(async () => (await jsm.streams.info(dlqStream)).state.messages === 1, 15_000, 'the dead letter');
      await waitFor(async () => (await jsm.consumers.info(stream, 'worker')).ack_floor.stream_seq === 11, 15_000, 'every message acknowledged or terminated');

      const dead = await jsm.streams.getMessage(dlqStream, { seq: 1 });
      expect(dead.subject).toBe(`${prefix}dlq.${stream}.${root}.orders.poison`);
      expect(JSON.parse(dec.decode(dead.data))).toEqual({ id: 'poison', poison: true });
      expect(dead.header.get(DeadLetterHeader.Reason)).toBe('Error: cannot plan: poison payload');
      expect(dead.header.get(DeadLetterHeader.Subject)).toBe(`${root}.orders.poison`);
      expect(dead.header.get(DeadLetterHeader.Stream)).toBe(stream);
      expect(dead.header.get(DeadLetterHeader.Consumer)).toBe('worker');
      expect(dead.header.get(DeadLetterHeader.Deliveries)).toBe('3');
      expect(dead.header.get(DeadLetterHeader.StreamSeq)).toBe('5');
      expect(dead.header.get('Trace-Id')).toBe('abc');

      expect(calls.get('poison')).toBe(3);
      for (let i = 0; i < 10; i++) expect(calls.get(`good-${i}`)).toBe(1);
      const info = await jsm.consumers.info(stream, 'worker');
      expect(info.num_ack_pending).toBe(0);
      expect(info.num_pending).toBe(0);

      // Terminated, not redelivered: well past the retry delay, still three attempts and one dead letter.
      await new Promise((r) => setTimeout(r, 300));
      expect(calls.get('poison')).toBe(3);
      expect((await jsm.streams.info(dlqStream)).state.messages).toBe(1);

      const text = await registry.metrics();
      expect(text).toContain(`bus_dead_letters_total{stream="${stream}"} 1`);
      expect(text).toContain(`bus_processing_failures_total{stream="${stream}"} 3`);
    } finally {
      await consumer.stop();
      await cleanup();
    }
  });

  it('dead-letters a message that is not valid (TP_ERR_MESSAGE_INVALID) on its first delivery, without retrying it', async () => {
    const { stream, root, prefix, cleanup } = await setup();
    const registry = new Registry();
    const calls = new Map<string, number>();
    const consumer = await DeadLetterConsumer.start({
      nc,
      stream,
      consumer: 'worker',
      metrics: createDeadLetterMetrics(registry),
      maxDeliver: 5,
      retryDelayMs: 20,
      subjectRoot: `${prefix}dlq`,
      handler: (m) => {
        const body = JSON.parse(dec.decode(m.data)) as { id: string; forged?: boolean };
        calls.set(body.id, (calls.get(body.id) ?? 0) + 1);
        if (body.forged === true) throw new TpError(ErrorCode.MessageInvalid, 'invalid MarketEvent: /slot: far ahead of the pool');
      },
    });
    try {
      const js = nc.jetstream();
      await js.publish(`${root}.events.forged`, enc.encode(JSON.stringify({ id: 'forged', forged: true })));
      await js.publish(`${root}.events.good`, enc.encode(JSON.stringify({ id: 'good' })));
      const dlqStream = `${prefix}DEAD_LETTERS`;
      await waitFor(async () => (await jsm.streams.info(dlqStream)).state.messages === 1, 15_000, 'the dead letter');
      await waitFor(async () => (await jsm.consumers.info(stream, 'worker')).ack_floor.stream_seq === 2, 15_000, 'both messages done');
      const dead = await jsm.streams.getMessage(dlqStream, { seq: 1 });
      expect(dead.header.get(DeadLetterHeader.Deliveries)).toBe('1');
      expect(dead.header.get(DeadLetterHeader.Reason)).toContain('TP_ERR_MESSAGE_INVALID');
      expect(calls.get('forged')).toBe(1);
      expect(calls.get('good')).toBe(1);
    } finally {
      await consumer.stop();
      await cleanup();
    }
  });

  it('keeps a failing message for redelivery while the dead-letter publish fails, and dead-letters it once that works', async () => {
    const { stream, root, prefix, cleanup } = await setup();
    const registry = new Registry();
    const metrics = createDeadLetterMetrics(registry);
    // No dead-letter stream yet: the publish finds no responder and fails.
    await jsm.streams.delete(`${prefix}DEAD_LETTERS`);
    let attempts = 0;
    const consumer = await DeadLetterConsumer.start({
      nc,
      stream,
      consumer: 'worker',
      metrics,
      maxDeliver: 2,
      retryDelayMs: 20,
      subjectRoot: `${prefix}dlq`,
      handler: () => {
        attempts++;
        throw new Error('always fails');
      },
    });
    try {
      await nc.jetstream().publish(`${root}.x`, enc.encode('{}'));
      await waitFor(async () => (await metrics.publishErrors.get()).values.some((v) => v.value >= 2), 15_000, 'failed dead-letter publishes');
      expect((await jsm.consumers.info(stream, 'worker')).ack_floor.stream_seq).toBe(0);
      await ensureDeadLetterStream(nc, { replicas: 1, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE });
      await waitFor(async () => (await jsm.streams.info(`${prefix}DEAD_LETTERS`)).state.messages === 1, 15_000, 'the dead letter');
      await waitFor(async () => (await jsm.consumers.info(stream, 'worker')).ack_floor.stream_seq === 1, 15_000, 'the message terminated');
      expect(attempts).toBeGreaterThanOrEqual(4);
      expect((await metrics.deadLetters.get()).values[0]?.value).toBe(1);
    } finally {
      await consumer.stop();
      await cleanup();
    }
  });
  it('handles up to `concurrency` messages at once, and a deferred message comes back without counting as a failure', async () => {
    const { stream, root, prefix, cleanup } = await setup();
    const registry = new Registry();
    const metrics = createDeadLetterMetrics(registry);
    let running = 0;
    let peak = 0;
    let gate: () => void = () => undefined;
    const opened = new Promise<void>((r) => (gate = r));
    const seen = new Map<string, number>();
    const consumer = await DeadLetterConsumer.start({
      nc,
      stream,
      consumer: 'worker',
      metrics,
      retryDelayMs: 20,
      concurrency: 3,
      workingIntervalMs: 50,
      subjectRoot: `${prefix}dlq`,
      handler: async (m) => {
        const id = dec.decode(m.data);
        seen.set(id, (seen.get(id) ?? 0) + 1);
        if (id === 'later' && seen.get(id) === 1) return { nakDelayMs: 20 };
        running++;
        peak = Math.max(peak, running);
        await opened;
        running--;
      },
    });
    try {
      const js = nc.jetstream();
      for (let i = 0; i < 6; i++) await js.publish(`${root}.c`, enc.encode(`m${i}`));
      await js.publish(`${root}.c`, enc.encode('later'));
      await waitFor(() => running === 3, 15_000, 'three handlers running at once');
      gate();
      await waitFor(async () => (await jsm.consumers.info(stream, 'worker')).ack_floor.stream_seq === 7, 15_000, 'every message acknowledged');
      expect(peak).toBe(3);
      expect(seen.get('later')).toBe(2);
      expect((await metrics.processingFailures.get()).values.reduce((a, v) => a + v.value, 0)).toBe(0);
    } finally {
      await consumer.stop();
      await cleanup();
    }
  });
});
