/**
 * What every platform service does first on the bus: the platform streams (spec 03) and the
 * dead-letter stream, created or updated at the deployment's prefix and size scale, and a durable
 * consumer name per service instance.
 */
import type { JetStreamManager, NatsConnection } from 'nats';

import { ensureDeadLetterStream } from './dead-letter.js';
import { ensurePlatformStreams } from './platform-streams.js';

/** Ensures the platform streams and the dead-letter stream; returns the JetStream manager. */
export async function ensurePlatformBus(nc: NatsConnection, options: { prefix: string; maxBytesScale: number }): Promise<JetStreamManager> {
  const jsm = await nc.jetstreamManager();
  await ensurePlatformStreams(jsm, { nc, prefix: options.prefix, maxBytesScale: options.maxBytesScale });
  await ensureDeadLetterStream(nc, { replicas: 1, prefix: options.prefix, maxBytesScale: options.maxBytesScale });
  return jsm;
}

/** A durable consumer's name: `<kind>_<id>`, the id's characters NATS does not take as `_`. */
export function durableNameOf(kind: string, id: string): string {
  return `${kind}_${id.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}
