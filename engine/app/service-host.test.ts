/**
 * The service host every platform service is assembled by: its ops port (health, ready, metrics,
 * the app's routes, 405/404), the heartbeat in the shared Redis (beats, then `stopped`), the close
 * stack (reverse order, and a start that fails half way closes what it had opened), a port in use
 * named by its setting, a bus that does not answer named by its setting within the start wait.
 */
import { createServer, type Server } from 'node:net';

import { Counter, Histogram } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';

import { ensurePlatformBus } from '../bus/index.js';
import { CHeapTrim } from '../common/index.js';
import { LOCAL_NATS_URL, TEST_STREAM_MAX_BYTES_SCALE, connectLocal, deadPort, deleteStreams, uniqueName } from '../bus/testing/local-nats.js';
import { httpLimitsOf, httpServerSchema, loadConfig } from '../config/index.js';
import { ErrorCode, TpError, isTpError } from '../errors.js';
import { decodeSystemMetrics, systemMetricsSubject, type SystemMetrics } from '../messages/index.js';
import { heapSamplingActive } from '../obs/index.js';
import { createLogger } from '../obs/logger.js';
import { idleKeepAliveUntilClosed, slowlorisUntilClosed } from '../obs/testing/socket-probes.js';
import { createRedisKeySpace, type TestKeySpace } from '../state/kv/testing.js';
import { abortable } from '../pools/index.js';
import { ServiceHost, sendJson } from './service-host.js';
import type { ShutdownReason } from './shutdown.js';
import { eventually } from './testing.js';

const logger = createLogger({ name: 'service-host-test', level: process.env.TEST_LOG ?? 'silent' });
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function redisKeys(): Promise<TestKeySpace> {
  const kv = await createRedisKeySpace();
  cleanup.push(() => kv.drop());
  return kv;
}

describe('ServiceHost', () => {
  it('serves /health, /ready, /metrics and its routes on one port, with the bus it opened', async () => {
    let appReady = false;
    const host = new ServiceHost({
      service: 'host-test',
      logger,
      bus: { servers: [LOCAL_NATS_URL] },
      http: { host: '127.0.0.1', port: 0, portSetting: 'test.port (TEST_PORT)' },
      health: () => ({ mode: 'paper' }),
      ready: async () => ({ ok: appReady, detail: { dependencies: [] } }),
    });
    cleanup.push(() => host.close());
    new Counter({ name: 'host_test_total', help: 'a counter of the service', registers: [host.registry] }).inc(3);
    host.route({ method: 'GET', path: '/stats', handle: (_req, res) => sendJson(res, 200, { big: 10n ** 20n }) });
    host.route({ method: 'POST', path: '/fail', handle: () => Promise.reject(new TpError(ErrorCode.BadParameter, 'bad x', { context: { parameter: 'x' } })) });
    host.route({ method: 'GET', path: '/items/*', handle: (req, res) => sendJson(res, 200, { url: req.url }) });
    const bus = await host.openBus();
    expect(bus.connected).toBe(true);
    const { http } = await host.start();
    expect(http).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    expect(await (await fetch(`${http}/health`)).json()).toEqual({ status: 'ok', mode: 'paper' });
    const notReady = await fetch(`${http}/ready`);
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toEqual({ status: 'not_ready', bus: true, dependencies: [] });
    appReady = true;
    expect((await fetch(`${http}/ready`)).status).toBe(200);
    const metrics = await fetch(`${http}/metrics`);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    expect(await metrics.text()).toContain('host_test_total 3');
    expect(await (await fetch(`${http}/stats`)).json()).toEqual({ big: '100000000000000000000' });
    const bad = await fetch(`${http}/fail`, { method: 'POST', body: '{}' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe(ErrorCode.BadParameter);
    const wrongMethod = await fetch(`${http}/stats`, { method: 'POST', body: '' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET');
    // `/items/*`: one more segment under /items, not the prefix itself nor two segments
    expect(await (await fetch(`${http}/items/abc?x=1`)).json()).toEqual({ url: '/items/abc?x=1' });
    expect((await fetch(`${http}/items/abc`, { method: 'DELETE' })).headers.get('allow')).toBe('GET');
    expect((await fetch(`${http}/items`)).status).toBe(404);
    expect((await fetch(`${http}/items/a/b`)).status).toBe(404);
    const missing = await fetch(`${http}/nope`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe(ErrorCode.NotFound);
    // Heap sampling is off in this process: the endpoint is there and says so.
    expect((await fetch(`${http}/debug/pprof/heap`)).status).toBe(404);

    await host.close();
    expect(bus.status).toBe('disconnected');
    await expect(fetch(`${http}/health`)).rejects.toThrow();
  });

  it('trims the C heap on its interval while it runs, and stops at close', async () => {
    let trims = 0;
    const trim = new CHeapTrim(5, () => {
      trims++;
      return true;
    });
    const host = new ServiceHost({ service: 'host-trim', logger, cHeapTrim: trim });
    cleanup.push(() => host.close());
    await host.start();
    expect(trim.running).toBe(true);
    await eventually(() => (trims >= 2 ? true : undefined), 10_000, 'two trims');
    expect(trim.released).toBe(trim.trims);
    await host.close();
    expect(trim.running).toBe(false);
  });

  it('publishes its metrics on system.metrics.<service> every interval, and once more when it closes', async () => {
    const prefix = `${uniqueName('SM')}_`;
    const host = new ServiceHost({ service: 'host-test', logger, bus: { servers: [LOCAL_NATS_URL] } });
    cleanup.push(() => host.close());
    const counter = new Counter({ name: 'host_test_trades_total', help: 'trades', labelNames: ['path'], registers: [host.registry] });
    const latency = new Histogram({ name: 'host_test_seconds', help: 'latency', buckets: [0.1, 1], registers: [host.registry] });
    counter.inc({ path: 'bundle' }, 2);
    latency.observe(0.5);
    const bus = await host.openBus();
    await ensurePlatformBus(bus.connection!, { prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE });
    const nc = await connectLocal(); // the reader's own connection: the host's closes with it
    cleanup.push(() => nc.close());
    cleanup.push(() => deleteStreams(nc, ['MARKET_EVENTS', 'TRADE_OPPORTUNITIES', 'EXECUTION_ORDERS', 'SYSTEM_METRICS', 'SIGNALS', 'DEAD_LETTERS'].map((n) => `${prefix}${n}`)));
    const jsm = await nc.jetstreamManager();
    const seen: SystemMetrics[] = [];
    const sub = nc.subscribe(systemMetricsSubject('host-test', prefix));
    void (async () => {
      for await (const m of sub) seen.push(decodeSystemMetrics(m.data));
    })();
    const publisher = host.publishMetrics({ prefix, intervalMs: 50 });
    const first = await eventually(() => seen[0], 10_000, 'a first snapshot');
    expect(first).toMatchObject({ version: 1, service: 'host-test' });
    expect(first.instance).toContain(String(process.pid));
    expect(first.samples).toContainEqual({ name: 'host_test_trades_total', labels: { path: 'bundle' }, value: 2 });
    expect(first.samples).toContainEqual({ name: 'host_test_seconds_count', labels: {}, value: 1 });
    expect(first.samples).toContainEqual({ name: 'host_test_seconds_sum', labels: {}, value: 0.5 });
    expect(first.samples.some((x) => x.name.endsWith('_bucket'))).toBe(false);
    // counters carry on from snapshot to snapshot; the last one goes out at close
    counter.inc({ path: 'bundle' }, 5);
    await host.close();
    const stored = (await jsm.streams.info(`${prefix}SYSTEM_METRICS`)).state.messages;
    expect(stored).toBe(publisher.published);
    const last = await jsm.streams.getMessage(`${prefix}SYSTEM_METRICS`, { last_by_subj: systemMetricsSubject('host-test', prefix) });
    expect(decodeSystemMetrics(last.data).samples).toContainEqual({ name: 'host_test_trades_total', labels: { path: 'bundle' }, value: 7 });
    sub.unsubscribe();
  });

  it('applies the http.* limits to its ops port: a slowloris socket is closed at the header timeout', async () => {
    const limits = httpLimitsOf(loadConfig(httpServerSchema, { env: { HTTP_HEADERS_TIMEOUT: '200ms', HTTP_REQUEST_TIMEOUT: '400ms', HTTP_KEEP_ALIVE_TIMEOUT: '100ms' } }).values);
    const host = new ServiceHost({ service: 'host-limits', logger, http: { host: '127.0.0.1', port: 0, portSetting: 'test.port', limits } });
    cleanup.push(() => host.close());
    const { http } = await host.start();
    const port = Number(new URL(http!).port);
    const slow = await slowlorisUntilClosed(port, { timeoutMs: 5_000 });
    expect(slow.received).toMatch(/^HTTP\/1\.1 408/);
    const idle = await idleKeepAliveUntilClosed(port, '/metrics', { timeoutMs: 3_000 });
    expect(idle.answered).toBe(true);
  });

  it('with heapProfile, keeps heap sampling on while it runs and serves /debug/pprof/heap', async () => {
    const host = new ServiceHost({ service: 'host-heap', logger, heapProfile: true, http: { host: '127.0.0.1', port: 0, portSetting: 'test.port' } });
    cleanup.push(() => host.close());
    const { http } = await host.start();
    expect(heapSamplingActive()).toBe(true);
    const pprof = await fetch(`${http}/debug/pprof/heap`);
    expect(pprof.status).toBe(200);
    expect(pprof.headers.get('content-disposition')).toContain('heap.pb.gz');
    expect([...new Uint8Array(await pprof.arrayBuffer()).slice(0, 2)]).toEqual([0x1f, 0x8b]);
    const devtools = await fetch(`${http}/debug/pprof/heap?format=devtools`);
    expect(await devtools.json()).toHaveProperty('head');
    await host.close();
    expect(heapSamplingActive()).toBe(false);
  });

  it('asks the authorizer for the routes marked auth', async () => {
    const host = new ServiceHost({
      service: 'host-auth-test',
      logger,
      http: {
        host: '127.0.0.1',
        port: 0,
        portSetting: 'test.port',
        authorize: async (header) => {
          if (header !== 'Bearer good') throw new TpError(ErrorCode.Unauthenticated, 'unauthenticated: token invalid');
        },
      },
    });
    cleanup.push(() => host.close());
    host.route({ method: 'POST', path: '/write', auth: true, handle: (_req, res) => sendJson(res, 202, { ok: true }) });
    const { http } = await host.start();
    expect((await fetch(`${http}/write`, { method: 'POST', body: '' })).status).toBe(401);
    expect((await fetch(`${http}/write`, { method: 'POST', body: '', headers: { authorization: 'Bearer good' } })).status).toBe(202);
    // The probes stay open.
    expect((await fetch(`${http}/health`)).status).toBe(200);
  });

  it('writes system:health:{service} every interval while it runs, and stopped when it closes', async () => {
    const kv = await redisKeys();
    let status: 'ok' | 'degraded' = 'ok';
    const host = new ServiceHost({ service: 'host-beat', logger, heartbeat: { keys: kv.keys, intervalMs: 50 }, heartbeatStatus: () => ({ status, detail: { n: 1 } }) });
    cleanup.push(() => host.close());
    await host.start();
    const first = await kv.keys.getHealth('host-beat');
    expect(first).toMatchObject({ status: 'ok', detail: { n: 1 } });
    status = 'degraded';
    const later = await eventually(async () => {
      const h = await kv.keys.getHealth('host-beat');
      return h !== null && h.status === 'degraded' && h.lastHeartbeat > first!.lastHeartbeat ? h : undefined;
    }, 5_000, 'a later beat');
    expect(later.status).toBe('degraded');
    // SIGTERM (here handed in): the host closes, the last beat says stopped, exit code 0.
    expect(await host.untilShutdown(Promise.resolve('SIGTERM'))).toBe(0);
    expect(await kv.keys.getHealth('host-beat')).toMatchObject({ status: 'stopped' });
  });

  it('closes in reverse order of opening, and a start that fails half way closes only what it opened', async () => {
    const order: string[] = [];
    const host = new ServiceHost({ service: 'host-order', logger });
    host.onClose('state', async () => order.push('state'));
    host.onClose('consumer', async () => order.push('consumer'));
    host.onClose('broken', () => Promise.reject(new Error('already gone')));
    host.onClose('server', async () => order.push('server'));
    await host.close();
    await host.close();
    expect(order).toEqual(['server', 'consumer', 'state']);

    const half: string[] = [];
    const started = ServiceHost.assemble({ service: 'host-half', logger }, async (h) => {
      h.onClose('state', async () => half.push('state'));
      h.onClose('bus', async () => half.push('bus'));
      throw new TpError(ErrorCode.BusSetup, 'stream refused');
    });
    await expect(started).rejects.toMatchObject({ code: ErrorCode.BusSetup });
    expect(half).toEqual(['bus', 'state']);
  });

  it('a port in use is TP_ERR_IO naming the setting that moves it, and what was opened is closed', async () => {
    const kv = await redisKeys();
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => new Promise((resolve) => blocker.close(resolve)));
    const port = (blocker.address() as { port: number }).port;
    const failed = await ServiceHost.assemble(
      { service: 'host-port', logger, http: { host: '127.0.0.1', port, portSetting: 'planner.port (PLANNER_PORT, --port)' }, heartbeat: { keys: kv.keys } },
      async (host) => {
        await host.start();
        return undefined;
      },
    ).catch((err: unknown) => err);
    expect(isTpError(failed) && failed.code).toBe(ErrorCode.Io);
    expect((failed as TpError).message).toContain('planner.port (PLANNER_PORT, --port)');
    expect((failed as TpError).message).toContain(`127.0.0.1:${port}`);
    expect((failed as TpError).message).not.toContain('\n');
    // The bind failed before the heartbeat started: nothing was written.
    expect(await kv.keys.getHealth('host-port')).toBeNull();
  });

  it('a bus that does not answer is TP_ERR_BUS_UNAVAILABLE naming BUS_SERVERS, within the start wait', async () => {
    const port = await deadPort();
    const started = Date.now();
    const failed = await ServiceHost.assemble({ service: 'host-nobus', logger, bus: { servers: [`nats://127.0.0.1:${port}`], startWaitMs: 600 } }, async (host) => host.openBus()).catch(
      (err: unknown) => err,
    );
    const took = Date.now() - started;
    expect(isTpError(failed) && failed.code).toBe(ErrorCode.BusUnavailable);
    expect((failed as TpError).message).toContain('BUS_SERVERS');
    expect((failed as TpError).message).toContain(`127.0.0.1:${port}`);
    expect(took).toBeGreaterThanOrEqual(550);
    expect(took).toBeLessThan(3_000);
  });
});

describe('ServiceHost start under cancellation', () => {
  it('a shutdown during start aborts the build\'s signal, closes what it opened, and rejects with TP_ERR_ABORTED', async () => {
    let shut!: (reason: ShutdownReason) => void;
    const shutdown = new Promise<ShutdownReason>((resolve) => (shut = resolve));
    const opened: string[] = [];
    const closed: string[] = [];
    const gate = new Promise<never>(() => undefined); // the dependency the start waits for never answers
    const started = ServiceHost.assemble({ service: 'host-shut', logger, startShutdown: () => shutdown }, async (h, signal) => {
      h.onClose('state', async () => closed.push('state'));
      opened.push('state');
      await abortable(gate, signal);
      h.onClose('server', async () => closed.push('server'));
      return 'running';
    });
    while (opened.length === 0) await new Promise((r) => setImmediate(r));
    shut('SIGTERM');
    const failed = await started.catch((err: unknown) => err);
    expect(isTpError(failed) && failed.code).toBe(ErrorCode.Aborted);
    expect((failed as TpError).message).toContain('SIGTERM');
    expect(closed).toEqual(['state']);
  });

  it('a close during start aborts it; what the start opens after the close is closed at once', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const closed: string[] = [];
    let host: ServiceHost | undefined;
    const started = ServiceHost.assemble({ service: 'host-close', logger, startShutdown: () => new Promise(() => undefined) }, async (h) => {
      host = h;
      h.onClose('state', async () => closed.push('state'));
      await gate; // a start that does not watch its signal
      h.onClose('server', async () => closed.push('server'));
      return 'running';
    });
    while (host === undefined) await new Promise((r) => setImmediate(r));
    await host.close();
    expect(host.signal.aborted).toBe(true);
    expect(closed).toEqual(['state']);
    release();
    const failed = await started.catch((err: unknown) => err);
    expect(isTpError(failed) && failed.code).toBe(ErrorCode.Aborted);
    await eventually(() => (closed.includes('server') ? true : undefined), 10_000, 'the late server closed');
  });

  it('a start that fails by itself keeps its own error', async () => {
    const failed = await ServiceHost.assemble({ service: 'host-fail', logger, startShutdown: () => new Promise(() => undefined) }, async () => {
      throw new TpError(ErrorCode.BusSetup, 'stream refused');
    }).catch((err: unknown) => err);
    expect(isTpError(failed) && failed.code).toBe(ErrorCode.BusSetup);
  });
});
