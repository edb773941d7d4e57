import type { JetStreamClient, JetStreamPublishOptions, PubAck } from 'nats';
import { describe, expect, it } from 'vitest';

import { isTpError } from '../errors.js';
import type { PoolStateUpdateEvent } from '../scanner/pool-state-event.js';
import { BusStatus } from './connection.js';
import { PoolUpdatePublisher, type PublisherBus } from './pool-update-publisher.js';

const event: PoolStateUpdateEvent = {
  eventId: 'f0e1d2c3-0000-4000-8000-000000000001',
  timestamp: 1,
  source: 'blockstream',
  latency: 1,
  pool: { address: 'Pool1111111111111111111111111111111111111111', dex: 'dexa_amm', tokenA: 'A', tokenB: 'B' },
  state: { slot: '7', reserveA: '1', reserveB: '2' },
  transaction: { signature: 'sig', confirmed: false },
};

/** A JetStream client whose publishes answer from a script: an Error rejects, a boolean acks (duplicate or not). */
function scripted(script: (Error | boolean)[]): { bus: PublisherBus; calls: { subject: string; msgID: string | undefined }[] } {
  const calls: { subject: string; msgID: string | undefined }[] = [];
  const js = {
    publish(subject: string, _data?: Uint8Array, options?: Partial<JetStreamPublishOptions>): Promise<PubAck> {
      calls.push({ subject, msgID: options?.msgID });
      const step = script.shift();
      if (step === undefined || step instanceof Error) return Promise.reject(step ?? new Error('script exhausted'));
      return Promise.resolve({ stream: 'S', seq: calls.length, duplicate: step, domain: '' } as PubAck);
    },
  } as unknown as JetStreamClient;
  return { bus: { jetstream: () => js, connected: true, status: BusStatus.Connected }, calls };
}

describe('PoolUpdatePublisher', () => {
  it('publishes to pool.state.updated.{dex}.{pool_address} with the event id as message id', async () => {
    const { bus, calls } = scripted([false]);
    const pub = new PoolUpdatePublisher({ bus });
    await pub.publish(event);
    expect(calls).toEqual([{ subject: `pool.state.updated.dexa_amm.${event.pool.address}`, msgID: event.eventId }]);
    expect(pub.stats).toMatchObject({ published: 1, retries: 0, failed: 0 });
  });

  it('retries a publish whose ack was lost with the same message id; the stream reports the duplicate', async () => {
    const { bus, calls } = scripted([new Error('TIMEOUT'), true]);
    const pub = new PoolUpdatePublisher({ bus, retries: 2 });
    await pub.publish(event);
    expect(calls.map((c) => c.msgID)).toEqual([event.eventId, event.eventId]);
    expect(pub.stats).toMatchObject({ published: 0, duplicates: 1, retries: 1, failed: 0, inFlight: 0 });
  });

  it('gives up after the bounded retries with TP_ERR_BUS_PUBLISH', async () => {
    const { bus, calls } = scripted([new Error('TIMEOUT'), new Error('TIMEOUT'), new Error('TIMEOUT'), false]);
    const pub = new PoolUpdatePublisher({ bus, retries: 2 });
    const err = await pub.publish(event).catch((e: unknown) => e);
    expect(isTpError(err, 'TP_ERR_BUS_PUBLISH')).toBe(true);
    expect(calls).toHaveLength(3);
    expect(pub.stats).toMatchObject({ retries: 2, failed: 1, inFlight: 0 });
  });

  it('refuses at once while the bus is not connected', async () => {
    const pub = new PoolUpdatePublisher({ bus: { jetstream: () => undefined, connected: false, status: BusStatus.Reconnecting } });
    const err = await pub.publish(event).catch((e: unknown) => e);
    expect(isTpError(err, 'TP_ERR_BUS_PUBLISH')).toBe(true);
    expect((err as Error).message).toContain('reconnecting');
  });
});
