/**
 * validate-config's checks of a real deployment's endpoints, against real servers: NATS with a
 * user and password and over TLS (private nats-servers; the certificate made by openssl), the
 * simulator's block engine, its Jupiter-shaped GET /quote and its ShredStream gRPC port; each
 * failure is the exact one, and no secret is printed.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { NATS_SERVER_MISSING, freePort } from '../bus/testing/cluster.js';
import { deadPort, tcpReachable, waitFor } from '../bus/testing/local-nats.js';
import { startSimulator } from '../executor/testing/submitter-sim.js';
import type { SimEndpoints, Simulator } from '../sim/simulator.js';
import { checkBlockEngine, checkExternalQuote, checkNats, checkShredstream } from './connection-checks.js';
import { maskedReport, validateConfig } from './validate-config.js';

const OPENSSL = spawnSync('openssl', ['version']).status === 0;
const dir = mkdtempSync(join(tmpdir(), 'tp-validate-'));
const children: ChildProcess[] = [];
let sim: Simulator;
let endpoints: SimEndpoints;

async function natsServer(args: string[]): Promise<string> {
  const port = await freePort();
  const child = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', mkdtempSync(join(dir, 'js-')), ...args], { stdio: 'ignore' });
  children.push(child);
  await waitFor(() => tcpReachable('127.0.0.1', port), 10_000, 'nats-server');
  return `nats://127.0.0.1:${port}`;
}

beforeAll(async () => {
  ({ sim, endpoints } = await startSimulator(50));
});

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(NATS_SERVER_MISSING !== undefined)('checkNats with credentials', () => {
  it('reaches JetStream with the right user and password; a wrong one is TP_ERR_BUS_AUTH without the password', async () => {
    const url = await natsServer(['--user', 'ops', '--pass', 'ops-pass-1']);
    expect(await checkNats(url, { user: 'ops', password: 'ops-pass-1' }, 3000)).toMatchObject({ name: 'nats', ok: true });
    const wrong = await checkNats(url, { user: 'ops', password: 'bad-pass-2' }, 3000);
    expect(wrong.ok).toBe(false);
    expect(wrong.error).toContain('TP_ERR_BUS_AUTH');
    expect(wrong.error).not.toContain('bad-pass-2');
    const none = await checkNats(url, {}, 3000);
    expect(none.error).toContain('TP_ERR_BUS_AUTH');
  });

  it.skipIf(!OPENSSL)('reaches a TLS bus with its CA; without it the failure names TLS', async () => {
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    expect(spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' }).status).toBe(0);
    const url = await natsServer(['--tls', '--tlscert', cert, '--tlskey', key]);
    expect(await checkNats(url, { tls: { caFile: cert } }, 3000)).toMatchObject({ ok: true });
    const untrusted = await checkNats(url.replace('nats://', 'tls://'), {}, 3000);
    expect(untrusted.ok).toBe(false);
    expect(untrusted.error).toMatch(/TP_ERR_BUS_AUTH: TLS/);
  });
});

describe('the endpoints of a real deployment', () => {
  it("reaches the simulator's block engine (getTipAccounts), its GET /quote and its ShredStream gRPC port", async () => {
    expect(await checkBlockEngine(endpoints.http, undefined, 3000)).toMatchObject({ name: 'block-engine', ok: true });
    expect(await checkExternalQuote(`${endpoints.http}/quote`, undefined, 3000)).toMatchObject({ name: 'external-quote', ok: true });
    expect(await checkShredstream(endpoints.stream, 3000)).toMatchObject({ name: 'shredstream', ok: true });
  });

  it('reports each one that is down with its failure', async () => {
    const port = await deadPort();
    const be = await checkBlockEngine(`http://127.0.0.1:${port}`, undefined, 2000);
    expect(be.ok).toBe(false);
    const quote = await checkExternalQuote(`http://127.0.0.1:${port}/quote?api-key=k3y`, 'hdr-secret', 2000);
    expect(quote.ok).toBe(false);
    const shred = await checkShredstream(`127.0.0.1:${port}`, 500);
    expect(shred.ok).toBe(false);
    expect(JSON.stringify(quote)).not.toMatch(/k3y|hdr-secret/);
    // An HTTP server that is not a quote API is not taken for one.
    expect((await checkExternalQuote(`${endpoints.http}/not-a-quote`, undefined, 2000)).ok).toBe(false);
  });

  it('validateConfig checks them all, and its masked report prints no API key', async () => {
    const report = await validateConfig(
      {
        natsUrl: 'nats://127.0.0.1:4222',
        blockEngineUrl: endpoints.http,
        externalQuoteUrl: `${endpoints.http}/quote?api-key=s3cret-key`,
        shredstreamUrl: endpoints.stream,
      },
      { timeoutMs: 3000 },
    );
    const byName = Object.fromEntries(report.connections.map((c) => [c.name, c]));
    expect(byName['block-engine']).toMatchObject({ ok: true });
    expect(byName['external-quote']).toMatchObject({ ok: true });
    expect(byName['shredstream']).toMatchObject({ ok: true });
    expect(byName['nats']).toMatchObject({ ok: true });
    expect(JSON.stringify(maskedReport(report))).not.toContain('s3cret-key');
  });
});
