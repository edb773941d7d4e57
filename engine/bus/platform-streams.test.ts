import type { JetStreamManager, NatsConnection } from 'nats';
import { connect } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { detectReplicas, ensurePlatformStreams, PLATFORM_STREAMS, platformConsumerSpec, platformStreamSpecs } from './platform-streams.js';
import { DEFAULT_ACK_WAIT_NS, ensureConsumer } from './stream-setup.js';
import { NATS_SERVER_MISSING, NatsServer } from './testing/cluster.js';
import { uniqueName } from './testing/local-nats.js';

const GiB = 1024 ** 3;
const DAY_NS = 86_400 * 1e9;

/** Spec 03's table, written out again by hand so the test does not read the values it checks. */
const SPEC_03 = [
  { name: 'MARKET_EVENTS', subject: 'market.events.>', maxAgeNs: 7 * DAY_NS, maxBytes: 10 * GiB },
  { name: 'TRADE_OPPORTUNITIES', subject: 'trade.opportunities.>', maxAgeNs: 1 * DAY_NS, maxBytes: 5 * GiB },
  { name: 'EXECUTION_ORDERS', subject: 'execution.orders.>', maxAgeNs: 30 * DAY_NS, maxBytes: 20 * GiB },
  { name: 'SYSTEM_METRICS', subject: 'system.metrics.>', maxAgeNs: 7 * DAY_NS, maxBytes: 1 * GiB },
];
/** Ours beside them: the trade signals. */
const SIGNALS = { name: 'SIGNALS', subject: 'signals.>', maxAgeNs: 1 * DAY_NS, maxBytes: 1 * GiB };

describe.skipIf(NATS_SERVER_MISSING !== undefined)(`platform streams on one server${NATS_SERVER_MISSING === undefined ? '' : ` (skipped: ${NATS_SERVER_MISSING})`}`, () => {
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

  it('lists the four streams of spec 03 and SIGNALS', () => {
    expect(PLATFORM_STREAMS.map((s) => s.name)).toEqual([...SPEC_03, SIGNALS].map((s) => s.name));
  });

  it('creates every stream with exactly the settings of spec 03, replicas 1 on a single server', async () => {
    const prefix = `${uniqueName('P')}_`;
    expect(detectReplicas(nc)).toBe(1);
    await ensurePlatformStreams(jsm, { nc, prefix });
    for (const want of [...SPEC_03, SIGNALS]) {
      const { config } = await jsm.streams.info(`${prefix}${want.name}`);
      expect(config.subjects).toEqual([`${prefix}${want.subject}`]);
      expect(config.retention).toBe('limits');
      expect(config.max_age).toBe(want.maxAgeNs);
      expect(config.max_bytes).toBe(want.maxBytes);
      expect(config.storage).toBe('file');
      expect(config.max_msg_size).toBe(1024 * 1024);
      expect(config.num_replicas).toBe(1);
      await jsm.streams.delete(config.name);
    }
  });

  it('is idempotent: a second run changes nothing and keeps the messages', async () => {
    const prefix = `${uniqueName('P')}_`;
    const first = await ensurePlatformStreams(jsm, { replicas: 1, prefix });
    const js = nc.jetstream();
    await js.publish(`${prefix}market.events.dexa.pool_update`, new TextEncoder().encode('{"type":"pool_update"}'));
    const second = await ensurePlatformStreams(jsm, { replicas: 1, prefix });
    expect(second.map((i) => i.config)).toEqual(first.map((i) => i.config));
    expect(second.map((i) => i.created)).toEqual(first.map((i) => i.created));
    expect((await jsm.streams.info(`${prefix}MARKET_EVENTS`)).state.messages).toBe(1);
    for (const i of second) await jsm.streams.delete(i.config.name);
  });

  it('updates a stream whose settings drifted back to the spec', async () => {
    const prefix = `${uniqueName('P')}_`;
    await ensurePlatformStreams(jsm, { replicas: 1, prefix });
    const name = `${prefix}TRADE_OPPORTUNITIES`;
    const drifted = (await jsm.streams.info(name)).config;
    await jsm.streams.update(name, { ...drifted, max_bytes: 1024 * 1024, max_age: 2 * DAY_NS, max_msg_size: 1024 });
    expect((await jsm.streams.info(name)).config.max_bytes).toBe(1024 * 1024);
    await ensurePlatformStreams(jsm, { replicas: 1, prefix });
    const { config } = await jsm.streams.info(name);
    expect(config.max_bytes).toBe(5 * GiB);
    expect(config.max_age).toBe(1 * DAY_NS);
    expect(config.max_msg_size).toBe(1024 * 1024);
    for (const s of platformStreamSpecs({ replicas: 1, prefix })) await jsm.streams.delete(s.name);
  });

  it('gives platform consumers explicit ack and the 30 s ack wait', async () => {
    const prefix = `${uniqueName('P')}_`;
    await ensurePlatformStreams(jsm, { replicas: 1, prefix });
    const stream = `${prefix}EXECUTION_ORDERS`;
    const info = await ensureConsumer(jsm, platformConsumerSpec(stream, 'executor', `${prefix}execution.orders.>`));
    expect(info.config.ack_policy).toBe('explicit');
    expect(info.config.ack_wait).toBe(DEFAULT_ACK_WAIT_NS);
    expect(info.config.ack_wait).toBe(30 * 1e9);
    expect(info.config.durable_name).toBe('executor');
    for (const s of platformStreamSpecs({ replicas: 1, prefix })) await jsm.streams.delete(s.name);
  });
});
