/**
 * Tests against the developer's local NATS with JetStream (127.0.0.1:4222, which
 * `scripts/services.sh` ensures; `TIDEPOOL_TEST_NATS` overrides). Every test names its streams and
 * consumers with `uniqueName`, so tests never meet each other or the services a developer runs,
 * and deletes them after with `deleteStreams`.
 */
import { randomBytes } from 'node:crypto';
import { Socket } from 'node:net';

import { connect, type NatsConnection } from 'nats';

export const LOCAL_NATS_URL = process.env.TIDEPOOL_TEST_NATS ?? 'nats://127.0.0.1:4222';

/** `PREFIX_1a2b3c4d`: a JetStream-safe name no other test uses. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/** A subject prefix no other test uses (`t.1a2b3c4d`). */
export function uniqueSubjectRoot(): string {
  return `t${randomBytes(6).toString('hex')}`;
}

export async function connectLocal(): Promise<NatsConnection> {
  return connect({ servers: LOCAL_NATS_URL, timeout: 2000 });
}

/** Deletes the streams (their consumers go with them); missing ones are fine. */
export async function deleteStreams(nc: NatsConnection, names: readonly string[]): Promise<void> {
  const jsm = await nc.jetstreamManager();
  for (const name of names) await jsm.streams.delete(name).catch(() => false);
}

/** A loopback port where nothing listens (bound, read and released). */
export async function deadPort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Resolves true when something accepts TCP at host:port within 500 ms. */
export function tcpReachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.connect(port, host, () => done(true));
  });
}

/** Polls `check` every 20 ms until it returns true; throws after `timeoutMs` (a wait, not an assertion on speed). */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
