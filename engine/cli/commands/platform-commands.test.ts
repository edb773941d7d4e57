import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { base58, generateKeypair, keypairSeed } from '../../chain/index.js';
import { TEST_PG_ADMIN_URL } from '../../state/db/testing.js';
import { startTestServers, type TestServers } from '../../sim/rpc/testing/test-servers.js';
import type { CliIo } from '../command.js';
import { runCli } from '../main.js';

/** tidepool validate-config, migrate and wallets through the real command line, against the real services. */

async function cli(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (c) => (stdout += String(c)));
  err.on('data', (c) => (stderr += String(c)));
  const io: CliIo = { stdout: out, stderr: err, stdin: Readable.from([]), env };
  const code = await runCli(argv, io);
  return { code, stdout, stderr };
}

let dir: string;
let rpc: TestServers;
/** A block engine's getTipAccounts, all validate-config asks of it. */
let blockEngine: Server;
let blockEngineUrl = '';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tp-platform-cli-'));
  rpc = await startTestServers();
  blockEngine = createServer((req, res) => {
    res.writeHead(req.method === 'POST' && req.url === '/api/v1/bundles' ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: ['96gYZGLnJYVFmbjzopPSU6QiEV5fGqZNyN9nmNhvrZU5'] }));
  });
  await new Promise<void>((resolve) => blockEngine.listen(0, '127.0.0.1', resolve));
  blockEngineUrl = `http://127.0.0.1:${(blockEngine.address() as AddressInfo).port}`;
});

afterAll(async () => {
  blockEngine?.close();
  await rpc?.close();
  rmSync(dir, { recursive: true, force: true });
});

function mismatchedSecret(): string {
  for (;;) {
    const a = generateKeypair();
    const b = generateKeypair();
    const text = base58.encode(new Uint8Array([...keypairSeed(a), ...b.publicKey]));
    if (text.length === 88) return text;
  }
}

describe('tidepool validate-config', () => {
  it('--generate writes a complete config (mode 0600) that is valid, and reaches every service with its latency', async () => {
    const file = join(dir, 'generated.json');
    const gen = await cli(['validate-config', file, '--generate', '--offline']);
    expect(gen.stderr).toMatch(/generated rpcEndpoints, rpcTimeout, .*treasureWallet, workerWallets, blockEngineUuid \(mode 0600\)/);
    expect(gen.code).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const config = JSON.parse(readFileSync(file, 'utf8'));
    expect(config.workerWallets).toHaveLength(5);
    expect(gen.stdout).not.toContain(config.treasureWallet);
    expect(gen.stdout.match(/^key ok /gm)).toHaveLength(6);

    // Point it at the services of this machine and the test RPC server.
    config.rpcEndpoints = [rpc.httpUrl, rpc.httpUrl, rpc.httpUrl];
    config.databaseUrl = TEST_PG_ADMIN_URL;
    config.blockEngineUrl = blockEngineUrl;
    writeFileSync(file, JSON.stringify(config));
    const online = await cli(['validate-config', file]);
    expect(online.stdout).toMatch(/reached {2}block-engine http:\/\/127\.0\.0\.1:\d+\/ in \d+\.\d ms/);
    expect(online.stdout).toMatch(/reached {2}rpc http:\/\/127\.0\.0\.1:\d+\/ in \d+\.\d ms/);
    expect(online.stdout).toMatch(/reached {2}redis redis:\/\/127\.0\.0\.1:6379 in \d+\.\d ms/);
    expect(online.stdout).toMatch(/reached {2}postgres postgres:\/\/postgres@127\.0\.0\.1:5432\/postgres in \d+\.\d ms/);
    expect(online.stdout).toMatch(/reached {2}nats nats:\/\/127\.0\.0\.1:4222 in \d+\.\d ms/);
    expect(online.stdout).toContain('configuration valid');
    expect(online.code).toBe(0);

    // --generate on a complete file changes nothing.
    const again = await cli(['validate-config', file, '--generate', '--offline']);
    expect(again.stderr).toContain('nothing missing');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(config);
  });

  it('reports every violation at once with its path, and a key whose halves do not match; exit 1', async () => {
    const file = join(dir, 'invalid.json');
    const base = JSON.parse(readFileSync(join(dir, 'generated.json'), 'utf8'));
    const { databaseUrl: _omitted, ...rest } = base;
    writeFileSync(
      file,
      JSON.stringify({
        ...rest,
        rpcEndpoints: ['http://127.0.0.1:8899', 'not a url'],
        rpcTimeout: 100,
        workerWallets: [...base.workerWallets.slice(0, 4), 'short'],
        treasureWallet: mismatchedSecret(),
        maxConcurrentTrades: 51,
        minProfitThreshold: 0,
        blockEngineUuid: 'not-a-uuid',
        tipBase: 1.5,
        surprise: true,
      }),
    );
    const r = await cli(['validate-config', file, '--offline']);
    expect(r.code).toBe(1);
    for (const line of [
      'invalid  /blockEngineUuid: must be a valid uuid',
      'invalid  /databaseUrl: is required',
      'invalid  /maxConcurrentTrades: must be <= 50',
      'invalid  /minProfitThreshold: must be > 0',
      'invalid  /rpcEndpoints: must NOT have fewer than 3 items',
      'invalid  /rpcEndpoints/1: must be a valid uri',
      'invalid  /rpcTimeout: must be >= 5000',
      'invalid  /surprise: is not a known setting',
      'invalid  /tipBase: must be integer',
      'invalid  /workerWallets/4: must NOT have fewer than 88 characters',
    ]) {
      expect(r.stdout).toContain(line);
    }
    expect(r.stdout).toMatch(/invalid {2}\/treasureWallet: \/treasureWallet: its public half \(\w+\) is not the key its secret derives \(\w+\)/);
    expect(r.stdout).toContain('configuration invalid');
  });

  it('a dependency that is down is its exact failure; exit 2', async () => {
    const file = join(dir, 'unreachable.json');
    const config = JSON.parse(readFileSync(join(dir, 'generated.json'), 'utf8'));
    writeFileSync(file, JSON.stringify({ ...config, redisUrl: 'redis://127.0.0.1:1', databaseUrl: 'postgres://postgres@127.0.0.1:1/x', natsUrl: 'nats://127.0.0.1:1' }));
    const r = await cli(['validate-config', file]);
    expect(r.stdout).toMatch(/FAILED {3}redis redis:\/\/127\.0\.0\.1:1: .*ECONNREFUSED/);
    expect(r.stdout).toMatch(/FAILED {3}postgres postgres:\/\/postgres@127\.0\.0\.1:1\/x: .*ECONNREFUSED/);
    expect(r.stdout).toMatch(/FAILED {3}nats nats:\/\/127\.0\.0\.1:1: /);
    expect(r.stdout).toMatch(/reached {2}rpc /);
    expect(r.code).toBe(2);
  });

  it('a file that is not JSON is invalid, not a crash', async () => {
    const file = join(dir, 'broken.json');
    writeFileSync(file, '{"rpcEndpoints": [');
    const r = await cli(['validate-config', file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^invalid {2}\/: not JSON: /m);
  });
});

describe('tidepool migrate and wallets on the embedded database', () => {
  it('migrates once, creates and lists wallets without ever printing a key, refuses bad input', async () => {
    const env = { TIDEPOOL_DATA_DIR: join(dir, 'state'), TIDEPOOL_WALLET_PASSPHRASE: 'a passphrase long enough' };
    const up = await cli(['migrate', 'up'], env);
    expect(up.code).toBe(0);
    expect(up.stdout).toContain('applied 8 migration(s)');
    expect((await cli(['migrate', 'up'], env)).stdout).toContain('up to date');
    const status = await cli(['migrate', 'status'], env);
    expect(status.stdout).toMatch(/001 platform_tables +plain +applied/);

    const created = await cli(['wallets', 'create', '--tier', 'worker', '--count', '2', '--expected', 'SOL=2000000000'], env);
    expect(created.code).toBe(0);
    const list = await cli(['wallets', 'list', '--json'], env);
    const wallets = JSON.parse(list.stdout);
    expect(wallets).toHaveLength(2);
    expect(wallets[0]).toMatchObject({ tier: 'worker', expectedBalance: { SOL: '2000000000' } });
    expect(list.stdout).not.toMatch(/scrypt|privateKey|encrypted/i);

    expect((await cli(['wallets', 'create', '--tier', 'worker'], { TIDEPOOL_DATA_DIR: env.TIDEPOOL_DATA_DIR })).stderr).toMatch(
      /no wallet passphrase: set TIDEPOOL_WALLET_PASSPHRASE.*\[TP_ERR_WALLET_PASSPHRASE\]/,
    );
    expect((await cli(['wallets', 'create', '--tier', 'worker', '--expected', 'SOL=-1'], env)).code).toBe(2);
    const bad = join(dir, 'bad-keypair.json');
    writeFileSync(bad, '{"not": "an array"}');
    const imported = await cli(['wallets', 'import', '--tier', 'proxy', '--keypair', bad], env);
    expect(imported.code).toBe(1);
    expect(imported.stderr).toContain('must hold a JSON array of 64 numbers [TP_ERR_WALLET_KEY_FORMAT]');
    expect(JSON.parse((await cli(['wallets', 'list', '--json'], env)).stdout)).toHaveLength(2);
  });

  it('a database that is down is a clear error', async () => {
    const r = await cli(['migrate', 'up', '--database-url', 'postgres://postgres@127.0.0.1:1/x']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/database postgres:\/\/postgres@127\.0\.0\.1:1\/x unavailable: connect ECONNREFUSED .*\[TP_ERR_DB_UNAVAILABLE\]/);
  });
});
