import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startPrivateNats, type PrivateNats } from '../../bus/testing/local-nats.js';
import { manualSimulator } from '../../quote/testing.js';
import { USDC_MINT, WSOL_MINT } from '../../sim/known-accounts.js';
import type { SimEndpoints, Simulator } from '../../sim/simulator.js';
import { swapTransaction, trader } from '../../sim/testing/chain-fixtures.js';

const bin = resolve(import.meta.dirname, '../../../dist/engine/cli/main.js');

interface Service {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
}

function run(args: string[], env: Record<string, string>): Service {
  const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c) => (stderr += String(c)));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return { child, stderr: () => stderr, exited };
}

async function printed(s: Service, pattern: RegExp, what: string): Promise<string> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const m = pattern.exec(s.stderr());
    if (m !== null) return m[1]!;
    if (Date.now() > deadline) throw new Error(`${what} not printed: ${s.stderr()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `tidepool scanner` and `tidepool quote-service` as separate processes joined by a private nats-server. */
describe.skipIf(!existsSync(bin))('tidepool scanner and tidepool quote-service, as processes', () => {
  let sim: Simulator;
  let endpoints: SimEndpoints;
  let nats: PrivateNats;

  beforeAll(async () => {
    nats = await startPrivateNats();
    sim = manualSimulator(19);
    endpoints = await sim.start();
    sim.chain.advanceSlot(1);
  });

  afterAll(async () => {
    await sim?.close();
    await nats?.close();
  });

  it('carry a swap from the block stream to a cache quote through NATS, and exit 0 on SIGTERM', async () => {
    const at = endpoints.stream.lastIndexOf(':');
    const pools = sim.chain.poolsForPair(WSOL_MINT, USDC_MINT);
    const scanner = run(['scanner', '--health-port', '0', '--metrics-port', '0', '--parse-workers', '1'], {
      BUS_SERVERS: nats.url,
      BLOCKSTREAM_HOST: endpoints.stream.slice(0, at),
      BLOCKSTREAM_PORT: endpoints.stream.slice(at + 1),
      RPC_ENDPOINTS: endpoints.rpc,
      MONITORED_POOLS: pools.map((p) => p.address).join(','),
    });
    const quote = run(['quote-service', '--port', '0', '--metrics-port', '0', '--grpc-port', '0'], { BUS_SERVERS: nats.url, RPC_ENDPOINTS: endpoints.rpc, RATE_LIMIT_RPS: '100000' });
    try {
      const scannerBase = await printed(scanner, /scanner\s+(http:\/\/\S+)\/health/, 'scanner endpoint');
      const quoteBase = await printed(quote, /quotes\s+(http:\/\/\S+)\/quote/, 'quote endpoint');
      const deadline = Date.now() + 30_000;
      while (!((await (await fetch(`${scannerBase}/health`)).json()) as { connected: boolean }).connected) {
        if (Date.now() > deadline) throw new Error('scanner never connected to the stream');
        await new Promise((r) => setTimeout(r, 50));
      }
      const chain = sim.chain;
      for (const p of pools) chain.sendTransaction(swapTransaction(chain, trader(chain, 4), chain.poolInfo(p.address)!, { aToB: true, exactIn: true, amount: 1_000_000n, threshold: 0n }));
      chain.advanceSlot(1);
      let body: { source?: string; pool?: string } = {};
      while (body.source !== 'cache') {
        if (Date.now() > deadline) throw new Error(`no cache quote: ${JSON.stringify(body)}`);
        const res = await fetch(`${quoteBase}/quote?input=${WSOL_MINT}&output=${USDC_MINT}&amount=1000000000`);
        body = (await res.json()) as typeof body;
        if (body.source !== 'cache') await new Promise((r) => setTimeout(r, 50));
      }
      expect(pools.map((p) => p.address)).toContain(body.pool);
      const health = JSON.stringify(await (await fetch(`${quoteBase}/health`)).json());
      expect(health).toContain('connected');
    } finally {
      scanner.child.kill('SIGTERM');
      quote.child.kill('SIGTERM');
    }
    expect(await scanner.exited).toBe(0);
    expect(await quote.exited).toBe(0);
  });
});
