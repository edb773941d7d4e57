/**
 * The bus goes away and comes back (spec 02, "message bus down"), on a private nats-server this test
 * starts, kills and restarts: publishes fail and are counted meanwhile, nothing blocks, and once the
 * server is back the scanner side sets the (memory) stream up again and the quote side's durable is
 * recreated, so updates flow again without restarting either service.
 */
import { randomBytes, randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PoolCache } from '../cache/index.js';
import { encode as encodeBase58 } from '../chain/base58.js';
import { createQuoteMetrics } from '../obs/quote-metrics.js';
import { PoolDirectory } from '../quote/pool-directory.js';
import { PoolUpdateHandler } from '../quote/pool-update-handler.js';
import type { PoolStateUpdateEvent } from '../scanner/pool-state-event.js';
import { BusConnection, BusStatus } from './connection.js';
import { PoolUpdateConsumer } from './pool-update-consumer.js';
import { PoolUpdatePublisher } from './pool-update-publisher.js';
import { poolUpdatesStreamSpec } from './pool-updates.js';
import { ensureStream } from './stream-setup.js';
import { startPrivateNats, waitFor, type PrivateNats } from './testing/local-nats.js';

const pubkey = (): string => encodeBase58(randomBytes(32));
const tokens: [string, string] = [pubkey(), pubkey()];

function event(address: string, slot: bigint): PoolStateUpdateEvent {
  return {
    eventId: randomUUID(),
    timestamp: Date.now(),
    source: 'blockstream',
    latency: 1,
    pool: { address, dex: 'dexa_amm', tokenA: tokens[0], tokenB: tokens[1] },
    state: { slot: slot.toString(), reserveA: '10', reserveB: '20' },
    transaction: { signature: encodeBase58(randomBytes(64)), confirmed: false },
  };
}

describe('a bus outage between the scanner and the quote service', () => {
  let nats: PrivateNats;

  beforeAll(async () => {
    nats = await startPrivateNats();
  });
  afterAll(async () => {
    await nats?.close();
  });

  it('counts failed publishes while the server is down and resumes delivery when it is back', async () => {
    const spec = poolUpdatesStreamSpec();
    const scannerBus = BusConnection.open({ servers: [nats.url], name: 'scanner', reconnectWaitMs: 100 });
    scannerBus.onConnect(async (nc) => {
      await ensureStream(await nc.jetstreamManager(), spec);
    });
    const publisher = new PoolUpdatePublisher({ bus: scannerBus, timeoutMs: 500, retries: 1 });
    const cache = new PoolCache();
    const handler = new PoolUpdateHandler({ cache, directory: new PoolDirectory(), metrics: createQuoteMetrics() });
    const quoteBus = BusConnection.open({ servers: [nats.url], name: 'quote', reconnectWaitMs: 100 });
    const consumer = new PoolUpdateConsumer({ bus: quoteBus, handler, lagIntervalMs: 100 });
    consumer.start();
    const pool = pubkey();
    try {
      await scannerBus.ready();
      await waitFor(() => consumer.consuming, 10_000, 'consumer');
      await waitFor(async () => publisher.publish(event(pool, 1n)).then(() => true, () => false), 10_000, 'first publish');
      await waitFor(() => cache.get(pool)?.slot === 1n, 10_000, 'slot 1 in the cache');

      await nats.stop();
      await waitFor(() => scannerBus.status === BusStatus.Reconnecting, 10_000, 'scanner bus reconnecting');
      const failedBefore = publisher.stats.failed;
      const refused = await publisher.publish(event(pool, 2n)).then(() => 'published', () => 'refused');
      expect(refused).toBe('refused');
      expect(publisher.stats.failed).toBe(failedBefore + 1);
      expect(publisher.stats.inFlight).toBe(0);

      await nats.restart();
      await waitFor(() => scannerBus.connected && quoteBus.connected, 15_000, 'both reconnected');
      // The memory stream died with the server: the scanner's connect listener set it up again.
      await waitFor(async () => publisher.publish(event(pool, 3n)).then(() => true, () => false), 15_000, 'publish after the restart');
      await waitFor(() => cache.get(pool)?.slot === 3n, 20_000, 'slot 3 in the cache after the restart');
      expect(consumer.stats.starts).toBeGreaterThanOrEqual(2);
    } finally {
      await consumer.close();
      await Promise.all([quoteBus.close(), scannerBus.close()]);
    }
  });
});
