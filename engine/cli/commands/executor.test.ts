import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { NATS_SERVER_MISSING, freePort } from '../../bus/testing/cluster.js';
import { TEST_STREAM_MAX_BYTES_SCALE, connectLocal, deleteStreams, tcpReachable, uniqueName, waitFor } from '../../bus/testing/local-nats.js';
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

  /** The environment of a real-mode executor, without shared state unless `extra` gives it. */
  function realEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', TIDEPOOL_WALLET_PASSPHRASE: 'test passphrase' };
    delete env['REDIS_URL'];
    delete env['DATABASE_URL'];
    delete env['PAPER_TRADING'];
    return { ...env, ...extra };
  }

  async function refusal(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
    const child = spawn(process.execPath, [bin, 'executor', '--port', '0', '--data-dir', 'memory', '--subject-prefix', prefix, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += String(c)));
    child.stdout.resume();
    const code = await new Promise<number | null>((done) => child.once('exit', (c) => done(c)));
    return { code, stderr };
  }

  it.skipIf(!existsSync(bin))('real mode refuses to start without REDIS_URL and DATABASE_URL, naming both', async () => {
    const { code, stderr } = await refusal(['--rpc-endpoints', endpoints.rpc], realEnv());
    expect(code).not.toBe(0);
    expect(stderr).toContain('TP_ERR_CONFIG_INVALID');
    expect(stderr).toContain('REDIS_URL (redis.url');
    expect(stderr).toContain('DATABASE_URL (database.url');
    expect(stderr).toContain('TIDEPOOL_SINGLE_INSTANCE=true');
  }, 60_000);

  it.skipIf(!existsSync(bin))('real mode refuses to start without DATABASE_URL alone, naming it', async () => {
    const { code, stderr } = await refusal(['--rpc-endpoints', endpoints.rpc], realEnv({ REDIS_URL: 'redis://127.0.0.1:6379' }));
    expect(code).not.toBe(0);
    expect(stderr).toContain('DATABASE_URL (database.url');
    expect(stderr).not.toContain('REDIS_URL (redis.url');
  }, 60_000);

  it.skipIf(!existsSync(bin))('a remote RPC with the block engine at its loopback default is refused, without printing the RPC URL', async () => {
    const { code, stderr } = await refusal(['--single-instance', '--rpc-endpoints', 'https://user:s3cret@rpc.example.com/?api-key=k3y'], realEnv());
    expect(code).not.toBe(0);
    expect(stderr).toContain('TP_ERR_CONFIG_INVALID');
    expect(stderr).toContain('BLOCK_ENGINE_URL (executor.blockEngineUrl)');
    expect(stderr).not.toMatch(/s3cret|k3y/);
  }, 60_000);

  it.skipIf(!existsSync(bin))('--single-instance runs one real-mode executor alone and says so in /health', async () => {
    const child = spawn(process.execPath, [bin, 'executor', '--single-instance', '--port', '0', '--data-dir', 'memory', '--subject-prefix', prefix, '--stream-max-bytes-scale', String(TEST_STREAM_MAX_BYTES_SCALE), '--rpc-endpoints', endpoints.rpc, '--block-engine-url', endpoints.http], {
      env: realEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += String(c)));
    child.stdout.resume();
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    try {
      const deadline = Date.now() + 60_000;
      while (!/\/stats\n/.test(stderr)) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`not started: ${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(stderr).toContain('real trades');
      const http = /probes, metrics\s+(http:\/\/\S+)\/health/.exec(stderr)![1]!;
      const health = (await (await fetch(`${http}/health`)).json()) as { status: string; deployment: { mode: string; missing: string[]; warning: string } };
      expect(health).toMatchObject({ status: 'ok', deployment: { mode: 'single-instance', missing: ['REDIS_URL (redis.url)', 'DATABASE_URL (database.url)'] } });
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  }, 90_000);

  it.skipIf(!existsSync(bin) || NATS_SERVER_MISSING !== undefined)('takes NATS_USER / NATS_PASSWORD to an authenticated bus; a wrong password exits with TP_ERR_BUS_AUTH', async () => {
    const port = await freePort();
    const store = mkdtempSync(join(tmpdir(), 'tp-exec-auth-'));
    const server = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', store, '--user', 'exec', '--pass', 'bus-pass-1'], { stdio: 'ignore' });
    try {
      await waitFor(() => tcpReachable('127.0.0.1', port), 10_000, 'nats-server');
      const args = ['--paper', '--bus-servers', `nats://127.0.0.1:${port}`, '--stream-max-bytes-scale', String(TEST_STREAM_MAX_BYTES_SCALE), '--rpc-endpoints', endpoints.rpc];
      const wrong = await refusal(args, { ...process.env, LOG_LEVEL: 'warn', NATS_USER: 'exec', NATS_PASSWORD: 'wrong-pass-7' });
      expect(wrong.code).not.toBe(0);
      expect(wrong.stderr).toContain('TP_ERR_BUS_AUTH');
      expect(wrong.stderr).not.toContain('wrong-pass-7');
      const child = spawn(process.execPath, [bin, 'executor', '--port', '0', '--data-dir', 'memory', '--subject-prefix', prefix, ...args], {
        env: { ...process.env, LOG_LEVEL: 'warn', NATS_USER: 'exec', NATS_PASSWORD: 'bus-pass-1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (c) => (stderr += String(c)));
      child.stdout.resume();
      const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
      try {
        await waitFor(() => /\/stats\n/.test(stderr) || child.exitCode !== null, 60_000, 'executor started');
        const http = /probes, metrics\s+(http:\/\/\S+)\/health/.exec(stderr)?.[1];
        expect(http, stderr).toBeDefined();
        const ready = (await (await fetch(`${http!}/ready`)).json()) as { bus: boolean };
        expect(ready.bus).toBe(true);
        child.kill('SIGTERM');
        expect(await exited).toBe(0);
      } finally {
        child.kill('SIGKILL');
      }
    } finally {
      server.kill('SIGKILL');
      rmSync(store, { recursive: true, force: true });
    }
  }, 120_000);
});
