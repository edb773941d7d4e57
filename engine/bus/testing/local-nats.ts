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

/**
 * `bus.streamMaxBytesScale` of every stream set a test or benchmark lays down on a shared server:
 * spec 03's sizes / 1,000 (MARKET_EVENTS ~10 MiB ... 1 MiB at least), so a set reserves ~40 MiB and
 * fits beside a deployment's 43 GiB (`scripts/run-split.sh` leaves those on the local NATS).
 * As a flag: `--stream-max-bytes-scale` / `BUS_STREAM_MAX_BYTES_SCALE`.
 */
export const TEST_STREAM_MAX_BYTES_SCALE = 0.001;

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

/** A private `nats-server -js` on a free loopback port with a temporary store, for tests that stop the bus. */
export interface PrivateNats {
  readonly url: string;
  readonly port: number;
  /** Kills the server (SIGKILL: no goodbye to clients). */
  stop(): Promise<void>;
  /** Starts it again on the same port (memory streams are gone, file streams kept). */
  restart(): Promise<void>;
  /** Stops it and removes its store. */
  close(): Promise<void>;
}

export async function startPrivateNats(): Promise<PrivateNats> {
  const { spawn } = await import('node:child_process');
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const port = await deadPort();
  const store = mkdtempSync(join(tmpdir(), 'tidepool-nats-'));
  type Child = ReturnType<typeof spawn>;
  let child: Child | undefined;
  const launch = async (): Promise<void> => {
    const c = spawn('nats-server', ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', store], { stdio: 'ignore' });
    child = c;
    await waitFor(() => tcpReachable('127.0.0.1', port), 10_000, `nats-server on ${port}`);
  };
  const stop = async (): Promise<void> => {
    const c = child;
    child = undefined;
    if (c === undefined || c.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
    c.kill('SIGKILL');
    await exited;
  };
  await launch();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    stop,
    restart: launch,
    async close() {
      await stop();
      rmSync(store, { recursive: true, force: true });
    },
  };
}
