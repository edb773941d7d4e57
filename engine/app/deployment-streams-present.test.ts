/**
 * CI on a machine where a deployment already runs (issue 26 item 8): `scripts/run-split.sh` leaves
 * the platform streams on the NATS server at spec 03's sizes (43 GiB reserved with the dead letters
 * and the swap routes), and the test sets the services lay down beside them used to ask the same
 * again, which the server refused ("insufficient storage resources available").
 *
 * Here a private server with a 48 GiB JetStream store first gets the deployment's streams,
 * unprefixed and full size, as run-split.sh leaves them; then the paths that failed run beside them
 * with `bus.streamMaxBytesScale` at the test scale: `tidepool executor` as a process (the path of
 * engine/cli/commands/executor.test.ts), the planner and market scanner apps, the swap-route
 * publisher. Without the setting, the executor exits with TP_ERR_BUS_SETUP naming it.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { SwapRoutePublisher } from '../aggregator/index.js';
import { ensureDeadLetterStream, ensurePlatformStreams, ensureSwapRoutesStream } from '../bus/index.js';
import { NATS_SERVER_MISSING, NatsServer } from '../bus/testing/cluster.js';
import { TEST_STREAM_MAX_BYTES_SCALE, uniqueName, waitFor } from '../bus/testing/local-nats.js';
import { loadConfig } from '../config/loader.js';
import { createLogger } from '../obs/logger.js';
import { startSimulator } from '../executor/testing/submitter-sim.js';
import type { SimEndpoints, Simulator } from '../sim/simulator.js';
import { createMarketScannerApp, marketScannerSchema } from './market-scanner-app.js';
import { createPlannerApp, plannerSchema } from './planner-app.js';

const GiB = 1024 ** 3;
const bin = resolve(import.meta.dirname, '../../dist/engine/cli/main.js');
const logger = createLogger({ name: 'streams-present-test', level: process.env.TEST_LOG ?? 'silent' });
const SCALE = String(TEST_STREAM_MAX_BYTES_SCALE);

describe.skipIf(NATS_SERVER_MISSING !== undefined)(`beside a deployment's full-size platform streams${NATS_SERVER_MISSING === undefined ? '' : ` (skipped: ${NATS_SERVER_MISSING})`}`, () => {
  let server: NatsServer;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let sim: Simulator;
  let endpoints: SimEndpoints;

  beforeAll(async () => {
    server = await NatsServer.start({ maxFileStore: 48 * GiB });
    nc = await connect({ servers: server.url });
    jsm = await nc.jetstreamManager();
    // What run-split.sh's services leave: no prefix, default scale (spec 03's sizes).
    await ensurePlatformStreams(jsm, { nc });
    await ensureDeadLetterStream(nc, { replicas: 1 });
    await ensureSwapRoutesStream(jsm, { nc });
    ({ sim, endpoints } = await startSimulator(50));
  }, 60_000);

  afterAll(async () => {
    await nc?.close();
    await server?.close();
    await sim?.close();
  });

  it('the deployment reserves 43 GiB of the 48', async () => {
    const reserved: number[] = [];
    for await (const s of jsm.streams.list()) reserved.push(s.config.max_bytes);
    expect(reserved.reduce((a, b) => a + b, 0)).toBe(43 * GiB);
  });

  function executor(extra: string[]): { exited: Promise<number | null>; stderr: () => string; kill: (signal: NodeJS.Signals) => void } {
    const prefix = `${uniqueName('EXC')}_`;
    const child = spawn(process.execPath, [bin, 'executor', '--paper', '--port', '0', '--data-dir', 'memory', '--subject-prefix', prefix, '--bus-servers', server.url, '--rpc-endpoints', endpoints.rpc, ...extra], {
      env: { ...process.env, LOG_LEVEL: 'warn', BUS_STREAM_MAX_BYTES_SCALE: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += String(c)));
    child.stdout.resume();
    return { exited: new Promise((done) => child.once('exit', (code) => done(code))), stderr: () => stderr, kill: (s) => child.kill(s) };
  }

  it.skipIf(!existsSync(bin))('tidepool executor --paper with the test scale starts, answers /health and exits 0 on SIGTERM', async () => {
    const run = executor(['--stream-max-bytes-scale', SCALE]);
    try {
      await waitFor(() => /\/stats\n/.test(run.stderr()), 60_000, `the executor to start: ${run.stderr()}`);
      const http = /probes, metrics\s+(http:\/\/\S+)\/health/.exec(run.stderr())![1]!;
      expect((await fetch(`${http}/health`)).status).toBe(200);
      run.kill('SIGTERM');
      expect(await run.exited).toBe(0);
    } finally {
      run.kill('SIGKILL');
    }
  }, 90_000);

  it.skipIf(!existsSync(bin))('without it, tidepool executor exits 1 with TP_ERR_BUS_SETUP naming BUS_STREAM_MAX_BYTES_SCALE, no stack trace', async () => {
    const run = executor([]);
    try {
      expect(await run.exited).toBe(1);
      const out = run.stderr();
      expect(out).toMatch(/^tidepool executor: stream EXC_\w+_MARKET_EVENTS: the NATS server cannot reserve its file storage \(max bytes 10 GiB\)/m);
      expect(out).toContain('lower BUS_STREAM_MAX_BYTES_SCALE (--stream-max-bytes-scale, now 1)');
      expect(out).toContain('[TP_ERR_BUS_SETUP]');
      expect(out).not.toContain('NatsError');
      expect(out).not.toMatch(/^\s+at /m);
    } finally {
      run.kill('SIGKILL');
    }
  }, 90_000);

  it('the planner and the market scanner lay down their streams at the test scale', async () => {
    const prefix = `${uniqueName('PL')}_`;
    const planner = await createPlannerApp(
      loadConfig(plannerSchema, { env: {}, flags: { 'bus-servers': server.url, 'rpc-endpoints': endpoints.rpc, 'data-dir': 'memory', port: '0', 'subject-prefix': prefix, 'stream-max-bytes-scale': SCALE, 'log-level': 'error' } }),
      { logger, pools: [] },
    );
    try {
      await planner.start();
      expect((await jsm.streams.info(`${prefix}EXECUTION_ORDERS`)).config.max_bytes).toBe(Math.floor(20 * GiB * TEST_STREAM_MAX_BYTES_SCALE));
      expect((await jsm.streams.info(`${prefix}DEAD_LETTERS`)).config.max_bytes).toBe(Math.floor(GiB * TEST_STREAM_MAX_BYTES_SCALE));
    } finally {
      await planner.close();
    }
    const marketPrefix = `${uniqueName('MS')}_`;
    const pool = sim.chain.pools()[0]!.address;
    const market = await createMarketScannerApp(
      loadConfig(marketScannerSchema, {
        env: {},
        flags: { mode: 'rpc-polling', 'bus-servers': server.url, 'rpc-endpoints': endpoints.rpc, 'health-port': '0', 'metrics-port': '0', 'subject-prefix': marketPrefix, 'stream-max-bytes-scale': SCALE, accounts: pool },
      }),
      { logger, accounts: [pool] },
    );
    try {
      await market.start();
      await waitFor(async () => (await jsm.streams.info(`${marketPrefix}MARKET_EVENTS`).catch(() => undefined)) !== undefined, 20_000, 'the market scanner streams');
      expect((await jsm.streams.info(`${marketPrefix}MARKET_EVENTS`)).config.max_bytes).toBe(Math.floor(10 * GiB * TEST_STREAM_MAX_BYTES_SCALE));
    } finally {
      await market.close();
    }
  }, 90_000);

  it('the aggregator route publisher lays down MARKET_SWAP_ROUTES at the test scale', async () => {
    const prefix = `${uniqueName('SR')}_`;
    const publisher = await SwapRoutePublisher.open({ bus: nc, logger, prefix, maxBytesScale: TEST_STREAM_MAX_BYTES_SCALE });
    await publisher.close(1_000);
    expect((await jsm.streams.info(`${prefix}MARKET_SWAP_ROUTES`)).config.max_bytes).toBe(Math.floor(5 * GiB * TEST_STREAM_MAX_BYTES_SCALE));
  });
});
