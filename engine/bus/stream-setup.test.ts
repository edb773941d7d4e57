import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { isTpError } from '../errors.js';
import { DEFAULT_MAX_MSG_SIZE, NS_PER_SECOND, Retention, Storage, ensureConsumer, ensureStream, type StreamSpec } from './stream-setup.js';
import { connectLocal, deleteStreams, uniqueName, uniqueSubjectRoot } from './testing/local-nats.js';

describe('stream setup (real NATS)', () => {
  let nc: NatsConnection;
  const streams: string[] = [];

  beforeAll(async () => {
    nc = await connectLocal();
  });
  afterAll(async () => {
    await deleteStreams(nc, streams);
    await nc.close();
  });

  function spec(overrides: Partial<StreamSpec> = {}): StreamSpec {
    const name = uniqueName('SETUP');
    streams.push(name);
    return { name, subjects: [`${uniqueSubjectRoot()}.>`], retention: Retention.Limits, maxAgeNs: 60 * NS_PER_SECOND, storage: Storage.Memory, ...overrides };
  }

  it('creates a missing stream with the spec settings and the 1 MB message size', async () => {
    const s = spec({ maxBytes: 1024 * 1024 * 64, duplicateWindowNs: 10 * NS_PER_SECOND });
    const info = await ensureStream(await nc.jetstreamManager(), s);
    expect(info.config.name).toBe(s.name);
    expect(info.config.subjects).toEqual(s.subjects);
    expect(info.config.retention).toBe('limits');
    expect(info.config.max_age).toBe(60 * NS_PER_SECOND);
    expect(info.config.max_bytes).toBe(1024 * 1024 * 64);
    expect(info.config.storage).toBe('memory');
    expect(info.config.num_replicas).toBe(1);
    expect(info.config.max_msg_size).toBe(DEFAULT_MAX_MSG_SIZE);
    expect(info.config.duplicate_window).toBe(10 * NS_PER_SECOND);
  });

  it('is idempotent and updates an existing stream to the spec, keeping its messages', async () => {
    const jsm = await nc.jetstreamManager();
    const s = spec();
    await ensureStream(jsm, s);
    const subject = s.subjects[0]!.replace('>', 'x');
    await nc.jetstream().publish(subject, new TextEncoder().encode('kept'));
    await ensureStream(jsm, s);
    const updated = await ensureStream(jsm, { ...s, maxAgeNs: 30 * NS_PER_SECOND, subjects: [...s.subjects, `${uniqueSubjectRoot()}.*`] });
    expect(updated.config.max_age).toBe(30 * NS_PER_SECOND);
    expect(updated.config.subjects).toHaveLength(2);
    expect(updated.state.messages).toBe(1);
  });

  it('clamps the duplicate window to the max age', async () => {
    const info = await ensureStream(await nc.jetstreamManager(), spec({ maxAgeNs: 5 * NS_PER_SECOND }));
    expect(info.config.duplicate_window).toBe(5 * NS_PER_SECOND);
  });

  it('refuses to change the storage type of an existing stream', async () => {
    const jsm = await nc.jetstreamManager();
    const s = spec();
    await ensureStream(jsm, s);
    const err = await ensureStream(jsm, { ...s, storage: Storage.File }).catch((e: unknown) => e);
    expect(isTpError(err, 'TP_ERR_BUS_SETUP')).toBe(true);
  });

  it('survives several processes setting up the same stream at once', async () => {
    const jsm = await nc.jetstreamManager();
    const s = spec();
    const infos = await Promise.all([ensureStream(jsm, s), ensureStream(jsm, s), ensureStream(jsm, s)]);
    for (const info of infos) expect(info.config.name).toBe(s.name);
  });

  it('creates and then updates a durable consumer with explicit ack', async () => {
    const jsm = await nc.jetstreamManager();
    const s = spec();
    await ensureStream(jsm, s);
    const c = { stream: s.name, name: 'reader', filterSubject: s.subjects[0]!, maxAckPending: 100, maxDeliver: 5, ackWaitNs: 30 * NS_PER_SECOND };
    const created = await ensureConsumer(jsm, c);
    expect(created.config.durable_name).toBe('reader');
    expect(created.config.ack_policy).toBe('explicit');
    expect(created.config.filter_subject).toBe(s.subjects[0]);
    expect(created.config.max_ack_pending).toBe(100);
    expect(created.config.max_deliver).toBe(5);
    expect(created.config.ack_wait).toBe(30 * NS_PER_SECOND);
    const again = await ensureConsumer(jsm, c);
    expect(again.config.max_ack_pending).toBe(100);
    const updated = await ensureConsumer(jsm, { ...c, maxAckPending: 50, ackWaitNs: 10 * NS_PER_SECOND });
    expect(updated.config.max_ack_pending).toBe(50);
    expect(updated.config.ack_wait).toBe(10 * NS_PER_SECOND);
  });

  it('fails with TP_ERR_BUS_SETUP when the consumer stream does not exist', async () => {
    const err = await ensureConsumer(await nc.jetstreamManager(), { stream: uniqueName('MISSING'), name: 'x', filterSubject: 'a.>', maxAckPending: 1 }).catch((e: unknown) => e);
    expect(isTpError(err, 'TP_ERR_BUS_SETUP')).toBe(true);
  });
});
