import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { manualSimulator } from '../../quote/testing.js';
import { USDC_MINT, WSOL_MINT } from '../../sim/known-accounts.js';
import type { SimEndpoints, Simulator } from '../../sim/simulator.js';

const bin = resolve(import.meta.dirname, '../../../dist/engine/cli/main.js');

/** `tidepool engine` pointed by its environment at a chain it did not start (here, a simulator). */
describe.skipIf(!existsSync(bin))('tidepool engine, as a process, against real endpoints from the environment', () => {
  let sim: Simulator;
  let endpoints: SimEndpoints;

  beforeAll(async () => {
    sim = manualSimulator(17);
    endpoints = await sim.start();
    sim.chain.advanceSlot(1);
  });

  afterAll(async () => {
    await sim.close();
  });

  it('streams, reads and quotes from BLOCKSTREAM_HOST/PORT, RPC_ENDPOINTS and MONITORED_POOLS, and exits 0 on SIGTERM', async () => {
    const at = endpoints.stream.lastIndexOf(':');
    const pools = sim.chain.poolsForPair(WSOL_MINT, USDC_MINT).map((p) => p.address);
    const child = spawn(process.execPath, [bin, 'engine', '--port', '0', '--metrics-port', '0', '--grpc-port', '0', '--health-port', '0', '--scanner-metrics-port', '0', '--parse-workers', '1'], {
      env: {
        ...process.env,
        LOG_LEVEL: 'warn',
        BLOCKSTREAM_HOST: endpoints.stream.slice(0, at),
        BLOCKSTREAM_PORT: endpoints.stream.slice(at + 1),
        RPC_ENDPOINTS: endpoints.rpc,
        MONITORED_POOLS: pools.join(','),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += String(c)));
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    const deadline = Date.now() + 30_000;
    while (!/scanner\s+http:\/\/\S+\/health/.test(stderr)) {
      if (Date.now() > deadline) throw new Error(`no endpoints printed: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const quoteBase = /quotes\s+(http:\/\/\S+)\/quote/.exec(stderr)![1]!;
    expect(stderr).toMatch(/local quotes\s+grpc:\/\/127\.0\.0\.1:[1-9][0-9]*\s/);
    const scanner = /scanner\s+(http:\/\/\S+)\/health/.exec(stderr)![1]!;
    const res = await fetch(`${quoteBase}/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=1000000000`);
    expect(res.status).toBe(200);
    const quote = (await res.json()) as { pool: string; source: string };
    expect(pools).toContain(quote.pool);
    expect(quote.source).toBe('cache');
    const config = (await (await fetch(`${scanner}/config`)).json()) as Record<string, unknown>;
    expect(config['pools.monitored']).toEqual(pools);
    expect(config['rpc.endpoints']).toEqual([endpoints.rpc]);
    let health = { connected: false };
    while (!health.connected && Date.now() < deadline) {
      health = (await (await fetch(`${scanner}/health`)).json()) as { connected: boolean };
      if (!health.connected) await new Promise((r) => setTimeout(r, 50));
    }
    expect(health.connected).toBe(true);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('refuses to start without monitored pools, naming the pools file', async () => {
    const child = spawn(process.execPath, [bin, 'engine', '--pools-file', '/nonexistent/pools.json'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MONITORED_POOLS: '' } });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += String(c)));
    const code = await new Promise<number | null>((done) => child.once('exit', done));
    expect(code).toBe(1);
    expect(stderr).toContain('pools.file /nonexistent/pools.json');
  });
});
