import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TEST_STREAM_MAX_BYTES_SCALE, connectLocal, deleteStreams, uniqueName } from '../../bus/testing/local-nats.js';
import { startSimulator } from '../../executor/testing/submitter-sim.js';
import type { SimEndpoints, Simulator } from '../../sim/simulator.js';

const bin = resolve(import.meta.dirname, '../../../dist/engine/cli/main.js');
let sim: Simulator;
let endpoints: SimEndpoints;
let nc: NatsConnection;
const prefix = `${uniqueName('EXC')}_`;

beforeAll(async () => {
  ({ sim, endpoints } = await startSimulator(50));
  nc = await connectLocal();
});

afterAll(async () => {
  await deleteStreams(nc, ['MARKET_EVENTS', 'TRADE_OPPORTUNITIES', 'EXECUTION_ORDERS', 'SYSTEM_METRICS', 'SIGNALS', 'DEAD_LETTERS'].map((n) => `${prefix}${n}`));
  await nc?.close();
  await sim?.close();
});

describe('tidepool executor, as a process', () => {
  it.skipIf(!existsSync(bin))('--paper prints its endpoints, answers /health and /stats, and exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, [bin, 'executor', '--paper', '--port', '0', '--data-dir', 'memory', '--subject-prefix', prefix, '--stream-max-bytes-scale', String(TEST_STREAM_MAX_BYTES_SCALE), '--rpc-endpoints', endpoints.rpc], {
      env: { ...process.env, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += String(c)));
    child.stdout.resume();
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    try {
      const deadline = Date.now() + 60_000;
      while (!/\/stats\n/.test(stderr)) {
        if (Date.now() > deadline) throw new Error(`not started: ${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(stderr).toContain('paper trading: nothing is sent');
      const http = /probes, metrics\s+(http:\/\/\S+)\/health/.exec(stderr)![1]!;
      expect((await fetch(`${http}/health`)).status).toBe(200);
      expect(await (await fetch(`${http}/stats`)).json()).toMatchObject({ executorId: 'executor-1', paper: true, received: 0 });
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  }, 90_000);
});
