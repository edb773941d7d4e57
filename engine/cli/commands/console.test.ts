import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';

import { eventually, startEngineUnderSim, type EngineUnderSim } from '../../app/testing.js';

const bin = resolve(import.meta.dirname, '../../../dist/engine/cli/main.js');

interface State {
  services: { name: string; health: { state: string }; ready: { state: string } | null }[];
  pools: { address: string; dex: string; tokenA: string; tokenB: string; slot: string | null; fresh: boolean }[];
}

/**
 * `tidepool console` on its own, against an engine under the simulator: the services by URL, the
 * pools from the scanner's /config read by JSON-RPC.
 */
describe.skipIf(!existsSync(bin))('tidepool console', () => {
  let e: EngineUnderSim;

  beforeAll(async () => {
    e = await startEngineUnderSim();
  });
  afterAll(async () => {
    await e?.close();
  });

  it('watches the services it is given and reads the scanner\'s pools by RPC; SIGTERM exits 0', async () => {
    const child = spawn(
      process.execPath,
      [bin, 'console', '--port', '0', '--quote-url', e.endpoints.quote, '--quote-metrics-url', e.endpoints.quoteMetrics, '--scanner-url', e.endpoints.scanner, '--scanner-metrics-url', e.endpoints.scannerMetrics, '--rpc-endpoints', e.simEndpoints.rpc, '--aggregator-url=', '--external-url=', '--rpc-proxy-url=', '--planner-url='],
      { env: { ...process.env, LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += String(c)));
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    // A failed assertion must not leave the console running.
    onTestFinished(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    const url = await eventually(() => /tidepool console is running: (http:\/\/\S+?)\/\s/.exec(stderr)?.[1], 20_000, `console start: ${stderr}`);
    await eventually(() => (stderr.includes('(watching') ? true : undefined), 5_000, 'the whole start line');
    expect(stderr).toContain('(watching quote-service, scanner)');
    const state = await eventually(async () => {
      const s = (await (await fetch(`${url}/api/state`)).json()) as State;
      return s.pools.length > 0 && s.pools.every((p) => p.slot !== null) && s.services.length === 2 && s.services.every((x) => x.ready?.state === 'up') ? s : undefined;
    }, 20_000, 'pools read by RPC');
    expect(state.services.map((s) => [s.name, s.health.state, s.ready?.state])).toEqual([['quote-service', 'up', 'up'], ['scanner', 'up', 'up']]);
    expect(state.pools.map((p) => p.address).sort()).toEqual([...e.engine.scanner.pools].sort());
    for (const p of state.pools) {
      const cached = e.engine.cache.get(p.address)!;
      expect([p.dex, p.tokenA, p.tokenB, p.fresh]).toEqual([cached.dex, cached.tokenA, cached.tokenB, true]);
    }
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('refuses auth on without a secret or key, naming the setting', async () => {
    const child = spawn(process.execPath, [bin, 'console', '--port', '0', '--auth', 'on'], { env: { ...process.env, TIDEPOOL_JWT_SECRET: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += String(c)));
    const code = await new Promise<number | null>((done) => child.once('exit', (c) => done(c)));
    expect(code).toBe(1);
    expect(stderr).toContain('auth.mode');
    expect(stderr).toContain('TP_ERR_CONFIG_INVALID');
  });
});
