/**
 * PoolUpdatePublisher over the local NATS: against a real stream, and against a responder the test
 * writes on the subjects (no stream takes them), which answers each publish as JetStream would
 * (a PubAck, an error, or nothing) when the test says, so that lost and out-of-order acks are
 * exact, not timed.
 */
import { randomUUID } from 'node:crypto';

import type { Msg, NatsConnection } from 'nats';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { isTpError } from '../errors.js';
import type { PoolStateUpdateEvent } from '../scanner/pool-state-event.js';
import { BusConnection, BusStatus } from './connection.js';
import { PoolUpdatePublisher } from './pool-update-publisher.js';
import { poolUpdatesStreamSpec } from './pool-updates.js';
import { ensureStream } from './stream-setup.js';
import { LOCAL_NATS_URL, connectLocal, deleteStreams, uniqueName, uniqueSubjectRoot, waitFor } from './testing/local-nats.js';

function event(n: number): PoolStateUpdateEvent {
  return {
    eventId: randomUUID(),
    timestamp: 1,
    source: 'blockstream',
    latency: 1,
    pool: { address: `Pool${n}111111111111111111111111111111111111111`.slice(0, 44), dex: 'dexa_amm', tokenA: 'A', tokenB: 'B' },
    state: { slot: String(n), reserveA: '1', reserveB: '2' },
    transaction: { signature: `sig${n}`, confirmed: false },
  };
}

/** Publishes that reached the subjects under `root`, held for the test to answer. */
interface Responder {
  requests: Msg[];
  ack(m: Msg, seq: number, duplicate?: boolean): void;
  error(m: Msg, description: string): void;
}

describe('PoolUpdatePublisher', () => {
  let admin: NatsConnection;
  const streams: string[] = [];
  const closers: (() => Promise<void>)[] = [];

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

  async function bus(): Promise<BusConnection> {
    const b = BusConnection.open({ servers: [LOCAL_NATS_URL], name: 'tidepool-test', connectTimeoutMs: 500 });
    closers.push(() => b.close());
    await b.ready();
    return b;
  }

  async function responder(root: string): Promise<Responder> {
    const requests: Msg[] = [];
    const sub = admin.subscribe(`${root}.>`, { callback: (_err, m) => requests.push(m) });
    closers.push(async () => sub.unsubscribe());
    await admin.flush();
    return {
      requests,
      ack: (m, seq, duplicate = false) => m.respond(JSON.stringify({ stream: 'S', seq, ...(duplicate ? { duplicate: true } : {}) })),
      error: (m, description) => m.respond(JSON.stringify({ error: { code: 503, err_code: 10077, description } })),
    };
  }

  it('publishes to pool.state.updated.{dex}.{pool_address} with the event id as message id', async () => {
    const stream = uniqueName('POOL_UPDATES');
    const root = uniqueSubjectRoot();
    streams.push(stream);
    const b = await bus();
    await ensureStream((await b.jetstreamManager())!, poolUpdatesStreamSpec({ streamName: stream, subjectRoot: root }));
    const pub = new PoolUpdatePublisher({ bus: b, subjectRoot: root, streamName: stream });
    const e = event(1);
    await pub.publish(e);
    const stored = await (await admin.jetstreamManager()).streams.getMessage(stream, { seq: 1 });
    expect(stored.subject).toBe(`${root}.dexa_amm.${e.pool.address}`);
    expect(stored.header.get('Nats-Msg-Id')).toBe(e.eventId);
    expect(stored.header.get('Nats-Expected-Stream')).toBe(stream);
    expect(stored.json()).toEqual(e);
    expect(pub.stats).toMatchObject({ published: 1, retries: 0, failed: 0, inFlight: 0 });
  });

  it('sends every publish before any ack and settles each on its own ack, in whatever order they come', async () => {
    const root = uniqueSubjectRoot();
    const r = await responder(root);
    const pub = new PoolUpdatePublisher({ bus: await bus(), subjectRoot: root, retries: 1 });
    const events = Array.from({ length: 20 }, (_, i) => event(i));
    const outcomes = events.map((e) => pub.publish(e).then(() => 'ok', (err: unknown) => err));
    // No ack has been given: all twenty are on the wire at once.
    await waitFor(() => r.requests.length === 20, 10_000, 'twenty publishes');
    expect(pub.stats.inFlight).toBe(20);
    expect(r.requests.map((m) => m.headers?.get('Nats-Msg-Id'))).toEqual(events.map((e) => e.eventId));
    // Answered last to first; the seventh gets an error, and again on its retry.
    for (const [i, m] of [...r.requests].reverse().entries()) {
      if (m.headers?.get('Nats-Msg-Id') === events[7]!.eventId) r.error(m, 'stream not ready');
      else r.ack(m, i + 1);
    }
    await waitFor(() => r.requests.length === 21, 10_000, 'the retry');
    const retry = r.requests[20]!;
    expect(retry.headers?.get('Nats-Msg-Id')).toBe(events[7]!.eventId);
    r.error(retry, 'stream not ready');
    const settled = await Promise.all(outcomes);
    expect(settled.filter((o) => o === 'ok')).toHaveLength(19);
    const failure = settled[7];
    expect(isTpError(failure, 'TP_ERR_BUS_PUBLISH')).toBe(true);
    expect((failure as Error).message).toContain('stream not ready');
    expect(pub.stats).toEqual({ inFlight: 0, published: 19, duplicates: 0, retries: 1, failed: 1 });
  });

  it('retries a publish whose ack was lost with the same message id; the stream reports the duplicate', async () => {
    const root = uniqueSubjectRoot();
    const r = await responder(root);
    const pub = new PoolUpdatePublisher({ bus: await bus(), subjectRoot: root, retries: 2, timeoutMs: 200 });
    const e = event(1);
    const done = pub.publish(e);
    await waitFor(() => r.requests.length === 2, 10_000, 'a second attempt'); // the first is never answered
    r.ack(r.requests[1]!, 1, true);
    await done;
    expect(r.requests.map((m) => m.headers?.get('Nats-Msg-Id'))).toEqual([e.eventId, e.eventId]);
    expect(pub.stats).toEqual({ inFlight: 0, published: 0, duplicates: 1, retries: 1, failed: 0 });
  });

  it('gives up after the bounded retries with TP_ERR_BUS_PUBLISH', async () => {
    const root = uniqueSubjectRoot();
    const r = await responder(root);
    const pub = new PoolUpdatePublisher({ bus: await bus(), subjectRoot: root, retries: 2, timeoutMs: 100 });
    const err = await pub.publish(event(1)).catch((e: unknown) => e);
    expect(isTpError(err, 'TP_ERR_BUS_PUBLISH')).toBe(true);
    expect((err as Error).message).toContain('3 attempt(s)');
    expect(r.requests).toHaveLength(3);
    expect(pub.stats).toMatchObject({ retries: 2, failed: 1, inFlight: 0 });
  });

  it('fails at once, without retrying, when no stream takes the subject', async () => {
    const pub = new PoolUpdatePublisher({ bus: await bus(), subjectRoot: uniqueSubjectRoot(), retries: 2, timeoutMs: 60_000 });
    const err = await pub.publish(event(1)).catch((e: unknown) => e);
    expect(isTpError(err, 'TP_ERR_BUS_PUBLISH')).toBe(true);
    expect((err as Error).message).toContain('no responders');
    expect(pub.stats).toMatchObject({ retries: 0, failed: 1, inFlight: 0 });
  });

  it('fails the publishes in flight when the bus connection closes', async () => {
    const root = uniqueSubjectRoot();
    const r = await responder(root);
    const b = await bus();
    const pub = new PoolUpdatePublisher({ bus: b, subjectRoot: root, timeoutMs: 60_000 });
    const outcomes = [pub.publish(event(1)), pub.publish(event(2))].map((p) => p.catch((e: unknown) => e));
    await waitFor(() => r.requests.length === 2, 10_000, 'two publishes');
    await b.close();
    for (const err of await Promise.all(outcomes)) expect(isTpError(err, 'TP_ERR_BUS_PUBLISH')).toBe(true);
    expect(pub.stats).toMatchObject({ failed: 2, inFlight: 0 });
  });

  it('refuses at once while the bus is not connected', async () => {
    const pub = new PoolUpdatePublisher({ bus: { connection: undefined, connected: false, status: BusStatus.Reconnecting } });
    const err = await pub.publish(event(1)).catch((e: unknown) => e);
    expect(isTpError(err, 'TP_ERR_BUS_PUBLISH')).toBe(true);
    expect((err as Error).message).toContain('reconnecting');
  });
});
