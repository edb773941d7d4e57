import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const bin = resolve(import.meta.dirname, '../../../dist/engine/cli/main.js');

describe('tidepool sim, as a process', () => {
  it.skipIf(!existsSync(bin))('prints its endpoints, writes its pools file, serves JSON-RPC and quotes, and exits 0 on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tidepool-sim-'));
    const poolsFile = join(dir, 'pools.json');
    const child = spawn(process.execPath, [bin, 'sim', '--seed', '3', '--rpc-port', '0', '--ws-port', '0', '--stream-port', '0', '--geyser-port', '0', '--http-port', '0', '--tx-rate', '100', '--pools-out', poolsFile], {
      env: { ...process.env, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += String(c)));
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    const deadline = Date.now() + 20_000;
    while (!/quote API\s+http:\/\/[^\s]+/.test(stderr)) {
      if (Date.now() > deadline) throw new Error(`no endpoints printed: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const rpc = /Solana JSON-RPC\s+(http:\/\/\S+)/.exec(stderr)![1]!;
    const quote = /quote API\s+(http:\/\/\S+)/.exec(stderr)![1]!;
    expect(stderr).toMatch(/ShredStream gRPC\s+127\.0\.0\.1:\d+/);
    const { pools } = JSON.parse(readFileSync(poolsFile, 'utf8')) as { pools: string[] };
    rmSync(dir, { recursive: true, force: true });
    expect(pools.length).toBeGreaterThan(0);
    for (const p of pools) expect(p).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);

    const slot = (await (
      await fetch(rpc, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getSlot', params: [{ commitment: 'processed' }] }) })
    ).json()) as { result: number };
    expect(slot.result).toBeGreaterThanOrEqual(0);
    const res = await fetch(`${quote}?inputMint=So11111111111111111111111111111111111111112&outputMint=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v&amount=1000000000`);
    expect(res.status).toBe(200);
    expect(BigInt(((await res.json()) as { outAmount: string }).outAmount)).toBeGreaterThan(0n);

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it.skipIf(!existsSync(bin))('refuses an invalid setting at start, naming it', async () => {
    const child = spawn(process.execPath, [bin, 'sim', '--slot-ms', 'fast'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SIM_TX_RATE: '-5' } });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += String(c)));
    const code = await new Promise<number | null>((done) => child.once('exit', done));
    expect(code).toBe(1);
    expect(stderr).toContain('sim.slotMs from flag --slot-ms = "fast"');
    expect(stderr).toContain('sim.txRate from environment variable SIM_TX_RATE = "-5"');
  });
});
