import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { describe, expect, it } from 'vitest';

/**
 * Issue 11, item 5: `npm start` must not orphan the engine. A supervisor signals npm (or the
 * shell, or node); whichever it is, the engine drains, exits and frees its ports. Every port is 0
 * (other tests run beside this one); the printed endpoints say which were bound.
 */
const root = resolve(import.meta.dirname, '../../..');
const bin = join(root, 'dist/engine/cli/main.js');
const PORTS_0 = ['--port', '0', '--metrics-port', '0', '--grpc-port', '0', '--health-port', '0', '--scanner-metrics-port', '0', '--sim-rpc-port', '0', '--sim-ws-port', '0', '--sim-stream-port', '0', '--sim-geyser-port', '0', '--sim-http-port', '0',
  '--aggregator-grpc-port', '0', '--aggregator-http-port', '0', '--external-grpc-port', '0', '--external-metrics-port', '0', '--executor-port', '0'];

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((done) => {
    const s = connect({ port, host: '127.0.0.1' }, () => {
      s.destroy();
      done(true);
    });
    s.once('error', () => done(false));
  });
}

async function until(what: string, probe: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  for (const deadline = Date.now() + ms; !(await probe()); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts `npm start` with every port 0; resolves once the engine prints its endpoints. */
async function npmStart(dataDir: string): Promise<{ npm: ChildProcess; enginePid: number; ports: number[]; output: () => string }> {
  const npm = spawn('npm', ['start', '--silent', '--', ...PORTS_0, '--parse-workers', '1', '--sim-tx-rate', '20'], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'info', PLATFORM_STATE: 'false', TIDEPOOL_DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  npm.stdout!.on('data', (c) => (stdout += String(c)));
  npm.stderr!.on('data', (c) => (stderr += String(c)));
  await until(`the engine's endpoints (${stderr})`, () => stderr.includes('Try (1 wrapped SOL to USDC)') && stdout.includes('"tidepool started"'), 120_000);
  const started = stdout.split('\n').find((l) => l.includes('"tidepool started"'))!;
  const enginePid = (JSON.parse(started) as { pid: number }).pid;
  const ports = [...stderr.matchAll(/127\.0\.0\.1:(\d+)/g)].map((m) => Number(m[1]));
  return { npm, enginePid, ports: [...new Set(ports)], output: () => stderr };
}

describe.skipIf(!existsSync(bin))('npm start under a supervisor', () => {
  it('drains and exits, freeing every port, when npm gets SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tp-npm-start-'));
    const { npm, enginePid, ports } = await npmStart(dataDir);
    try {
      expect(enginePid).not.toBe(npm.pid);
      expect(ports.length).toBeGreaterThanOrEqual(8);
      for (const p of ports) expect(await portOpen(p), `port ${p} open while running`).toBe(true);
      const npmExited = new Promise((done) => npm.once('exit', done));
      npm.kill('SIGTERM');
      await npmExited;
      await until(`engine pid ${enginePid} to exit`, () => !alive(enginePid), 30_000);
      for (const p of ports) expect(await portOpen(p), `port ${p} closed after exit`).toBe(false);
    } finally {
      if (alive(enginePid)) process.kill(enginePid, 'SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);

  it('drains and exits when npm dies without forwarding anything (SIGKILL): the engine watches its parent', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tp-npm-start-'));
    const { npm, enginePid, ports, output } = await npmStart(dataDir);
    try {
      const npmExited = new Promise((done) => npm.once('exit', done));
      npm.kill('SIGKILL');
      await npmExited;
      await until(`engine pid ${enginePid} to exit`, () => !alive(enginePid), 30_000);
      for (const p of ports) expect(await portOpen(p), `port ${p} closed after exit`).toBe(false);
      expect(output()).toContain('tidepool is running');
    } finally {
      if (alive(enginePid)) process.kill(enginePid, 'SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});
