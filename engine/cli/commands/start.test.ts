import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

import { PgliteClient } from '../../state/db/pglite-client.js';

const bin = resolve(import.meta.dirname, '../../../dist/engine/cli/main.js');
const PORTS_0 = ['--port', '0', '--metrics-port', '0', '--grpc-port', '0', '--health-port', '0', '--scanner-metrics-port', '0', '--sim-rpc-port', '0', '--sim-ws-port', '0', '--sim-stream-port', '0', '--sim-geyser-port', '0', '--sim-http-port', '0',
  '--aggregator-grpc-port', '0', '--aggregator-http-port', '0', '--external-grpc-port', '0', '--external-metrics-port', '0', '--executor-port', '0', '--console-port', '0'];

/** Runs the printed `aggregated-quote` example (another process) and returns its JSON. */
async function runExample(command: string): Promise<{ code: number | null; out: Record<string, unknown> }> {
  const args = command.trim().split(/\s+/).slice(2); // after `node dist/engine/cli/main.js`
  const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c) => (out += String(c)));
  const code = await new Promise<number | null>((done) => child.once('exit', done));
  return { code, out: JSON.parse(out) as Record<string, unknown> };
}

describe('tidepool start (npm start), as a process', () => {
  it.skipIf(!existsSync(bin))('prints its endpoints and an example quote that answers from the cache, and drains on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tp-start-'));
    const child = spawn(process.execPath, [bin, 'start', ...PORTS_0, '--sim-tx-rate', '200', '--parse-workers', '1'], {
      env: { ...process.env, LOG_LEVEL: 'info', TIDEPOOL_DATA_DIR: dataDir, SCANNER_METRICS_INTERVAL: '1s', PLATFORM_DB_DELAY: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (c) => (stderr += String(c)));
    child.stdout.on('data', (c) => (stdout += String(c)));
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    // A failed assertion must not leave the engine running (it would load the box for every test after).
    try {
      const deadline = Date.now() + 30_000;
      while (!/curl -s '(http:\/\/[^']+)'/.test(stderr)) {
        if (Date.now() > deadline) throw new Error(`no example printed: ${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const example = /curl -s '(http:\/\/[^']+)'/.exec(stderr)![1]!;
      expect(stderr).toMatch(/local quotes\s+grpc:\/\/127\.0\.0\.1:[1-9][0-9]*\s/);
      expect(example).toContain('input=So11111111111111111111111111111111111111112');
      expect(example).toContain('output=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v');
      const res = await fetch(example);
      expect(res.status).toBe(200);
      const quote = (await res.json()) as { source: string; outputAmount: string };
      expect(quote.source).toBe('cache');
      expect(BigInt(quote.outputAmount)).toBeGreaterThan(0n);
      const scanner = /scanner\s+(http:\/\/\S+)\/health/.exec(stderr)![1]!;
      const health = (await (await fetch(`${scanner}/health`)).json()) as { connected: boolean };
      expect(health.connected).toBe(true);

      // The aggregator merges the engine's quote (local) with the external service's (the
      // simulator's /quote): the printed gRPC example answers with both sources once both streams hold the pair.
      expect(stderr).toMatch(/external quotes\s+grpc:\/\/127\.0\.0\.1:[1-9][0-9]*\s/);
      const aggregatorExample = /(node dist\/engine\/cli\/main\.js aggregated-quote [^\n]+)/.exec(stderr)![1]!;
      let merged: Record<string, unknown> = {};
      for (let i = 0; i < 100 && merged['sourceClass'] !== 'SOURCE_CLASS_BOTH'; i++) {
        const { code, out } = await runExample(aggregatorExample);
        if (code !== 0) {
          // Until the aggregator's upstream subscriptions have delivered, a call may find no quote
          // in time; that is the only failure allowed here.
          expect((out['error'] as { code: string }).code).toMatch(/^(DEADLINE_EXCEEDED|UNAVAILABLE)$/);
          continue;
        }
        merged = out;
      }
      expect(merged['sourceClass']).toBe('SOURCE_CLASS_BOTH');
      expect((merged['localQuote'] as { provider: string }).provider).toBe('tidepool');
      expect((merged['externalQuote'] as { provider: string }).provider).toBe('simulator');
      expect(merged['decision']).toMatch(/^DECISION_(EXECUTE|VERIFY|CAUTIOUS|SKIP)$/);
      // Paper trading: the arbitrage planner and a paper executor, /stats on its printed port.
      const paperStats = /paper trading\s+(http:\/\/\S+)\/stats/.exec(stderr)![1]!;
      const paper = (await (await fetch(`${paperStats}/stats`)).json()) as { executorId: string; paper: boolean };
      expect(paper).toMatchObject({ executorId: 'start-paper', paper: true });
      const aggregatorHttp = /aggregator http\s+(http:\/\/\S+)\/stats/.exec(stderr)![1]!;
      const stats = (await (await fetch(`${aggregatorHttp}/stats`)).json()) as { aggregations: { both: number } };
      expect(stats.aggregations.both).toBeGreaterThan(0);

      // Platform state: the embedded database opens in the background; the scanner then writes its
      // scanner_metrics rows (and a last one on SIGTERM). Its child runs at nice 10: on a box loaded
      // by other work a new data directory (initdb) has taken over 90 s.
      expect(stderr).toContain(`platform state    embedded PostgreSQL in ${dataDir}/pglite (scanner_metrics every 1 s)`);
      for (const until = Date.now() + 200_000; !stdout.includes('platform state ready'); ) {
        if (Date.now() > until) throw new Error('platform state never ready');
        await new Promise((r) => setTimeout(r, 100));
      }

      // The web console watches the four services, shows the pools of the cache and, once the
      // embedded database is open, reads its tables.
      const consoleUrl = /web console\s+(http:\/\/\S+?)\/\s/.exec(stderr)![1]!;
      expect((await fetch(`${consoleUrl}/`)).status).toBe(200);
      let state = { services: [] as { name: string; health: { state: string }; ready: { state: string } | null }[], pools: [] as unknown[], platform: { database: false } };
      for (const until = Date.now() + 30_000; !state.platform.database; ) {
        if (Date.now() > until) throw new Error('console never read the platform database');
        await new Promise((r) => setTimeout(r, 200));
        state = (await (await fetch(`${consoleUrl}/api/state`)).json()) as typeof state;
      }
      expect(state.services.map((x) => [x.name, x.health.state])).toEqual([['quote-service', 'up'], ['scanner', 'up'], ['external-quotes', 'up'], ['aggregator', 'up'], ['paper-executor', 'up']]);
      // Each one's readiness is probed too (the console showed "no /ready" for services that have one).
      for (const until = Date.now() + 30_000; !state.services.every((x) => x.ready?.state === 'up'); ) {
        if (Date.now() > until) throw new Error(`not every service ready: ${JSON.stringify(state.services.map((x) => [x.name, x.ready]))}`);
        await new Promise((r) => setTimeout(r, 200));
        state = (await (await fetch(`${consoleUrl}/api/state`)).json()) as typeof state;
      }
      expect(state.pools.length).toBeGreaterThan(0);

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    const db = await PgliteClient.open({ dataDir: join(dataDir, 'pglite') });
    try {
      const rows = await db.query<{ n: bigint; events: bigint }>("SELECT count(*) AS n, sum(events_processed)::bigint AS events FROM scanner_metrics WHERE scanner_id = 'scanner'");
      expect(rows[0]!.n).toBeGreaterThan(0n);
    } finally {
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
    // A new embedded database (initdb) takes tens of seconds on a loaded 2-core box.
  }, 300_000);

  it.skipIf(!existsSync(bin))('refuses two servers on one port, naming both settings', async () => {
    const child = spawn(process.execPath, [bin, 'start', '--port', '9999', '--health-port', '9999'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += String(c)));
    const code = await new Promise<number | null>((done) => child.once('exit', done));
    expect(code).toBe(1);
    expect(stderr).toContain('health.port: port 9999 is also port');
  });
});
