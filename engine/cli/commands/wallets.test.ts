import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { generateKeypair, keypairSeed } from '../../chain/index.js';
import { createServerDatabase, type TestDatabase } from '../../state/db/testing.js';
import { balances, fund, startChain } from '../../wallets/testing.js';
import type { CliIo } from '../command.js';
import { runCli } from '../main.js';

/**
 * `tidepool wallets import / create / sync / rebalance` through the real command line: state on
 * the real PostgreSQL, the chain a simulator over JSON-RPC. The library's rules (both directions,
 * crash idempotency, tokens) are tested in engine/wallets/rebalance.test.ts; this is the
 * command a user runs.
 */

const SOL = 1_000_000_000n;

async function cli(argv: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
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
let t: TestDatabase;
let sim: Awaited<ReturnType<typeof startChain>>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tp-wallets-cli-'));
  t = await createServerDatabase();
  sim = await startChain();
});

afterAll(async () => {
  sim?.chain.stop();
  await sim?.rpc.close();
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('tidepool wallets against the simulator', () => {
  it('imports a funded treasure, syncs balances, plans with --dry-run, then tops a worker up for real', async () => {
    const env = { DATABASE_URL: t.url!, RPC_URL: sim.url, TIDEPOOL_WALLET_PASSPHRASE: 'a passphrase long enough', LOG_LEVEL: 'silent' };
    expect((await cli(['migrate', 'up'], env)).code).toBe(0);

    const treasureKey = generateKeypair();
    const keypairFile = join(dir, 'treasure.json');
    writeFileSync(keypairFile, JSON.stringify([...keypairSeed(treasureKey), ...treasureKey.publicKey]));
    await fund(sim.chain, treasureKey.address, 10n * SOL, 0n);
    const imported = await cli(['wallets', 'import', '--tier', 'treasure', '--keypair', keypairFile, '--json'], env);
    expect(imported.code).toBe(0);
    expect(JSON.parse(imported.stdout)[0]).toMatchObject({ tier: 'treasure', address: treasureKey.address });

    const created = await cli(['wallets', 'create', '--tier', 'worker', '--expected', 'SOL=2000000000', '--json'], env);
    expect(created.code).toBe(0);
    const worker = (JSON.parse(created.stdout) as { address: string }[])[0]!.address;

    const synced = await cli(['wallets', 'sync', '--json'], env);
    expect(synced.code).toBe(0);
    const byAddress = new Map((JSON.parse(synced.stdout) as { address: string; actualBalance: Record<string, string> }[]).map((w) => [w.address, w]));
    expect(byAddress.get(treasureKey.address)?.actualBalance.SOL).toBe((10n * SOL).toString());
    expect(byAddress.get(worker)?.actualBalance.SOL ?? '0').toBe('0');

    const dry = await cli(['wallets', 'rebalance', '--dry-run', '--json'], env);
    expect(dry.code).toBe(0);
    const plan = JSON.parse(dry.stdout) as { dryRun: boolean; transfers: { reason: string; token: string; amount: string; to: string }[]; executed: unknown[] };
    expect(plan).toMatchObject({ dryRun: true, executed: [] });
    expect(plan.transfers).toEqual([expect.objectContaining({ reason: 'top_up', token: 'SOL', amount: (2n * SOL).toString(), to: worker })]);
    expect(balances(sim.chain, worker).sol).toBe(0n);

    const run = await cli(['wallets', 'rebalance', '--json'], env);
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as { executed: { status: string }[] }).executed.map((e) => e.status)).toEqual(['confirmed']);
    expect(balances(sim.chain, worker).sol).toBe(2n * SOL);
    const rows = await t.db.query<{ n: bigint }>('SELECT count(*) AS n FROM wallet_transactions');
    expect(rows[0]!.n).toBe(2n);

    // Balanced now: a second run moves nothing.
    const again = await cli(['wallets', 'rebalance', '--json'], env);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ transfers: [], executed: [] });
    // No command printed a key.
    for (const r of [imported, created, synced, dry, run, again]) expect(r.stdout + r.stderr).not.toMatch(/scrypt|v1\$|privateKey|encrypted/i);
  });
});
