import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { manualSimulator } from '../../quote/testing.js';
import type { SimEndpoints, Simulator } from '../../sim/simulator.js';

const bin = resolve(import.meta.dirname, '../../../dist/engine/cli/main.js');
const SECRETS = ['hunter2pw', 'K3YK3Y'];

/** The simulator's RPC URL with a user, a password and an api-key parameter added. */
function withCredentials(rpc: string): string {
  const u = new URL(rpc);
  return `http://operator:hunter2pw@${u.host}/?api-key=K3YK3Y`;
}

/**
 * Issue 11, item 4, as a process: `RPC_ENDPOINTS=http://user:pass@host` must not show its password
 * (nor its api-key) in the start-up log, GET :8081/config, /stats, or a configuration error.
 */
describe.skipIf(!existsSync(bin))('tidepool engine with credentials in RPC_ENDPOINTS', () => {
  let sim: Simulator;
  let endpoints: SimEndpoints;

  beforeAll(async () => {
    sim = manualSimulator(23);
    endpoints = await sim.start();
    sim.chain.advanceSlot(1);
  });

  afterAll(async () => {
    await sim.close();
  });

  it('masks them in the start-up log, /config and /stats', async () => {
    const at = endpoints.stream.lastIndexOf(':');
    const child = spawn(process.execPath, [bin, 'engine', '--port', '0', '--metrics-port', '0', '--grpc-port', '0', '--health-port', '0', '--scanner-metrics-port', '0', '--parse-workers', '1'], {
      env: {
        ...process.env,
        LOG_LEVEL: 'info',
        BLOCKSTREAM_HOST: endpoints.stream.slice(0, at),
        BLOCKSTREAM_PORT: endpoints.stream.slice(at + 1),
        RPC_ENDPOINTS: withCredentials(endpoints.rpc),
        MONITORED_POOLS: sim.chain.pools()[0]!.address,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += String(c)));
    child.stderr.on('data', (c) => (stderr += String(c)));
    const exited = new Promise<number | null>((done) => child.once('exit', done));
    try {
      // The log (stdout) and the banner (stderr) come through two pipes: wait for both.
      const banner = /scanner\s+(http:\/\/\S+)\/health/;
      for (const deadline = Date.now() + 30_000; !stdout.includes('"engine started"') || !banner.test(stderr); ) {
        if (Date.now() > deadline) throw new Error(`engine never started: ${stderr}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      const scanner = banner.exec(stderr)![1]!;
      const config = await (await fetch(`${scanner}/config`)).text();
      const stats = await (await fetch(`${scanner}/stats`)).text();
      expect(config).toContain('http://operator:***@127.0.0.1:');
      for (const [what, text] of Object.entries({ log: stdout, banner: stderr, config, stats })) {
        for (const secret of SECRETS) expect(text, `${what}: ${secret}`).not.toContain(secret);
      }
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });

  it('masks them in a configuration error', async () => {
    const child = spawn(process.execPath, [bin, 'engine', '--rpc-endpoints', 'http://operator:hunter2pw@h:1/?api-key=K3YK3Y,ftp://operator:hunter2pw@h'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => (out += String(c)));
    child.stderr.on('data', (c) => (out += String(c)));
    const code = await new Promise<number | null>((done) => child.once('exit', done));
    expect(code).toBe(1);
    expect(out).toContain('rpc.endpoints');
    for (const secret of SECRETS) expect(out, secret).not.toContain(secret);
  });
});
