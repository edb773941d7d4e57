import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';

import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../config/loader.js';
import { ErrorCode, TpError } from '../errors.js';
import { createLogger } from '../obs/logger.js';
import { createPlannerApp, plannerSchema } from './planner-app.js';
import { startPaperTrading } from './start-paper-trading.js';
import type { ShutdownReason } from './shutdown.js';
import type { TestDatabase } from '../state/db/testing.js';
import { PlatformFixture } from './testing/platform-fixture.js';
import { eventually } from './testing.js';

/**
 * A shutdown that arrives while an app waits in its start (issue 25): the wait ends at once, what
 * the start had opened is closed, and the start rejects with TP_ERR_ABORTED. The waits here never
 * end on their own: an RPC that holds every request, a bus server that never answers the handshake.
 */
const logger = createLogger({ name: 'start-abort-test', level: process.env.TEST_LOG ?? 'silent' });
const fx = new PlatformFixture();

/** Counts what connects and what goes away; answers nothing. */
interface Silent {
  url: string;
  readonly opened: number;
  readonly gone: number;
}

async function listen(server: { listen(port: number, host: string, done: () => void): unknown; address(): unknown; close(done?: () => void): unknown }): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

/** A JSON-RPC endpoint that holds every request open. */
async function silentRpc(): Promise<Silent> {
  const counts = { opened: 0, gone: 0 };
  const open = new Set<ServerResponse>();
  const server = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
    counts.opened++;
    open.add(res);
    res.on('close', () => counts.gone++);
    req.resume();
  });
  const port = await listen(server);
  fx.onClose('silent rpc', () => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${port}`, get opened() { return counts.opened; }, get gone() { return counts.gone; } };
}

/** A TCP server that takes connections and never says a word (a NATS client waits for its INFO). */
async function silentBus(): Promise<Silent> {
  const counts = { opened: 0, gone: 0 };
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    counts.opened++;
    sockets.add(socket);
    socket.on('close', () => counts.gone++);
    socket.on('error', () => undefined);
  });
  const port = await listen(server);
  fx.onClose('silent bus', () => {
    for (const s of sockets) s.destroy();
    return new Promise((resolve) => server.close(() => resolve(undefined)));
  });
  return { url: `nats://127.0.0.1:${port}`, get opened() { return counts.opened; }, get gone() { return counts.gone; } };
}

/** A shutdown the test sends. */
function shutdownSwitch(): { send(reason: ShutdownReason): void; startShutdown: () => Promise<ShutdownReason> } {
  let send!: (reason: ShutdownReason) => void;
  const sent = new Promise<ShutdownReason>((resolve) => (send = resolve));
  return { send, startShutdown: () => sent };
}

let nc: NatsConnection;
let prefix: string;
let database: TestDatabase;

beforeAll(async () => {
  ({ nc, prefix } = await fx.bus('SA'));
  database = await fx.database();
  await fx.keySpace();
}, 60_000);

afterAll(() => fx.close());

describe('a shutdown during an app start', () => {
  it('ends the first pool read of an unreachable RPC, closes it, and rejects with TP_ERR_ABORTED', async () => {
    const rpc = await silentRpc();
    const lines: string[] = [];
    const logger = createLogger({ name: 'start-abort-test', level: 'info', destination: { write: (line: string) => void lines.push(line) } });
    const loaded = loadConfig(plannerSchema, { env: {}, flags: { ...fx.serviceFlags(), 'rpc-endpoints': rpc.url } });
    const shutdown = shutdownSwitch();
    const started = createPlannerApp(loaded, { logger, pools: ['So11111111111111111111111111111111111111112'], startShutdown: shutdown.startShutdown }).catch((err: unknown) => err);
    await eventually(() => (rpc.opened >= 1 ? true : undefined), 20_000, 'the pool read at the RPC');
    shutdown.send('SIGTERM');
    const err = await started;
    expect(err).toBeInstanceOf(TpError);
    expect(err).toMatchObject({ code: ErrorCode.Aborted, context: { reason: 'shutdown: SIGTERM' } });
    // The start was closed before it rejected: every request it made of the RPC is gone.
    expect(rpc.gone).toBe(rpc.opened);
    // The read was aborted, not left to time out (a failed read is logged and the start goes on),
    // and the start never went on to set up the platform streams.
    expect(lines.filter((l) => l.includes('monitored pool not read at start'))).toEqual([]);
    const jsm = await nc.jetstreamManager();
    await expect(jsm.streams.info(`${prefix}MARKET_EVENTS`)).rejects.toThrow(/stream not found/);
  });

  it('ends the wait for a bus that does not answer, stops connecting, and rejects with TP_ERR_ABORTED', async () => {
    const bus = await silentBus();
    const loaded = loadConfig(plannerSchema, { env: {}, flags: { ...fx.serviceFlags(), 'bus-servers': bus.url } });
    const shutdown = shutdownSwitch();
    const started = createPlannerApp(loaded, { logger, pools: [], startShutdown: shutdown.startShutdown }).catch((err: unknown) => err);
    await eventually(() => (bus.opened >= 1 ? true : undefined), 20_000, 'the bus connection');
    shutdown.send('SIGTERM');
    expect(await started).toMatchObject({ code: ErrorCode.Aborted, context: { reason: 'shutdown: SIGTERM' } });
    // The shutdown ended the 5 s start wait at the first attempt (its handshake times out in 2 s),
    // and the start was closed before it rejected: no second attempt at the bus.
    expect(bus.opened).toBe(1);
  });

  it("paper trading's close aborts a sweep's pool reads instead of waiting them out", async () => {
    const rpc = await silentRpc();
    const lines: string[] = [];
    const logger = createLogger({ name: 'start-abort-test', level: 'debug', destination: { write: (line: string) => void lines.push(line) } });
    const paper = await startPaperTrading({ rpcUrl: rpc.url, pools: ['So11111111111111111111111111111111111111112'], database: Promise.resolve(database.db), host: '127.0.0.1', port: 0, intervalMs: 60_000, logger });
    await eventually(() => (rpc.opened >= 1 ? true : undefined), 20_000, 'the sweep at the RPC');
    await paper.close();
    expect(rpc.gone).toBe(rpc.opened);
    // Aborted, not timed out: a read that fails (times out) is logged as a sweep that read nothing.
    expect(lines.filter((l) => l.includes('pools not read this sweep') || l.includes('sweep failed'))).toEqual([]);
  });
});
